// Helpers of the deploy/ tests (tests/deploy_manifest_test.cc, tests/deploy_chart_test.cc):
// processes, the manifests as JSON objects, the Helm chart rendered by
// tests/deploy_helm_render.cc, and `kubectl kustomize`.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/deploy_helm_render.h"

namespace hcashare::deploy {

// A path in the source tree (HCASHARE_SOURCE_DIR, set by tests/CMakeLists.txt).
std::string Src(const std::string& rel);
// A binary of this build.
std::string Bin(const std::string& name);

struct RunResult {
  int code = -1;
  std::string out, err;
};

// Runs argv (argv[0] a path, or a name looked up in PATH) with `input` on stdin and
// `env` added to the environment.
RunResult RunProcess(const std::vector<std::string>& argv, const std::string& input = "",
                     const std::map<std::string, std::string>& env = {});

// Every document of a YAML file, as JSON; throws when it cannot be read or parsed.
std::vector<json> LoadYamlFile(const std::string& path);

std::string Name(const json& o);
// "Kind/namespace/name".
std::string Key(const json& o);
// The first object of that kind (and name, when given); null when none.
const json* Find(const std::vector<json>& objs, const std::string& kind,
                 const std::string& name = "");
std::map<std::string, json> ByKey(const std::vector<json>& objs);
// The element of `list` with that "name" (a pointer into `list`, so not a temporary).
const json* Item(const json& list, const std::string& name);
const json* Item(json&& list, const std::string& name) = delete;
// The pod spec of a workload (null when absent).
json PodSpec(json ds);
// "--flag=value" arguments as a map ("--flag" alone maps to "").
std::map<std::string, std::string> ArgMap(const json& args);
// The lines of `v`, each indented, for failure messages.
std::string Join(const std::vector<std::string>& v);

// The objects of deploy/helm/hcashare rendered with these values (release hcashare in
// kube-system). Throws when the values break values.schema.json, as helm does.
std::vector<json> RenderHelm(const json& overrides = json::object());

// `kubectl kustomize DIR`, or nullopt when no kubectl with kustomize v4+ is on PATH.
// Throws when kustomize fails.
std::optional<std::vector<json>> Kustomize(const std::string& dir);
// HCASHARE_KUBECTL_REQUIRED=1: the kustomize checks must run (CI sets it).
bool KubectlRequired();
extern const char* const kNoKubectl;

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
