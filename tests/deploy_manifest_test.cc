// Tests of everything under deploy/: every YAML file parses (yaml-cpp); the kustomize base
// and overlays, the Helm chart (rendered by tests/deploy_helm_render.cc, Debian 12 has no
// helm) and the examples hold our invariants (mounts, capabilities, seccomp, probes,
// resources, image tag, config path); the chart renders the same objects as kustomize; the
// daemon accepts every command line the manifests give it; the commands the manifests run
// exist in the image's file tree. `kubectl kustomize` checks run when a kubectl with
// kustomize v4 or later is on PATH (Debian 12's kubernetes-client 1.20 has kustomize v2)
// and are skipped otherwise, or fail with HCASHARE_KUBECTL_REQUIRED=1 (CI).
// The chart's own machinery (values schema, NOTES, the renderer) is tested in
// tests/deploy_chart_test.cc.
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "cni/netconf.h"
#include "common/temp_dir.h"
#include "tests/deploy_helm_render.h"
#include "tests/deploy_support.h"
#include "tests/test_util.h"

namespace hcashare::deploy {
namespace {

namespace fs = std::filesystem;
using hcashare::testing::BinDir;
using hcashare::testing::ReadTextFile;

// Measured RSS of the daemon (docs/benchmarks.md): idle with 4 resources x 1000 IDs, and
// with 4 x 50000 IDs (the largest rdmaHcaMax), in KiB.
constexpr long long kIdleRssKiB = 7408;
constexpr long long kLargestConfigRssKiB = 11852;

const std::string kImageRepo = "registry.example.com/hcashare/hcashare";

// `hcashare validate` on a config text (as config.json).
RunResult Validate(const std::string& config_text) {
  TempDir tmp("deploy-validate-");
  const std::string path = tmp.path() + "/config.json";
  std::ofstream(path) << config_text;
  return RunProcess({Bin("hcashare"), "validate", path});
}

// ---------------------------------------------------------------------------------------
// Objects

// The objects a kustomization's `resources` list (no transformations: the base has none).
std::vector<json> LoadKustomizationSources(const std::string& dir) {
  const std::vector<json> k = LoadYamlFile(dir + "/kustomization.yaml");
  std::vector<json> out;
  for (const auto& r : k.at(0).at("resources")) {
    for (auto& o : LoadYamlFile(dir + "/" + r.get<std::string>())) out.push_back(o);
  }
  return out;
}

std::vector<json> BaseObjects() { return LoadKustomizationSources(Src("deploy/k8s/base")); }

// A Kubernetes quantity in bytes (memory) or millicores ("10m" = 10, "1" = 1000 for CPU).
long long MemoryBytes(const json& q) {
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

// ---------------------------------------------------------------------------------------
// Invariants

// How long the startup probe must let the daemon take to serve /healthz.
constexpr int kSlowStartSeconds = 120;
const std::string kDefaultRoot = "/var/lib/kubelet";

// `path` is `dir` or inside it.
bool Within(const std::string& path, const std::string& dir) {
  return path == dir || dir == "/" || path.rfind(dir + "/", 0) == 0;
}

// Why a hostPath may not be mounted, with respect to the kubelet roots: the kubelet root
// itself or a directory above it, a directory that holds or is inside a pods/ directory
// (every pod's volumes and secrets), or anything in the root but the three directories a
// device plugin or a CNI plugin uses.
std::vector<std::string> KubeletPathProblems(std::string path, const std::set<std::string>& roots) {
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  std::vector<std::string> out;
  if (("/" + path + "/").find("/pods/") != std::string::npos) {
    out.push_back("is in a pods/ directory (pod volumes and secrets)");
  }
  for (const auto& root : roots) {
    if (Within(root + "/pods", path)) {
      out.push_back("holds " + root + "/pods/ (every pod's volumes and secrets)");
    }
    if (Within(root, path)) {
      out.push_back("holds the whole kubelet root " + root);
    } else if (Within(path, root)) {
      const std::string sub = path.substr(root.size() + 1);
      const std::string top = sub.substr(0, sub.find('/'));
      if (top != "device-plugins" && top != "plugins_registry" && top != "pod-resources") {
        out.push_back(
            "is in the kubelet root, but not in device-plugins/, plugins_registry/ or "
            "pod-resources/");
      }
    }
  }
  return out;
}

struct Expect {
  std::string kubelet_root = "/var/lib/kubelet";
  std::string cni_bin_dir = "/opt/cni/bin";
  std::string image = kImageRepo + ":0.1.0";
  bool install_cni = true;
};

// Our rules for the DaemonSet; returns every broken one.
std::vector<std::string> CheckDaemonSet(json ds, const Expect& e) {
  std::vector<std::string> bad;
  auto check = [&](bool ok, const std::string& what) {
    if (!ok) bad.push_back(what);
  };
  check(ds.value("kind", "") == "DaemonSet", "not a DaemonSet");
  check(ds["metadata"].value("name", "") == "hcashare", "DaemonSet name is not hcashare");
  check(ds["metadata"].value("namespace", "") == "kube-system", "namespace is not kube-system");
  const json selector = ds["spec"]["selector"]["matchLabels"];
  const json pod_labels = ds["spec"]["template"]["metadata"]["labels"];
  check(selector.is_object() && !selector.empty(), "no selector");
  for (const auto& [k, v] : selector.items()) {
    check(pod_labels.is_object() && pod_labels.value(k, json()) == v,
          "selector label " + k + " not on the pod template");
  }
  const json spec = PodSpec(ds);
  check(spec.value("hostNetwork", false), "hostNetwork is not true");
  check(spec.value("priorityClassName", "") == "system-node-critical",
        "priorityClassName is not system-node-critical");

  // Tolerations: NotReady nodes and GPU taints.
  bool not_ready = false, gpu = false;
  for (const auto& t : spec.value("tolerations", json::array())) {
    const bool exists = t.value("operator", "") == "Exists";
    if (t.value("key", "") == "node.kubernetes.io/not-ready" && exists) not_ready = true;
    if (t.value("key", "") == "nvidia.com/gpu" && exists) gpu = true;
  }
  check(not_ready, "no toleration for node.kubernetes.io/not-ready");
  check(gpu, "no toleration for nvidia.com/gpu");

  // A rolling update with an explicit maxUnavailable and no surge (host port).
  const json strategy = ds["spec"].value("updateStrategy", json::object());
  const json rolling = strategy.value("rollingUpdate", json::object());
  check(strategy.value("type", "") == "RollingUpdate", "updateStrategy is not RollingUpdate");
  check(rolling.contains("maxUnavailable"), "updateStrategy sets no maxUnavailable");
  check(rolling.value("maxSurge", json(0)) == 0, "updateStrategy surges (the port is a host port)");

  // Every container: our image, not privileged, capabilities dropped, none added.
  std::vector<json> all;
  for (const char* list : {"initContainers", "containers"}) {
    for (const auto& c : spec.value(list, json::array())) all.push_back(c);
  }
  const json pod_seccomp =
      spec.value("securityContext", json::object()).value("seccompProfile", json::object());
  for (const auto& c : all) {
    const std::string name = c.value("name", "?");
    check(c.value("image", "") == e.image, name + ": image is not " + e.image);
    const json sc = c.value("securityContext", json::object());
    // The container's own profile, else the pod's.
    const json seccomp = sc.value("seccompProfile", pod_seccomp);
    check(seccomp.value("type", "") == "RuntimeDefault",
          name + ": seccompProfile is not RuntimeDefault");
    check(!sc.value("privileged", false), name + ": privileged");
    check(!sc.value("allowPrivilegeEscalation", true), name + ": allowPrivilegeEscalation");
    const json caps = sc.value("capabilities", json::object());
    const json drop = caps.value("drop", json::array());
    check(std::find(drop.begin(), drop.end(), "ALL") != drop.end(),
          name + ": capabilities not dropped (drop: [ALL])");
    check(caps.value("add", json::array()).empty(), name + ": capabilities added");
    check(c.contains("command") && c["command"].at(0).get<std::string>()[0] == '/',
          name + ": no absolute command");
  }

  const json containers = spec.value("containers", json::array());
  const json* dp = Item(containers, "device-plugin");
  check(dp != nullptr, "no device-plugin container");
  if (dp == nullptr) return bad;
  const json mounts = dp->value("volumeMounts", json::array());
  const auto args = ArgMap(dp->value("args", json::array()));
  auto arg = [&](const std::string& f) { return args.count(f) ? args.at(f) : std::string(); };
  check(arg("--kubelet-root-dir") == e.kubelet_root, "--kubelet-root-dir is not " + e.kubelet_root);
  const std::string host_root = args.count("--host-root") ? arg("--host-root") : "/";
  const std::string prefix = host_root == "/" ? "" : host_root;

  // Host paths: the volume, and where the device-plugin container mounts it.
  const json volumes = spec.value("volumes", json::array());
  auto host_mount = [&](const std::string& host_path) -> const json* {
    for (const auto& v : volumes) {
      if (!v.contains("hostPath") || v["hostPath"].value("path", "") != host_path) continue;
      for (const auto& m : mounts) {
        if (m.value("name", "") == v.value("name", "")) return &m;
      }
    }
    return nullptr;
  };
  struct Want {
    std::string host, container;
    bool read_only;
  };
  // The kubelet's directories the daemon works in, at the same paths (the kubelet dials
  // the socket path the daemon reports); plugins_registry/ only where the registration
  // mode can use it.
  const std::string kubelet_root = arg("--kubelet-root-dir");
  const bool registry = arg("--registration") != "kubelet";
  std::vector<Want> wants = {
      {kubelet_root + "/device-plugins", kubelet_root + "/device-plugins", false}};
  if (registry) {
    wants.push_back(
        {kubelet_root + "/plugins_registry", kubelet_root + "/plugins_registry", false});
  } else {
    check(host_mount(kubelet_root + "/plugins_registry") == nullptr,
          "plugins_registry is mounted, but --registration=kubelet never uses it");
  }
  for (const Want& w :
       std::vector<Want>{{"/dev", prefix + "/dev", true},
                         {"/sys", prefix + "/sys", true},
                         {"/var/run/cdi", "/var/run/cdi", false},
                         {"/var/run/k8s.cni.cncf.io", "/var/run/k8s.cni.cncf.io", false},
                         {"/var/lib/cni/hcashare", "/var/lib/cni/hcashare", true}}) {
    wants.push_back(w);
  }
  for (const Want& w : wants) {
    const json* m = host_mount(w.host);
    check(m != nullptr, "host path " + w.host + " is not mounted in device-plugin");
    if (m == nullptr) continue;
    check(m->value("mountPath", "") == w.container, "host path " + w.host + " is mounted at " +
                                                        m->value("mountPath", "") + ", not " +
                                                        w.container);
    if (w.read_only) check(m->value("readOnly", false), w.host + " is not mounted read-only");
  }
  for (const auto& v : volumes) {
    if (!v.contains("hostPath")) continue;
    const std::string path = v["hostPath"].value("path", "");
    const std::string type = v["hostPath"].value("type", "");
    check(type == "Directory" || type == "DirectoryOrCreate",
          "hostPath " + path + " is not a directory (type " + type + ")");
    check(path.size() < 5 || path.compare(path.size() - 5, 5, ".sock") != 0,
          "hostPath " + path + " is a socket file");
    if (path.rfind(kubelet_root + "/", 0) == 0) {
      check(type == "Directory", "hostPath " + path + " in the kubelet root is not type Directory");
    }
    for (const std::string& problem : KubeletPathProblems(path, {e.kubelet_root, kDefaultRoot})) {
      check(false, "hostPath " + path + " " + problem);
    }
    // pod-resources/ (every pod's devices) is only ever read.
    const std::string pod_resources = e.kubelet_root + "/pod-resources";
    if (Within(pod_resources, path) || Within(path, pod_resources)) {
      for (const auto& c : all) {
        for (const auto& m : c.value("volumeMounts", json::array())) {
          check(m.value("name", "") != v.value("name", "") || m.value("readOnly", false),
                "hostPath " + path + " (pod-resources) is mounted writable in " +
                    c.value("name", "?"));
        }
      }
    }
  }

  // The CNI installer writes to the host's CNI bin directory.
  const json init_containers = spec.value("initContainers", json::array());
  const json* installer = Item(init_containers, "install-cni");
  check((installer != nullptr) == e.install_cni,
        e.install_cni ? "no install-cni init container" : "an install-cni init container");
  if (installer != nullptr) {
    const json a = installer->value("args", json::array());
    auto it = std::find(a.begin(), a.end(), "--dest-dir");
    check(it != a.end() && it + 1 != a.end(), "install-cni: no --dest-dir");
    const std::string dest =
        it != a.end() && it + 1 != a.end() ? (it + 1)->get<std::string>() : std::string();
    bool mounted = false;
    for (const auto& m : installer->value("volumeMounts", json::array())) {
      const json* v = Item(volumes, m.value("name", ""));
      if (v != nullptr && v->contains("hostPath") &&
          (*v)["hostPath"].value("path", "") == e.cni_bin_dir && m.value("mountPath", "") == dest) {
        mounted = true;
      }
    }
    check(mounted, "install-cni: --dest-dir " + dest + " is not the host's " + e.cni_bin_dir);
  }

  // Probes on the metrics port.
  const std::string address = arg("--metrics-address");
  const size_t colon = address.rfind(':');
  check(colon != std::string::npos, "no --metrics-address (the probes need it)");
  const std::string port = colon == std::string::npos ? "" : address.substr(colon + 1);
  std::map<std::string, std::string> named_ports;
  for (const auto& p : dp->value("ports", json::array())) {
    named_ports[p.value("name", "")] = std::to_string(p.value("containerPort", 0));
  }
  for (const auto& [probe, path] :
       std::map<std::string, std::string>{{"startupProbe", "/healthz"},
                                          {"livenessProbe", "/healthz"},
                                          {"readinessProbe", "/readyz"}}) {
    const json get = dp->value(probe, json::object()).value("httpGet", json::object());
    check(get.value("path", "") == path, probe + " is not on " + path);
    const json p = get.value("port", json());
    const std::string probe_port =
        p.is_string()
            ? (named_ports.count(p.get<std::string>()) ? named_ports[p.get<std::string>()] : "")
            : p.dump();
    check(probe_port == port, probe + " port " + p.dump() + " is not the metrics port " + port);
  }

  // A slow start (a loaded node, a large config) is not a failed liveness probe: the
  // startup probe, on the same endpoint, allows minutes before it gives up.
  const json startup = dp->value("startupProbe", json::object());
  check(!startup.empty(), "no startupProbe");
  check(startup.value("httpGet", json()) ==
            dp->value("livenessProbe", json::object()).value("httpGet", json()),
        "startupProbe is not on the livenessProbe's endpoint");
  check(startup.value("failureThreshold", 3) * startup.value("periodSeconds", 10) >=
            kSlowStartSeconds,
        "startupProbe gives up before " + std::to_string(kSlowStartSeconds) + " s");

  // Resources from the measured RSS.
  const json res = dp->value("resources", json::object());
  const json requests = res.value("requests", json::object());
  const json limits = res.value("limits", json::object());
  check(requests.contains("cpu"), "no CPU request");
  check(requests.contains("memory") && MemoryBytes(requests["memory"]) >= kIdleRssKiB * 1024,
        "memory request below the idle RSS");
  check(
      limits.contains("memory") && MemoryBytes(limits["memory"]) >= 2 * kLargestConfigRssKiB * 1024,
      "memory limit below twice the RSS of the largest config");
  return bad;
}

// The config file: the --config argument must be the configMap mount plus a key of the
// ConfigMap. Returns the config text, or "" after adding a failure.
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

// The objects with Helm's own labels removed and config.json parsed, for comparing.
std::map<std::string, json> Comparable(const std::vector<json>& objs) {
  std::map<std::string, json> out;
  for (json o : objs) {
    if (o.contains("metadata") && o["metadata"].contains("labels")) {
      for (const char* l :
           {"helm.sh/chart", "app.kubernetes.io/managed-by", "app.kubernetes.io/instance"}) {
        o["metadata"]["labels"].erase(l);
      }
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

// The Mellanox README / ConfigMap example.
const json kMellanoxExample = json::parse(R"({
  "periodicUpdateInterval": 300,
  "configList": [
    {"resourceName": "hca_shared_devices_a", "rdmaHcaMax": 1000, "devices": ["ib0", "ib1"]},
    {"resourceName": "hca_shared_devices_b", "rdmaHcaMax": 500,
     "selectors": {"vendors": ["15b3"], "deviceIDs": ["1017"], "ifNames": ["ib3", "ib4"]}}]})");

// ---------------------------------------------------------------------------------------
// Every YAML file

TEST(DeployYaml, EveryFileParsesWithItsRequiredFields) {
  int files = 0;
  for (const auto& e : fs::recursive_directory_iterator(Src("deploy"))) {
    const std::string ext = e.path().extension().string();
    if (ext != ".yaml" && ext != ".yml") continue;
    const std::string rel = fs::relative(e.path(), Src("deploy")).string();
    if (rel.find("helm/hcashare/templates/") == 0) continue;  // rendered below
    SCOPED_TRACE(rel);
    ++files;
    std::vector<json> docs;
    ASSERT_NO_THROW(docs = LoadYamlFile(e.path().string()));
    ASSERT_FALSE(docs.empty());
    const std::string name = e.path().filename().string();
    if (name == "kustomization.yaml") {
      EXPECT_EQ(docs[0].value("kind", ""), "Kustomization");
      EXPECT_TRUE(docs[0].contains("resources"));
      for (const auto& r : docs[0]["resources"]) {
        EXPECT_TRUE(fs::exists(e.path().parent_path() / r.get<std::string>())) << r;
      }
      for (const auto& p : docs[0].value("patches", json::array())) {
        if (p.contains("path")) {
          EXPECT_TRUE(fs::exists(e.path().parent_path() / p["path"].get<std::string>()));
        }
      }
    } else if (name == "Chart.yaml") {
      EXPECT_EQ(docs[0].value("apiVersion", ""), "v2");
      for (const char* k : {"name", "version", "appVersion"}) {
        EXPECT_TRUE(docs[0].contains(k) && docs[0][k].is_string()) << k;
      }
    } else if (name == "values.yaml") {
      EXPECT_TRUE(docs[0].is_object());
    } else if (docs[0].is_array()) {  // a JSON patch file
      for (const auto& op : docs[0]) {
        EXPECT_TRUE(op.contains("op") && op.contains("path")) << op;
      }
    } else {
      for (const auto& d : docs) {
        EXPECT_TRUE(d.contains("apiVersion")) << d.dump();
        EXPECT_TRUE(d.contains("kind")) << d.dump();
        EXPECT_FALSE(d["metadata"].value("name", "").empty()) << d.dump();
      }
    }
  }
  EXPECT_GE(files, 12);
}

// ---------------------------------------------------------------------------------------
// The kustomize base

TEST(DeployBase, DaemonSetHoldsTheInvariants) {
  const auto objs = BaseObjects();
  const json* ds = Find(objs, "DaemonSet");
  ASSERT_NE(ds, nullptr);
  EXPECT_EQ(CheckDaemonSet(*ds, Expect{}), std::vector<std::string>{});
}

TEST(DeployBase, ConfigMapIsTheMellanoxExampleAndValidates) {
  const auto objs = BaseObjects();
  const json* ds = Find(objs, "DaemonSet");
  ASSERT_NE(ds, nullptr);
  std::string config_arg;
  const std::string text = ConfigText(objs, *ds, &config_arg);
  ASSERT_FALSE(text.empty());
  EXPECT_EQ(json::parse(text), kMellanoxExample);
  const RunResult r = Validate(text);
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  // The comment shows the keys hcashare adds.
  std::string comments;
  std::istringstream in(ReadTextFile(Src("deploy/k8s/base/configmap.yaml")));
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("#", 0) == 0) comments += line + "\n";
  }
  for (const char* key :
       {"\"mode\": \"exclusive\"", "\"topologyAware\": true", "\"excludeTopology\": true"}) {
    EXPECT_NE(comments.find(key), std::string::npos) << key;
  }
}

// The daemon's option defaults, from its --help ("--opt TEXT=value" or "[value]").
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

// The sets of objects to check: base, Helm defaults, and the overlays when kustomize is
// available.
std::vector<std::pair<std::string, std::vector<json>>> AllRenderings() {
  std::vector<std::pair<std::string, std::vector<json>>> sets = {{"base", BaseObjects()},
                                                                 {"helm", RenderHelm()}};
  for (const char* o : {"cdi", "plugins-registry", "k3s"}) {
    if (auto k = Kustomize(Src("deploy/k8s/overlays/") + o)) {
      sets.push_back({o, *k});
    } else if (KubectlRequired()) {
      ADD_FAILURE() << "HCASHARE_KUBECTL_REQUIRED=1, but " << kNoKubectl << ": overlay " << o
                    << " not checked";
    }
  }
  return sets;
}

// The file the daemon reads by default is the one the ConfigMap mount provides, so the
// Mellanox spelling (no flag at all) would work too.
TEST(DeployBase, ConfigPathIsTheDaemonDefault) {
  const auto defaults = DaemonDefaults();
  ASSERT_TRUE(defaults.count("--config")) << "no default for --config in --help";
  const auto objs = BaseObjects();
  ASSERT_TRUE(Find(objs, "DaemonSet"));
  std::string config_arg;
  ASSERT_FALSE(ConfigText(objs, *Find(objs, "DaemonSet"), &config_arg).empty());
  EXPECT_EQ(config_arg, defaults.at("--config"));
  EXPECT_EQ(config_arg, "/k8s-rdma-shared-dev-plugin/config.json");  // the Mellanox path
}

// Where the daemon writes files for others on the host (CDI specs for the runtime,
// device-info files for Multus, pool descriptions for hcashare-cni) is a writable hostPath
// mount at the same path, whatever the daemon's default or the manifest's flag says.
TEST(DeployBase, DaemonOutputDirectoriesReachTheHost) {
  const auto defaults = DaemonDefaults();
  std::vector<std::string> flags;
  for (const char* f : {"--cdi-spec-dir", "--device-info-dir", "--pool-info-dir"}) {
    if (defaults.count(f)) flags.push_back(f);
  }
  ASSERT_GE(flags.size(), 2u) << "the daemon's --help lists none of the output directories";
  for (const auto& [name, objs] : AllRenderings()) {
    SCOPED_TRACE(name);
    ASSERT_TRUE(Find(objs, "DaemonSet"));
    const json spec = PodSpec(*Find(objs, "DaemonSet"));
    const json containers = spec["containers"];
    const json volumes = spec["volumes"];
    const json* dp = Item(containers, "device-plugin");
    ASSERT_NE(dp, nullptr);
    const auto args = ArgMap(dp->value("args", json::array()));
    for (const auto& flag : flags) {
      const std::string dir = args.count(flag) ? args.at(flag) : defaults.at(flag);
      bool reaches_host = false;
      for (const auto& m : dp->value("volumeMounts", json::array())) {
        const std::string at = m.value("mountPath", "");
        const json* v = Item(volumes, m.value("name", ""));
        if (v == nullptr || !v->contains("hostPath") || m.value("readOnly", false)) continue;
        if ((dir == at || dir.rfind(at + "/", 0) == 0) &&
            v->at("hostPath").value("path", "") == at) {
          reaches_host = true;
        }
      }
      EXPECT_TRUE(reaches_host) << flag << " " << dir << " is not a writable same-path hostPath";
    }
  }
}

// Every command line the manifests give the daemon parses (--version parses them all
// before it prints).
TEST(DeployBase, DaemonAcceptsEveryCommandLine) {
  auto sets = AllRenderings();
  sets.push_back({"helm all options", RenderHelm(json::parse(R"({"cdi": {"enabled": true},
      "registration": "plugins-registry", "logLevel": "debug", "logFormat": "json",
      "extraArgs": ["--health-poll-interval=0.5", "--health-debounce=1"]})"))});
  for (const auto& [name, objs] : sets) {
    SCOPED_TRACE(name);
    const json* ds = Find(objs, "DaemonSet");
    ASSERT_NE(ds, nullptr);
    const json containers = PodSpec(*ds)["containers"];
    const json* dp = Item(containers, "device-plugin");
    ASSERT_NE(dp, nullptr);
    std::vector<std::string> argv = {Bin("hcashare-device-plugin")};
    for (const auto& a : dp->value("args", json::array())) argv.push_back(a.get<std::string>());
    argv.push_back("--version");
    const RunResult r = RunProcess(argv);
    EXPECT_EQ(r.code, 0) << r.out << r.err;
    EXPECT_EQ(r.out.rfind("hcashare-device-plugin ", 0), 0u) << r.out;
  }
}

// ---------------------------------------------------------------------------------------
// The image

TEST(DeployImage, TagIsTheProjectVersion) {
  const std::string version = ProjectVersion();
  ASSERT_FALSE(version.empty());
  const auto chart = LoadYamlFile(Src("deploy/helm/hcashare/Chart.yaml")).at(0);
  EXPECT_EQ(chart.value("appVersion", ""), version);
  Expect e;
  e.image = kImageRepo + ":" + version;
  for (const auto& objs : {BaseObjects(), RenderHelm()}) {
    const json* ds = Find(objs, "DaemonSet");
    ASSERT_NE(ds, nullptr);
    EXPECT_EQ(CheckDaemonSet(*ds, e), std::vector<std::string>{});
  }
  auto pod = LoadYamlFile(Src("deploy/examples/pod-rdma-doctor.yaml")).at(0);
  EXPECT_EQ(pod["spec"]["containers"][0].value("image", ""), e.image);
  // An override of the tag reaches every container.
  const auto tagged = RenderHelm(json::parse(R"({"image": {"tag": "9.9.9"}})"));
  e.image = kImageRepo + ":9.9.9";
  ASSERT_TRUE(Find(tagged, "DaemonSet"));
  EXPECT_EQ(CheckDaemonSet(*Find(tagged, "DaemonSet"), e), std::vector<std::string>{});
}

// What the manifests and the Dockerfile run exists, executable, in the tree that
// scripts/build-rootfs.sh assembles (the image's content).
TEST(DeployImage, CommandsExistInTheImageTree) {
  TempDir tmp("deploy-rootfs-");
  const std::string tree = tmp.path() + "/rootfs";
  const RunResult built = RunProcess(
      {"bash", Src("scripts/build-rootfs.sh"), "--bin-dir", BinDir(), "--out", tree, "--no-strip"});
  ASSERT_EQ(built.code, 0) << built.out << built.err;
  std::set<std::string> commands;
  std::vector<std::vector<json>> sets = {BaseObjects(), RenderHelm()};
  sets.push_back(LoadYamlFile(Src("deploy/examples/pod-rdma-doctor.yaml")));
  for (const auto& objs : sets) {
    for (json o : objs) {
      json spec = o.value("kind", "") == "Pod" ? o["spec"] : PodSpec(o);
      if (!spec.is_object()) continue;  // not a workload
      for (const char* list : {"initContainers", "containers"}) {
        for (const auto& c : spec.value(list, json::array())) {
          if (c.value("image", "").rfind(kImageRepo, 0) == 0) {
            commands.insert(c["command"][0].get<std::string>());
          }
        }
      }
    }
  }
  std::smatch m;
  const std::string dockerfile = ReadTextFile(Src("deploy/Dockerfile"));
  ASSERT_TRUE(std::regex_search(dockerfile, m, std::regex("\nENTRYPOINT \\[\"([^\"]+)\"")));
  commands.insert(m[1]);
  EXPECT_GE(commands.size(), 3u);
  for (const auto& c : commands) {
    struct stat st {};
    EXPECT_EQ(stat((tree + c).c_str(), &st), 0) << c << " is not in the image tree";
    EXPECT_TRUE(S_ISREG(st.st_mode) && (st.st_mode & S_IXUSR)) << c << " is not executable";
  }
  // The final stage is the tree and nothing else.
  EXPECT_NE(dockerfile.find("\nFROM scratch\nCOPY --from=build /rootfs/ /\n"), std::string::npos);
  EXPECT_NE(dockerfile.find("scripts/build-rootfs.sh --bin-dir /build/bin --out /rootfs"),
            std::string::npos);
  EXPECT_NE(dockerfile.find("bash scripts/install-deps.sh"), std::string::npos);
  EXPECT_NE(dockerfile.find("org.opencontainers.image.version=\"${VERSION}\""), std::string::npos);
}

// ---------------------------------------------------------------------------------------
// kustomize

TEST(DeployKustomize, BaseRendersTheSourceObjects) {
  const auto rendered = Kustomize(Src("deploy/k8s/base"));
  SKIP_WITHOUT_KUSTOMIZE(rendered);
  EXPECT_EQ(ByKey(*rendered), ByKey(BaseObjects()));
}

// Each overlay holds the invariants and differs from the base exactly where it should.
TEST(DeployKustomize, OverlaysChangeOnlyWhatTheySay) {
  const auto base = Kustomize(Src("deploy/k8s/base"));
  SKIP_WITHOUT_KUSTOMIZE(base);
  ASSERT_TRUE(Find(*base, "DaemonSet") && Find(*base, "ConfigMap"));
  const json base_ds = *Find(*base, "DaemonSet");
  const std::string c0 = "/spec/template/spec/containers/0";
  struct Case {
    std::string overlay;
    Expect expect;
    std::set<std::string> changed;  // JSON pointers of the DaemonSet that differ
  };
  Expect k3s;
  k3s.kubelet_root = "/var/lib/rancher/k3s/agent/kubelet";
  k3s.cni_bin_dir = "/var/lib/rancher/k3s/data/cni";
  const std::vector<Case> cases = {
      {"cdi", Expect{}, {c0 + "/args/-"}},
      {"plugins-registry", Expect{}, {c0 + "/args/-"}},
      {"k3s",
       k3s,
       {c0 + "/args/1", c0 + "/volumeMounts/1/mountPath", c0 + "/volumeMounts/2/mountPath",
        "/spec/template/spec/volumes/1/hostPath/path",
        "/spec/template/spec/volumes/2/hostPath/path",
        "/spec/template/spec/volumes/9/hostPath/path"}}};
  for (const auto& c : cases) {
    SCOPED_TRACE(c.overlay);
    const auto objs = Kustomize(Src("deploy/k8s/overlays/") + c.overlay);
    ASSERT_TRUE(objs);
    ASSERT_TRUE(Find(*objs, "DaemonSet") && Find(*objs, "ConfigMap"));
    const json ds = *Find(*objs, "DaemonSet");
    EXPECT_EQ(CheckDaemonSet(ds, c.expect), std::vector<std::string>{});
    EXPECT_EQ(*Find(*objs, "ConfigMap"), *Find(*base, "ConfigMap"));
    std::set<std::string> changed;
    for (const auto& op : json::diff(base_ds, ds)) changed.insert(op["path"].get<std::string>());
    EXPECT_EQ(changed, c.changed);
    const auto args = ArgMap(PodSpec(ds)["containers"][0]["args"]);
    if (c.overlay == "cdi") {
      EXPECT_TRUE(args.count("--use-cdi"));
    }
    if (c.overlay == "plugins-registry") {
      EXPECT_EQ(args.count("--registration") ? args.at("--registration") : "", "plugins-registry");
    }
    if (c.overlay == "k3s") {
      EXPECT_EQ(ds.dump().find("\"/var/lib/kubelet"), std::string::npos) << ds.dump(2);
    }
  }
}

// The migration example replaces the base's ConfigMap data with the config.json next to
// it and changes nothing else; shown here with a config of our own in a copy of it.
TEST(DeployKustomize, MigrationExampleUsesYourConfig) {
  const auto base = Kustomize(Src("deploy/k8s/base"));
  SKIP_WITHOUT_KUSTOMIZE(base);
  const std::string example = Src("deploy/examples/migrate-from-mellanox");
  const RunResult valid = Validate(ReadTextFile(example + "/config.json"));
  EXPECT_EQ(valid.code, 0) << valid.out << valid.err;

  TempDir tmp("deploy-migrate-");
  const std::string own =
      "{\"configList\": [{\"resourceName\": \"hca_old\", "
      "\"rdmaHcaMax\": 64, \"devices\": [\"ib0\"]}]}\n";
  std::ofstream(tmp.path() + "/config.json") << own;
  std::string kustomization = ReadTextFile(example + "/kustomization.yaml");
  const std::string relative =
      fs::relative(Src("deploy/k8s/base"), fs::canonical(tmp.path())).string();
  const size_t at = kustomization.find("  - ../../k8s/base\n");
  ASSERT_NE(at, std::string::npos);
  kustomization.replace(at, std::string("  - ../../k8s/base\n").size(), "  - " + relative + "\n");
  std::ofstream(tmp.path() + "/kustomization.yaml") << kustomization;
  const auto objs = Kustomize(tmp.path());
  ASSERT_TRUE(objs);
  ASSERT_EQ(objs->size(), base->size());
  const json* cm = Find(*objs, "ConfigMap", "rdma-devices");
  ASSERT_NE(cm, nullptr);
  EXPECT_EQ(cm->value("data", json::object()), json({{"config.json", own}}));
  EXPECT_EQ(*Find(*objs, "DaemonSet"), *Find(*base, "DaemonSet"));
}

// ---------------------------------------------------------------------------------------
// Helm

TEST(DeployHelm, DefaultValuesRenderTheKustomizeBase) {
  const auto helm = RenderHelm();
  for (json o : helm) {
    EXPECT_EQ(o["metadata"]["labels"].value("app.kubernetes.io/managed-by", ""), "Helm");
    EXPECT_EQ(o["metadata"]["labels"].value("helm.sh/chart", ""), "hcashare-0.1.0");
  }
  const auto expected = Comparable(BaseObjects());
  const auto got = Comparable(helm);
  ASSERT_EQ(got.size(), expected.size());
  for (const auto& [key, object] : expected) {
    ASSERT_TRUE(got.count(key)) << key;
    EXPECT_EQ(got.at(key), object) << key << "\ndiff: " << json::diff(object, got.at(key)).dump(2);
  }
}

TEST(DeployHelm, OverlayValuesRenderTheOverlays) {
  const std::map<std::string, json> cases = {
      {"cdi", json::parse(R"({"cdi": {"enabled": true}})")},
      {"plugins-registry", json::parse(R"({"registration": "plugins-registry"})")},
      {"k3s", json::parse(R"({"kubeletRootDir": "/var/lib/rancher/k3s/agent/kubelet",
                              "cni": {"binDir": "/var/lib/rancher/k3s/data/cni"}})")}};
  for (const auto& [overlay, values] : cases) {
    SCOPED_TRACE(overlay);
    const auto kustomized = Kustomize(Src("deploy/k8s/overlays/") + overlay);
    SKIP_WITHOUT_KUSTOMIZE(kustomized);
    const auto expected = Comparable(*kustomized);
    const auto got = Comparable(RenderHelm(values));
    ASSERT_EQ(got.size(), expected.size());
    for (const auto& [key, object] : expected) {
      ASSERT_TRUE(got.count(key)) << key;
      EXPECT_EQ(got.at(key), object) << json::diff(object, got.at(key)).dump(2);
    }
  }
}

TEST(DeployHelm, ServiceMonitorSelectsTheMetricsPort) {
  EXPECT_EQ(Find(RenderHelm(), "ServiceMonitor"), nullptr);
  EXPECT_EQ(Find(RenderHelm(), "Service"), nullptr);
  const auto objs = RenderHelm(json::parse(
      R"({"metrics": {"serviceMonitor": {"enabled": true, "labels": {"release": "prom"}}}})"));
  ASSERT_TRUE(Find(objs, "DaemonSet") && Find(objs, "Service") && Find(objs, "ServiceMonitor"));
  json ds = *Find(objs, "DaemonSet"), svc = *Find(objs, "Service");
  json sm = *Find(objs, "ServiceMonitor");
  json pod_labels = ds["spec"]["template"]["metadata"]["labels"];
  for (const auto& [k, v] : svc["spec"]["selector"].items()) EXPECT_EQ(pod_labels[k], v) << k;
  json port = svc["spec"]["ports"][0];
  EXPECT_EQ(port["targetPort"], "metrics");
  EXPECT_EQ(port["port"], 9402);
  EXPECT_EQ(svc["spec"]["clusterIP"], "None");
  for (const auto& [k, v] : sm["spec"]["selector"]["matchLabels"].items()) {
    EXPECT_EQ(svc["metadata"]["labels"][k], v) << k;
  }
  EXPECT_EQ(sm["spec"]["endpoints"][0]["port"], port["name"]);
  EXPECT_EQ(sm["spec"]["endpoints"][0]["path"], "/metrics");
  EXPECT_EQ(sm["metadata"]["labels"]["release"], "prom");
  EXPECT_EQ(sm["spec"]["namespaceSelector"]["matchNames"][0], "kube-system");
}

TEST(DeployHelm, ValuesDoWhatTheySay) {
  // An existing ConfigMap (e.g. the Mellanox one): none rendered, the name is used.
  auto objs = RenderHelm(json::parse(R"({"configMap": {"create": false, "name": "old-cm"}})"));
  EXPECT_EQ(Find(objs, "ConfigMap"), nullptr);
  ASSERT_TRUE(Find(objs, "DaemonSet"));
  EXPECT_EQ(PodSpec(*Find(objs, "DaemonSet"))["volumes"][0]["configMap"]["name"], "old-cm");

  // configJson verbatim; it is what the daemon reads.
  const std::string own =
      "{\"configList\": [{\"resourceName\": \"x\", \"rdmaHcaMax\": 7, "
      "\"selectors\": {\"vendors\": [\"15b3\"]}}]}\n";
  objs = RenderHelm(json{{"configJson", own}});
  ASSERT_TRUE(Find(objs, "DaemonSet"));
  std::string arg;
  EXPECT_EQ(ConfigText(objs, *Find(objs, "DaemonSet"), &arg), own);

  // No CNI installer: no init container and no write access to the CNI bin directory.
  objs = RenderHelm(json::parse(R"({"cni": {"install": false}})"));
  Expect no_cni;
  no_cni.install_cni = false;
  ASSERT_TRUE(Find(objs, "DaemonSet"));
  EXPECT_EQ(CheckDaemonSet(*Find(objs, "DaemonSet"), no_cni), std::vector<std::string>{});
  const json volumes = PodSpec(*Find(objs, "DaemonSet"))["volumes"];
  EXPECT_EQ(Item(volumes, "cni-bin"), nullptr);

  // Classic registration only: plugins_registry/ is not mounted (the checker requires
  // that), device-plugins/ is.
  objs = RenderHelm(json::parse(R"({"registration": "kubelet"})"));
  ASSERT_TRUE(Find(objs, "DaemonSet"));
  const json kubelet_only = *Find(objs, "DaemonSet");
  EXPECT_EQ(CheckDaemonSet(kubelet_only, Expect{}), std::vector<std::string>{});
  const json kubelet_only_spec = PodSpec(kubelet_only);
  EXPECT_EQ(ArgMap(kubelet_only_spec["containers"][0]["args"])["--registration"], "kubelet");
  EXPECT_EQ(Item(kubelet_only_spec["volumes"], "plugins-registry"), nullptr);

  // The metrics port moves the probes with it; an empty nodeSelector disappears.
  objs = RenderHelm(json::parse(R"({"metrics": {"port": 19402}, "nodeSelector": null,
                                    "fullnameOverride": "rdma"})"));
  ASSERT_TRUE(Find(objs, "DaemonSet"));
  json ds = *Find(objs, "DaemonSet");
  EXPECT_EQ(ds["metadata"]["name"], "rdma");
  EXPECT_FALSE(PodSpec(ds).contains("nodeSelector"));
  json dp = PodSpec(ds)["containers"][0];
  EXPECT_EQ(dp["ports"][0]["containerPort"], 19402);
  EXPECT_EQ(ArgMap(dp["args"])["--metrics-address"], ":19402");
}

TEST(DeployHelm, ConfigFromValuesIsTheMellanoxExampleAndValidates) {
  const auto objs = RenderHelm();
  ASSERT_TRUE(Find(objs, "DaemonSet"));
  std::string arg;
  const std::string text = ConfigText(objs, *Find(objs, "DaemonSet"), &arg);
  ASSERT_FALSE(text.empty());
  EXPECT_EQ(json::parse(text), kMellanoxExample);
  const RunResult r = Validate(text);
  EXPECT_EQ(r.code, 0) << r.out << r.err;
}

// ---------------------------------------------------------------------------------------
// Examples

// An example file's NAD (with its config parsed) and Pod; null when absent.
struct Example {
  json nad, config, pod;
};

Example LoadExample(const std::string& file) {
  const std::vector<json> objs = LoadYamlFile(Src("deploy/examples/") + file);
  Example e;
  if (const json* nad = Find(objs, "NetworkAttachmentDefinition")) {
    e.nad = *nad;
    e.config = json::parse(e.nad["spec"]["config"].get<std::string>());
  }
  if (const json* pod = Find(objs, "Pod")) e.pod = *pod;
  return e;
}

std::string PodResource(json pod) {
  const json limits = pod["spec"]["containers"][0]["resources"]["limits"];
  return limits.is_object() && limits.size() == 1 ? limits.begin().key() : "";
}

bool HasIpcLock(const json& container) {
  const json add = container.value("securityContext", json::object())
                       .value("capabilities", json::object())
                       .value("add", json::array());
  return std::find(add.begin(), add.end(), "IPC_LOCK") != add.end();
}

TEST(DeployExamples, NetworkAttachmentDefinitions) {
  // The CNI versions hcashare-cni supports.
  const RunResult v =
      RunProcess({Bin("hcashare-cni")}, "{\"cniVersion\":\"1.0.0\"}", {{"CNI_COMMAND", "VERSION"}});
  ASSERT_EQ(v.code, 0) << v.out;
  const json supported = json::parse(v.out)["supportedVersions"];
  // The resources the example config defines.
  const json config = json::parse(ReadTextFile(Src("deploy/examples/config-with-vf-pool.json")));
  const RunResult valid = Validate(config.dump());
  EXPECT_EQ(valid.code, 0) << valid.out << valid.err;
  std::set<std::string> resources;
  for (const auto& r : config["configList"]) {
    resources.insert(r.value("resourcePrefix", "rdma") + "/" +
                     r["resourceName"].get<std::string>());
  }

  for (const char* file :
       {"nad-sriov-vf-rdma.yaml", "nad-standalone.yaml", "nad-macvlan-shared.yaml"}) {
    SCOPED_TRACE(file);
    Example e = LoadExample(file);
    ASSERT_TRUE(e.nad.is_object() && e.pod.is_object());
    const std::string nad_name = Name(e.nad);
    EXPECT_EQ(e.config.value("name", ""), nad_name);
    EXPECT_NE(std::find(supported.begin(), supported.end(), e.config["cniVersion"]),
              supported.end());
    EXPECT_TRUE(e.config.contains("ipam"));
    // The pod attaches the NAD and requests a resource the config defines.
    EXPECT_EQ(e.pod["metadata"]["annotations"]["k8s.v1.cni.cncf.io/networks"], nad_name);
    const std::string resource = PodResource(e.pod);
    EXPECT_TRUE(resources.count(resource)) << resource;
    EXPECT_TRUE(HasIpcLock(e.pod["spec"]["containers"][0]));
    const json annotations = e.nad["metadata"].value("annotations", json::object());
    const std::string annotated = annotations.value("k8s.v1.cni.cncf.io/resourceName", "");
    if (e.config["type"] == "hcashare-cni") {
      // The plugin's own parser accepts it for ADD, without a warning (with the deviceID
      // Multus would add when the NAD has the resourceName annotation).
      json conf = e.config;
      if (!annotated.empty()) conf["deviceID"] = "0000:3b:00.2";
      const auto parsed = cni::ParseNetConf(conf.dump(), cni::Verb::kAdd);
      EXPECT_TRUE(parsed.ok()) << (parsed.ok()
                                       ? ""
                                       : parsed.error().msg + ": " + parsed.error().details);
      if (parsed.ok()) {
        EXPECT_EQ(parsed->warnings, std::vector<std::string>{});
      }
    }
    if (std::string(file) == "nad-sriov-vf-rdma.yaml") {
      EXPECT_EQ(e.config["type"], "hcashare-cni");
      EXPECT_EQ(annotated, resource);  // Multus injects the deviceID of this resource
      EXPECT_FALSE(e.config.contains("resourceName"));
    } else if (std::string(file) == "nad-standalone.yaml") {
      EXPECT_EQ(e.config["type"], "hcashare-cni");
      EXPECT_EQ(annotated, "");  // no injection: the plugin looks the device up
      EXPECT_EQ(e.config.value("resourceName", ""), resource);
    } else {
      EXPECT_EQ(e.config["type"], "hcashare-cni");
      EXPECT_EQ(e.config.value("mode", ""), "macvlan");
      EXPECT_EQ(e.config.value("resourceName", ""), resource);
      EXPECT_EQ(resource, "rdma/hca_shared_devices_a");  // a shared pool
    }
  }
}

TEST(DeployExamples, DoctorPod) {
  Example e = LoadExample("pod-rdma-doctor.yaml");
  ASSERT_TRUE(e.pod.is_object());
  json c = e.pod["spec"]["containers"][0];
  EXPECT_EQ(c["resources"]["limits"]["rdma/hca_shared_devices_a"], 1);
  EXPECT_TRUE(HasIpcLock(c));
  EXPECT_EQ(c["command"], json::parse(R"(["/usr/local/bin/hcashare", "doctor"])"));
}

// Turns into a real check once the CLI has `doctor` (it is planned).
TEST(DeployExamples, DoctorSubcommandRuns) {
  const RunResult r = RunProcess({Bin("hcashare"), "doctor", "--help"});
  if (r.code != 0) GTEST_SKIP() << "hcashare has no doctor subcommand yet: " << r.out << r.err;
  SUCCEED();
}

TEST(DeployExamples, NcclAllReduceJob) {
  const auto objs = LoadYamlFile(Src("deploy/examples/nccl-allreduce-job.yaml"));
  ASSERT_TRUE(Find(objs, "Job") && Find(objs, "Service") && Find(objs, "ConfigMap"));
  json job = *Find(objs, "Job"), svc = *Find(objs, "Service"), cm = *Find(objs, "ConfigMap");
  json spec = job["spec"];
  EXPECT_EQ(spec["completions"], 2);
  EXPECT_EQ(spec["parallelism"], 2);
  EXPECT_EQ(spec["completionMode"], "Indexed");
  json pod = spec["template"]["spec"];
  const std::string job_name = Name(job);
  EXPECT_EQ(pod["subdomain"], Name(svc));
  EXPECT_EQ(svc["spec"]["clusterIP"], "None");
  EXPECT_EQ(svc["spec"]["selector"]["job-name"], job_name);
  // Two nodes, or NCCL would not use the network.
  json anti =
      pod["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][0];
  EXPECT_EQ(anti["topologyKey"], "kubernetes.io/hostname");
  EXPECT_EQ(anti["labelSelector"]["matchLabels"]["job-name"], job_name);
  json c = pod["containers"][0];
  std::map<std::string, std::string> env;
  for (const auto& e : c["env"]) env[e["name"]] = e.value("value", "");
  EXPECT_EQ(env["NCCL_DEBUG"], "INFO");
  EXPECT_EQ(env["NCCL_DEBUG_SUBSYS"], "INIT,NET");
  EXPECT_EQ(c["resources"]["limits"]["rdma/hca_shared_devices_a"], 1);
  EXPECT_EQ(c["resources"]["limits"]["nvidia.com/gpu"], 1);
  EXPECT_TRUE(HasIpcLock(c));
  const std::string script = c["args"][0];
  EXPECT_NE(script.find("--master_addr=" + job_name + "-0." + pod["subdomain"].get<std::string>()),
            std::string::npos);
  EXPECT_NE(script.find("NCCL_IB_HCA=\"=${HCASHARE_RDMA_DEVICES}\""), std::string::npos);
  EXPECT_NE(script.find("/scripts/allreduce.py"), std::string::npos);
  EXPECT_TRUE(cm["data"].contains("allreduce.py"));
}

// ---------------------------------------------------------------------------------------
// The checker itself catches what it is there for.

TEST(DeployInvariants, CheckerCatchesBrokenDaemonSets) {
  const auto objs = BaseObjects();
  ASSERT_TRUE(Find(objs, "DaemonSet"));
  const json good = *Find(objs, "DaemonSet");
  // "C/" is the device-plugin container, "S/" the pod spec.
  const std::vector<std::pair<std::string, std::string>> breaks = {
      {R"([{"op": "add", "path": "C/securityContext/privileged", "value": true}])", "privileged"},
      {R"([{"op": "add", "path": "C/securityContext/capabilities/add", "value": ["SYS_ADMIN"]}])",
       "capabilities added"},
      {R"([{"op": "remove", "path": "S/volumes/4"}])", "/sys is not mounted"},
      {R"([{"op": "replace", "path": "S/volumes/1/hostPath",
            "value": {"path": "/var/lib/kubelet/device-plugins/kubelet.sock", "type": "Socket"}}])",
       "socket file"},
      {R"([{"op": "replace", "path": "C/readinessProbe/httpGet/port", "value": 9999}])",
       "readinessProbe port"},
      {R"([{"op": "remove", "path": "C/resources/limits"}])", "memory limit"},
      {R"([{"op": "replace", "path": "C/image", "value": "registry.example.com/hcashare/hcashare:latest"}])",
       "image"},
      {R"([{"op": "remove", "path": "S/tolerations/2"}])", "nvidia.com/gpu"},
      {R"([{"op": "remove", "path": "S/hostNetwork"}])", "hostNetwork"},
      {R"([{"op": "replace", "path": "S/volumes/9/hostPath/path", "value": "/tmp"}])",
       "install-cni"},
      {R"([{"op": "replace", "path": "C/args/1", "value": "--kubelet-root-dir=/x"}])",
       "--kubelet-root-dir"},
      // The kubelet's directories.
      {R"([{"op": "add", "path": "S/volumes/-",
            "value": {"name": "k", "hostPath": {"path": "/var/lib/kubelet", "type": "Directory"}}}])",
       "holds the whole kubelet root"},
      {R"([{"op": "add", "path": "S/volumes/-",
            "value": {"name": "k", "hostPath": {"path": "/var/lib/", "type": "Directory"}}}])",
       "holds the whole kubelet root"},
      {R"([{"op": "add", "path": "S/volumes/-",
            "value": {"name": "k", "hostPath": {"path": "/var/lib/kubelet/pods/", "type": "Directory"}}}])",
       "is in a pods/ directory"},
      {R"([{"op": "replace", "path": "S/volumes/1/hostPath/path", "value": "/var/lib/kubelet"},
           {"op": "replace", "path": "C/volumeMounts/1/mountPath", "value": "/var/lib/kubelet"}])",
       "hostPath /var/lib/kubelet holds /var/lib/kubelet/pods/"},
      {R"([{"op": "add", "path": "S/volumes/-",
            "value": {"name": "k", "hostPath": {"path": "/var/lib/kubelet/plugins", "type": "Directory"}}}])",
       "not in device-plugins/, plugins_registry/ or pod-resources/"},
      {R"([{"op": "add", "path": "S/volumes/-",
            "value": {"name": "pr", "hostPath": {"path": "/var/lib/kubelet/pod-resources", "type": "Directory"}}},
           {"op": "add", "path": "C/volumeMounts/-",
            "value": {"name": "pr", "mountPath": "/var/lib/kubelet/pod-resources"}}])",
       "(pod-resources) is mounted writable in device-plugin"},
      {R"([{"op": "remove", "path": "S/volumes/2"}])", "plugins_registry is not mounted"},
      {R"([{"op": "add", "path": "C/args/-", "value": "--registration=kubelet"}])",
       "plugins_registry is mounted, but --registration=kubelet never uses it"},
      // Seccomp, the startup probe, the rolling update.
      {R"([{"op": "remove", "path": "S/securityContext"}])",
       "device-plugin: seccompProfile is not RuntimeDefault"},
      {R"([{"op": "add", "path": "S/initContainers/0/securityContext/seccompProfile",
            "value": {"type": "Unconfined"}}])",
       "install-cni: seccompProfile is not RuntimeDefault"},
      {R"([{"op": "remove", "path": "C/startupProbe"}])", "no startupProbe"},
      {R"([{"op": "replace", "path": "C/startupProbe/failureThreshold", "value": 3}])",
       "startupProbe gives up before 120 s"},
      {R"([{"op": "replace", "path": "C/startupProbe/httpGet/path", "value": "/readyz"}])",
       "startupProbe is not on /healthz"},
      {R"([{"op": "remove", "path": "/spec/updateStrategy/rollingUpdate/maxUnavailable"}])",
       "maxUnavailable"},
  };
  for (const auto& [patch_text, expected] : breaks) {
    std::string p = patch_text;
    for (const auto& [short_form, pointer] : std::map<std::string, std::string>{
             {"\"C/", "/spec/template/spec/containers/0/"}, {"\"S/", "/spec/template/spec/"}}) {
      for (size_t at = p.find(short_form); at != std::string::npos; at = p.find(short_form)) {
        p.replace(at + 1, 2, pointer);
      }
    }
    SCOPED_TRACE(p);
    const json broken = good.patch(json::parse(p));
    const auto problems = CheckDaemonSet(broken, Expect{});
    ASSERT_FALSE(problems.empty());
    const std::string all = Join(problems);
    EXPECT_NE(all.find(expected), std::string::npos) << all;
  }
}

}  // namespace
}  // namespace hcashare::deploy
