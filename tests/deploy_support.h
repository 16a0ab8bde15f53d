// Helpers of the deploy/ tests (tests/deploy_*_test.cc): processes, YAML read the way
// Kubernetes reads it, the manifests as JSON objects, the Helm chart rendered by the real
// template engine (tests/helm-render: Go's text/template, sprig and Helm's own functions),
// and `kubectl kustomize`.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>
#include <nlohmann/json.hpp>

namespace hcashare::deploy {

using json = nlohmann::json;

// A path in the source tree (HCASHARE_SOURCE_DIR, set by tests/CMakeLists.txt).
std::string Src(const std::string& rel);
// A binary of this build.
std::string Bin(const std::string& name);

// What a process did: exit code (128+signal when killed) and output.
struct RunResult {
  int code = -1;
  std::string out, err;
};

// Runs argv (argv[0] a path, or a name looked up in PATH) with `input` on stdin and
// `env` added to the environment.
RunResult RunProcess(const std::vector<std::string>& argv, const std::string& input = "",
                     const std::map<std::string, std::string>& env = {});

// ---------------------------------------------------------------------------------------
// YAML and objects

// A YAML node as JSON, typed the way Kubernetes and Helm read YAML (YAML 1.1 plain
// scalars: null, booleans including yes/no/on/off, integers, floats; quoted and block
// scalars are strings). Throws std::runtime_error on an unsupported node.
json YamlToJson(const YAML::Node& node);
// Every non-empty document of a YAML stream, as JSON. Throws on a syntax error.
std::vector<json> ParseYamlDocuments(const std::string& text);
// Every document of a YAML file, as JSON; throws when it cannot be read or parsed.
std::vector<json> LoadYamlFile(const std::string& path);

// metadata.name.
std::string Name(const json& o);
// "Kind/namespace/name".
std::string Key(const json& o);
// The first object of that kind (and name, when given); null when none. A pointer into
// `objs`, so never into a temporary (Has() asks whether a rendering holds one).
const json* Find(const std::vector<json>& objs, const std::string& kind,
                 const std::string& name = "");
const json* Find(std::vector<json>&& objs, const std::string& kind,
                 const std::string& name = "") = delete;
// Whether `objs` holds an object of that kind (and name, when given).
bool Has(const std::vector<json>& objs, const std::string& kind, const std::string& name = "");
// The objects by Key().
std::map<std::string, json> ByKey(const std::vector<json>& objs);
// The element of `list` with that "name" (a pointer into `list`, so not a temporary).
const json* Item(const json& list, const std::string& name);
const json* Item(json&& list, const std::string& name) = delete;
// The pod spec of a workload (null when absent).
json PodSpec(json ds);
// "--flag=value" arguments as a map ("--flag" alone maps to "").
std::map<std::string, std::string> ArgMap(const json& args);
// A Kubernetes memory quantity ("64Mi", "1G", 1024) in bytes; throws on a malformed one.
long long QuantityBytes(const json& q);
// The lines of `v`, each indented, for failure messages.
std::string Join(const std::vector<std::string>& v);

// The objects a kustomization's `resources` list (no transformations: the base has none).
std::vector<json> LoadKustomizationSources(const std::string& dir);
// The objects of deploy/k8s/base.
std::vector<json> BaseObjects();
// The objects with Helm's own labels removed and config.json parsed, for comparing a
// Helm rendering with a kustomize one.
std::map<std::string, json> Comparable(const std::vector<json>& objs);
// The config file of the DaemonSet `ds`: its --config argument (into `config_arg`) must
// be the configMap mount plus a key of that ConfigMap in `objs`. Returns the config
// text, or "" after adding a test failure.
std::string ConfigText(const std::vector<json>& objs, const json& ds, std::string* config_arg);

// The Mellanox README / ConfigMap example.
extern const json kMellanoxExample;

// `hcashare validate` on a config text (as config.json).
RunResult ValidateConfig(const std::string& config_text);
// The version `hcashare --version` prints ("" after adding a failure).
std::string ProjectVersion();
// The daemon's option defaults, from its --help ("--opt TEXT=value" or "[value]").
std::map<std::string, std::string> DaemonDefaults();

// ---------------------------------------------------------------------------------------
// Helm

// What `helm template RELEASE CHART_DIR -n NAMESPACE -f overrides` needs.
struct RenderOptions {
  std::string release_name = "hcashare";
  std::string release_namespace = "kube-system";
  json value_overrides = json::object();
  // Also render templates/NOTES.txt (what `helm install` prints), under "NOTES.txt".
  bool notes = false;
};

// Renders the chart in `chart_dir` with tests/helm-render (bin/hcashare-helm-render) and
// returns the output per template file name ("daemonset.yaml"). As Helm does, the values
// (values.yaml with the overrides) are first validated against the chart's
// values.schema.json, when it has one (tests/json_schema_lite.h): values that break it
// throw std::runtime_error naming every error. A template that fails throws too.
std::map<std::string, std::string> RenderChart(const std::string& chart_dir,
                                               const RenderOptions& options);

// The objects of deploy/helm/hcashare rendered with these values (release hcashare in
// kube-system). Throws when the values break values.schema.json, as helm does.
std::vector<json> RenderHelm(const json& overrides = json::object());

// Why the chart renderer was not built ("" when it was): CMake builds it only when it
// finds Go and Debian's sprig and sigs.k8s.io/yaml packages.
std::string HelmRendererMissing();
// HCASHARE_HELM_REQUIRED=1: the chart tests must run (CI sets it).
bool HelmRequired();
// True when the chart renderer was built; otherwise false, after adding a test failure
// when HCASHARE_HELM_REQUIRED=1 (for a test that checks the chart among other things).
bool HelmAvailable();

// ---------------------------------------------------------------------------------------
// kustomize

// `kubectl kustomize DIR`, or nullopt when no kubectl with kustomize v4+ is on PATH.
// Throws when kustomize fails.
std::optional<std::vector<json>> Kustomize(const std::string& dir);
// HCASHARE_KUBECTL_REQUIRED=1: the kustomize checks must run (CI sets it).
bool KubectlRequired();
// Why Kustomize() returns nullopt.
extern const char* const kNoKubectl;

// The sets of objects to check: base, Helm defaults (when the renderer was built), and
// the overlays (when kustomize is available); a missing one is a failure when required.
std::vector<std::pair<std::string, std::vector<json>>> AllRenderings();

}  // namespace hcashare::deploy

// In a test: skips it when `objs` (a Kustomize result) is nullopt, or fails it when
// HCASHARE_KUBECTL_REQUIRED=1.
#define SKIP_WITHOUT_KUSTOMIZE(objs)                                                   \
  if (!(objs)) {                                                                       \
    if (::hcashare::deploy::KubectlRequired()) {                                       \
      FAIL() << "HCASHARE_KUBECTL_REQUIRED=1, but " << ::hcashare::deploy::kNoKubectl; \
    }                                                                                  \
    GTEST_SKIP() << ::hcashare::deploy::kNoKubectl << " (HCASHARE_KUBECTL_REQUIRED=1 " \
                 << "makes this a failure)";                                           \
  }

// In a test: skips the rest of it when the chart renderer was not built, or fails it when
// HCASHARE_HELM_REQUIRED=1.
#define SKIP_WITHOUT_HELM()                                                                        \
  if (const std::string missing_ = ::hcashare::deploy::HelmRendererMissing(); !missing_.empty()) { \
    if (::hcashare::deploy::HelmRequired()) {                                                      \
      FAIL() << "HCASHARE_HELM_REQUIRED=1, but " << missing_;                                      \
    }                                                                                              \
    GTEST_SKIP() << missing_ << " (HCASHARE_HELM_REQUIRED=1 makes this a failure)";                \
  }
