// A small renderer for the Helm chart under deploy/helm, for tests: Debian 12 has no helm
// package, so tests/deploy_manifest_test.cc renders the chart with this instead.
//
// It implements the part of Go's text/template and Helm's functions that the chart uses:
// actions with "{{-" / "-}}" trimming, comments, variables, if / else if / else, with,
// range (lists and maps, with "$i, $v :="), define / include, parenthesised pipelines,
// and the functions listed in deploy_helm_render.cc. Anything else is an error rather
// than a guess, so a chart that uses more fails the tests instead of rendering wrongly.
// Values follow Helm's merge rules (maps merge, anything else replaces, null deletes).
// Known differences from Helm: a missing value printed by an action is an error here
// (Helm prints ""), and so is a number of 1e6 or more (Go prints it as "1e+06").
#pragma once

#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>
#include <nlohmann/json.hpp>

namespace hcashare::deploy {

using json = nlohmann::json;

// A YAML node as JSON, typed the way Kubernetes and Helm read YAML (YAML 1.1 plain
// scalars: null, booleans including yes/no/on/off, integers, floats; quoted and block
// scalars are strings). Throws std::runtime_error on an unsupported node.
json YamlToJson(const YAML::Node& node);

// Every non-empty document of a YAML stream, as JSON. Throws on a syntax error.
std::vector<json> ParseYamlDocuments(const std::string& text);

// `overrides` deep-merged into `base`, the way Helm merges --set / -f values.
json MergeValues(json base, const json& overrides);

struct TemplateSetImpl;

// A set of parsed templates that can be executed by name.
class TemplateSet {
 public:
  TemplateSet();
  // Parses `text` as the template file `name`; its {{ define }}s become available to
  // include. Throws std::runtime_error on a syntax error.
  void Add(const std::string& name, const std::string& text);
  // Executes the template (a file added, or a define) `name` with `dot` as ".".
  std::string Execute(const std::string& name, const json& dot) const;

  // A parsed template node (defined in the .cc file).
  struct Node;

 private:
  std::shared_ptr<TemplateSetImpl> impl_;
};

// What `helm template RELEASE CHART_DIR -n NAMESPACE -f overrides` needs.
struct RenderOptions {
  std::string release_name = "hcashare";
  std::string release_namespace = "kube-system";
  json value_overrides = json::object();
  // Also render templates/NOTES.txt (what `helm install` prints), under "NOTES.txt".
  bool notes = false;
};

// Renders every templates/*.yaml of the chart in `chart_dir` (not _*.tpl, and NOTES.txt
// only when asked) and returns the output per file name. As Helm does, the merged values
// are first validated against the chart's values.schema.json, when it has one
// (tests/json_schema_lite.h): a value that breaks it throws std::runtime_error naming
// every error.
std::map<std::string, std::string> RenderChart(const std::string& chart_dir,
                                               const RenderOptions& options);

}  // namespace hcashare::deploy
