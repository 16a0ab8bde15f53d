#include "tests/deploy_support.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <stdexcept>

#include "common/temp_dir.h"
#include "tests/json_schema_lite.h"
#include "tests/test_util.h"

#ifndef HCASHARE_SOURCE_DIR
#error "HCASHARE_SOURCE_DIR must be defined (tests/CMakeLists.txt)"
#endif
#ifndef HCASHARE_HELM_RENDER_MISSING
#error "HCASHARE_HELM_RENDER_MISSING must be defined (tests/CMakeLists.txt)"
#endif

namespace hcashare::deploy {

namespace fs = std::filesystem;
using hcashare::testing::BinDir;
using hcashare::testing::ReadTextFile;

const char* const kNoKubectl =
    "no kubectl with kustomize v4+ on PATH (Debian 12's kubernetes-client 1.20 bundles "
    "kustomize v2)";

std::string Src(const std::string& rel) { return std::string(HCASHARE_SOURCE_DIR) + "/" + rel; }

std::string Bin(const std::string& name) { return BinDir() + "/" + name; }

RunResult RunProcess(const std::vector<std::string>& argv, const std::string& input,
                     const std::map<std::string, std::string>& env) {
  TempDir tmp("deploy-run-");
  const std::string in_path = tmp.path() + "/in", out_path = tmp.path() + "/out",
                    err_path = tmp.path() + "/err";
  std::ofstream(in_path) << input;
  const pid_t pid = fork();
  if (pid == 0) {
    const int in = open(in_path.c_str(), O_RDONLY);
    const int out = open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    const int err = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (in < 0 || out < 0 || err < 0) _exit(126);
    dup2(in, 0);
    dup2(out, 1);
    dup2(err, 2);
    for (const auto& [k, v] : env) setenv(k.c_str(), v.c_str(), 1);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execvp(args[0], args.data());
    _exit(127);
  }
  RunResult r;
  int status = 0;
  if (pid > 0 && waitpid(pid, &status, 0) == pid) {
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
  r.out = ReadTextFile(out_path);
  r.err = ReadTextFile(err_path);
  return r;
}

// ---------------------------------------------------------------------------------------
// YAML

namespace {

[[noreturn]] void Fail(const std::string& message) { throw std::runtime_error(message); }

json PlainScalar(const std::string& s) {
  static const std::set<std::string> kNull = {"", "~", "null", "Null", "NULL"};
  static const std::set<std::string> kTrue = {"true", "True", "TRUE", "yes", "Yes", "YES",
                                              "on",   "On",   "ON",   "y",   "Y"};
  static const std::set<std::string> kFalse = {"false", "False", "FALSE", "no", "No", "NO",
                                               "off",   "Off",   "OFF",   "n",  "N"};
  static const std::regex kDecimal("[-+]?(0|[1-9][0-9]*)");
  static const std::regex kOctal("[-+]?0[0-7]+");
  static const std::regex kHex("[-+]?0x[0-9a-fA-F]+");
  static const std::regex kFloat(
      "[-+]?(([0-9]+\\.[0-9]*|\\.[0-9]+)([eE][-+]?[0-9]+)?|[0-9]+[eE][-+]?[0-9]+)");
  if (kNull.count(s)) return nullptr;
  if (kTrue.count(s)) return true;
  if (kFalse.count(s)) return false;
  try {
    if (std::regex_match(s, kDecimal)) return std::stoll(s);
    if (std::regex_match(s, kOctal)) return std::stoll(s, nullptr, 8);
    if (std::regex_match(s, kHex)) return std::stoll(s, nullptr, 16);
    if (std::regex_match(s, kFloat)) return std::stod(s);
  } catch (const std::out_of_range&) {
    Fail("number out of range: " + s);
  }
  if (s == ".inf" || s == ".Inf" || s == "+.inf") return HUGE_VAL;
  if (s == "-.inf" || s == "-.Inf") return -HUGE_VAL;
  return s;
}

}  // namespace

json YamlToJson(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Undefined:
    case YAML::NodeType::Null:
      return nullptr;
    case YAML::NodeType::Scalar: {
      const std::string& tag = node.Tag();
      if (tag == "!" || tag == "tag:yaml.org,2002:str") return node.Scalar();
      if (tag == "?" || tag.empty()) return PlainScalar(node.Scalar());
      Fail("unsupported YAML tag " + tag + " on \"" + node.Scalar() + "\"");
    }
    case YAML::NodeType::Sequence: {
      json out = json::array();
      for (const auto& item : node) out.push_back(YamlToJson(item));
      return out;
    }
    case YAML::NodeType::Map: {
      json out = json::object();
      for (const auto& kv : node) {
        if (!kv.first.IsScalar()) Fail("a YAML map key that is not a scalar");
        const std::string key = kv.first.Scalar();
        if (out.contains(key)) Fail("duplicate YAML key \"" + key + "\"");
        out[key] = YamlToJson(kv.second);
      }
      return out;
    }
  }
  Fail("unknown YAML node type");
}

std::vector<json> ParseYamlDocuments(const std::string& text) {
  std::vector<json> out;
  for (const auto& doc : YAML::LoadAll(text)) {
    json j = YamlToJson(doc);
    if (!j.is_null()) out.push_back(std::move(j));
  }
  return out;
}

std::vector<json> LoadYamlFile(const std::string& path) {
  const std::string text = ReadTextFile(path);
  if (text.empty()) throw std::runtime_error("cannot read " + path);
  return ParseYamlDocuments(text);
}

// ---------------------------------------------------------------------------------------
// Objects

std::string Name(const json& o) { return o.value("metadata", json::object()).value("name", ""); }

std::string Key(const json& o) {
  return o.value("kind", "?") + "/" + o.value("metadata", json::object()).value("namespace", "") +
         "/" + Name(o);
}

const json* Find(const std::vector<json>& objs, const std::string& kind, const std::string& name) {
  for (const auto& o : objs) {
    if (o.value("kind", "") == kind && (name.empty() || Name(o) == name)) {
      return &o;
    }
  }
  return nullptr;
}

bool Has(const std::vector<json>& objs, const std::string& kind, const std::string& name) {
  return Find(objs, kind, name) != nullptr;
}

std::map<std::string, json> ByKey(const std::vector<json>& objs) {
  std::map<std::string, json> out;
  for (const auto& o : objs) out[Key(o)] = o;
  return out;
}

const json* Item(const json& list, const std::string& name) {
  if (!list.is_array()) return nullptr;
  for (const auto& e : list) {
    if (e.value("name", "") == name) return &e;
  }
  return nullptr;
}

json PodSpec(json ds) { return ds["spec"]["template"]["spec"]; }

std::map<std::string, std::string> ArgMap(const json& args) {
  std::map<std::string, std::string> out;
  if (!args.is_array()) return out;
  for (const auto& a : args) {
    const std::string s = a.get<std::string>();
    const size_t eq = s.find('=');
    out[s.substr(0, eq)] = eq == std::string::npos ? "" : s.substr(eq + 1);
  }
  return out;
}

long long QuantityBytes(const json& q) {
  const std::string s = q.is_string() ? q.get<std::string>() : q.dump();
  static const std::vector<std::pair<std::string, long long>> kUnits = {
      {"Ki", 1LL << 10}, {"Mi", 1LL << 20}, {"Gi", 1LL << 30},
      {"k", 1000},       {"M", 1000000},    {"G", 1000000000}};
  for (const auto& [unit, mult] : kUnits) {
    if (s.size() > unit.size() && s.compare(s.size() - unit.size(), unit.size(), unit) == 0) {
      return std::stoll(s.substr(0, s.size() - unit.size())) * mult;
    }
  }
  return std::stoll(s);
}

std::string Join(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += "\n  " + s;
  return out;
}

std::vector<json> LoadKustomizationSources(const std::string& dir) {
  const std::vector<json> k = LoadYamlFile(dir + "/kustomization.yaml");
  std::vector<json> out;
  for (const auto& r : k.at(0).at("resources")) {
    for (auto& o : LoadYamlFile(dir + "/" + r.get<std::string>())) out.push_back(o);
  }
  return out;
}

std::vector<json> BaseObjects() { return LoadKustomizationSources(Src("deploy/k8s/base")); }

std::map<std::string, json> Comparable(const std::vector<json>& objs) {
  std::map<std::string, json> out;
  for (json o : objs) {
    if (o.contains("metadata") && o["metadata"].contains("labels")) {
      for (const char* l :
           {"helm.sh/chart", "app.kubernetes.io/managed-by", "app.kubernetes.io/instance"}) {
        o["metadata"]["labels"].erase(l);
      }
    }
    // Helm's pods carry their release (its Service selects them by it); kustomize's have none.
    if (o.value("kind", "") == "DaemonSet") {
      json* labels = &o["spec"]["template"]["metadata"]["labels"];
      if (labels->is_object()) labels->erase("app.kubernetes.io/instance");
    }
    if (o.value("kind", "") == "ConfigMap" && o.contains("data")) {
      for (auto& [k, v] : o["data"].items()) {
        if (k.size() > 5 && k.compare(k.size() - 5, 5, ".json") == 0)
          v = json::parse(v.get<std::string>());
      }
    }
    out[Key(o)] = o;
  }
  return out;
}

std::string ConfigText(const std::vector<json>& objs, const json& ds, std::string* config_arg) {
  const json spec = PodSpec(ds);
  const json volumes = spec.value("volumes", json::array());
  const json containers = spec.value("containers", json::array());
  const json* dp = Item(containers, "device-plugin");
  if (dp == nullptr) return "";
  const auto args = ArgMap(dp->value("args", json::array()));
  *config_arg = args.count("--config") ? args.at("--config") : "";
  const fs::path path(*config_arg);
  for (const auto& m : dp->value("volumeMounts", json::array())) {
    if (m.value("mountPath", "") != path.parent_path().string()) continue;
    const json* v = Item(volumes, m.value("name", ""));
    if (v == nullptr || !v->contains("configMap")) continue;
    const json* cm = Find(objs, "ConfigMap", (*v)["configMap"].value("name", ""));
    if (cm == nullptr) {
      ADD_FAILURE() << "ConfigMap " << (*v)["configMap"].value("name", "") << " not found";
      return "";
    }
    const json data = cm->value("data", json::object());
    if (!data.contains(path.filename().string())) {
      ADD_FAILURE() << "ConfigMap has no key " << path.filename();
      return "";
    }
    return data[path.filename().string()].get<std::string>();
  }
  ADD_FAILURE() << "--config " << *config_arg << " is not in a configMap mount";
  return "";
}

const json kMellanoxExample = json::parse(R"({
  "periodicUpdateInterval": 300,
  "configList": [
    {"resourceName": "hca_shared_devices_a", "rdmaHcaMax": 1000, "devices": ["ib0", "ib1"]},
    {"resourceName": "hca_shared_devices_b", "rdmaHcaMax": 500,
     "selectors": {"vendors": ["15b3"], "deviceIDs": ["1017"], "ifNames": ["ib3", "ib4"]}}]})");

RunResult ValidateConfig(const std::string& config_text) {
  TempDir tmp("deploy-validate-");
  const std::string path = tmp.path() + "/config.json";
  std::ofstream(path) << config_text;
  return RunProcess({Bin("hcashare"), "validate", path});
}

std::string ProjectVersion() {
  RunResult r = RunProcess({Bin("hcashare"), "--version"});
  std::smatch m;
  static const std::regex kVersion("hcashare ([0-9]+\\.[0-9]+\\.[0-9]+)");
  if (r.code != 0 || !std::regex_search(r.out, m, kVersion)) {
    ADD_FAILURE() << "hcashare --version: " << r.out << r.err;
    return "";
  }
  return m[1];
}

std::map<std::string, std::string> DaemonDefaults() {
  const RunResult help = RunProcess({Bin("hcashare-device-plugin"), "--help"});
  EXPECT_EQ(help.code, 0) << help.err;
  std::map<std::string, std::string> out;
  static const std::regex kOption("  (-[-a-z,]+) [A-Z:]+(?:=(\\S+)| +\\[([^\\]]+)\\])");
  for (auto it = std::sregex_iterator(help.out.begin(), help.out.end(), kOption);
       it != std::sregex_iterator(); ++it) {
    std::stringstream names((*it)[1].str());
    for (std::string name; std::getline(names, name, ',');) {
      out[name] = (*it)[2].matched ? (*it)[2].str() : (*it)[3].str();
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------
// Helm

std::string HelmRendererMissing() {
  const std::string why = HCASHARE_HELM_RENDER_MISSING;
  if (!why.empty()) {
    return "the chart renderer (tests/helm-render) was not built: " + why +
           " (apt-get install golang-go golang-github-masterminds-sprig-dev "
           "golang-k8s-sigs-yaml-dev, then run cmake again)";
  }
  if (access(Bin("hcashare-helm-render").c_str(), X_OK) != 0) {
    return Bin("hcashare-helm-render") + " is missing (build the target hcashare-helm-render)";
  }
  return "";
}

bool HelmRequired() {
  const char* v = std::getenv("HCASHARE_HELM_REQUIRED");
  return v != nullptr && std::string(v) == "1";
}

bool HelmAvailable() {
  const std::string missing = HelmRendererMissing();
  if (!missing.empty() && HelmRequired()) {
    ADD_FAILURE() << "HCASHARE_HELM_REQUIRED=1, but " << missing << ": the chart is not checked";
  }
  return missing.empty();
}

std::map<std::string, std::string> RenderChart(const std::string& chart_dir,
                                               const RenderOptions& options) {
  if (const std::string missing = HelmRendererMissing(); !missing.empty()) Fail(missing);
  std::vector<std::string> argv = {Bin("hcashare-helm-render"), "-namespace",
                                   options.release_namespace, "-f", "-"};
  if (options.notes) argv.push_back("-notes");
  argv.push_back(options.release_name);
  argv.push_back(chart_dir);
  const RunResult r = RunProcess(argv, options.value_overrides.dump());
  const json out = json::parse(r.out, nullptr, false);
  if (out.is_discarded() || !out.is_object() || !out.contains("values")) {
    Fail("hcashare-helm-render " + chart_dir + " (exit code " + std::to_string(r.code) +
         "): " + r.err);
  }
  // Helm checks the values before it renders anything.
  const std::string schema_path = chart_dir + "/values.schema.json";
  if (fs::exists(schema_path)) {
    const std::vector<std::string> errors =
        ValidateJsonSchema(json::parse(ReadTextFile(schema_path)), out["values"]);
    if (!errors.empty()) {
      std::string message = "values don't meet the specifications of " + schema_path + ":";
      for (const auto& e : errors) message += "\n- " + e;
      Fail(message);
    }
  }
  if (out.contains("error")) Fail(out["error"].get<std::string>());
  if (r.code != 0)
    Fail("hcashare-helm-render exited with " + std::to_string(r.code) + ": " + r.err);
  std::map<std::string, std::string> rendered;
  for (const auto& [name, text] : out["manifests"].items()) {
    const size_t at = name.find("/templates/");  // CHART/templates/FILE
    rendered[at == std::string::npos ? name : name.substr(at + 11)] = text.get<std::string>();
  }
  return rendered;
}

std::vector<json> RenderHelm(const json& overrides) {
  RenderOptions opts;
  opts.value_overrides = overrides;
  std::vector<json> objs;
  for (const auto& [file, text] : RenderChart(Src("deploy/helm/hcashare"), opts)) {
    for (auto& o : ParseYamlDocuments(text)) objs.push_back(o);
  }
  return objs;
}

// ---------------------------------------------------------------------------------------
// kustomize

bool KubectlRequired() {
  const char* v = std::getenv("HCASHARE_KUBECTL_REQUIRED");
  return v != nullptr && std::string(v) == "1";
}

std::optional<std::vector<json>> Kustomize(const std::string& dir) {
  static const bool usable = [] {
    RunResult v = RunProcess({"kubectl", "version", "--client", "-o", "json"}, "",
                             {{"KUBECONFIG", "/dev/null"}});
    if (v.code != 0) return false;
    try {
      const std::string kv = json::parse(v.out).value("kustomizeVersion", "");
      return kv.size() > 1 && kv[0] == 'v' && std::stoi(kv.substr(1)) >= 4;
    } catch (const std::exception&) {
      return false;
    }
  }();
  if (!usable) return std::nullopt;
  RunResult r = RunProcess({"kubectl", "kustomize", dir}, "", {{"KUBECONFIG", "/dev/null"}});
  if (r.code != 0) throw std::runtime_error("kubectl kustomize " + dir + ": " + r.err);
  return ParseYamlDocuments(r.out);
}

std::vector<std::pair<std::string, std::vector<json>>> AllRenderings() {
  std::vector<std::pair<std::string, std::vector<json>>> sets = {{"base", BaseObjects()}};
  if (HelmAvailable()) sets.push_back({"helm", RenderHelm()});
  for (const char* o : {"cdi", "plugins-registry", "k3s", "dra"}) {
    if (auto k = Kustomize(Src("deploy/k8s/overlays/") + o)) {
      sets.push_back({o, *k});
    } else if (KubectlRequired()) {
      ADD_FAILURE() << "HCASHARE_KUBECTL_REQUIRED=1, but " << kNoKubectl << ": overlay " << o
                    << " not checked";
    }
  }
  return sets;
}

}  // namespace hcashare::deploy
