#include "tests/deploy_rules.h"

#include <algorithm>
#include <map>
#include <regex>
#include <set>

namespace hcashare::deploy {

const std::string kImageRepo = "registry.example.com/hcashare/hcashare";

namespace {

// Measured RSS of the daemon (docs/benchmarks.md): idle with 4 resources x 1000 IDs, and
// with 4 x 50000 IDs (the largest rdmaHcaMax), in KiB.
constexpr long long kIdleRssKiB = 7408;
constexpr long long kLargestConfigRssKiB = 11852;

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
// device plugin or a CNI plugin uses and, for a DRA driver, plugins/<driver> (plugins/ holds
// every other driver's and CSI plugin's sockets).
std::vector<std::string> KubeletPathProblems(std::string path, const std::set<std::string>& roots,
                                             const std::string& dra_driver) {
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
      const bool driver_dir = !dra_driver.empty() && sub == "plugins/" + dra_driver;
      if (top != "device-plugins" && top != "plugins_registry" && top != "pod-resources" &&
          !driver_dir) {
        out.push_back(
            "is in the kubelet root, but not in device-plugins/, plugins_registry/ or "
            "pod-resources/" +
            (dra_driver.empty() ? std::string() : " nor the DRA driver's plugins/" + dra_driver));
      }
    }
  }
  return out;
}

}  // namespace

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
  // The API server token: only a DRA driver talks to the API server.
  const bool token = spec.value("automountServiceAccountToken", true);
  if (e.dra_driver.empty()) {
    check(!token, "automountServiceAccountToken is not false, but nothing talks to the API server");
  } else {
    check(token, "automountServiceAccountToken is not true: the DRA driver needs the API server");
    check(!spec.value("serviceAccountName", "").empty(),
          "no serviceAccountName for the DRA driver");
  }
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
  check(arg("--device-plugin-dir") == e.device_plugin_dir,
        "--device-plugin-dir is not " + e.device_plugin_dir);
  const std::string host_root = args.count("--host-root") ? arg("--host-root") : "/";
  const std::string prefix = host_root == "/" ? "" : host_root;

  // Host paths: the volume, and where the device-plugin container mounts it.
  const json volumes = spec.value("volumes", json::array());
  // Every mount names a volume of the pod (the API server rejects the pod otherwise).
  for (const auto& c : all) {
    for (const auto& m : c.value("volumeMounts", json::array())) {
      check(Item(volumes, m.value("name", "")) != nullptr,
            c.value("name", "?") + ": volumeMount " + m.value("name", "") + " names no volume");
    }
  }
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
  // the socket path the daemon reports): the device-plugin directory, which does not follow
  // the kubelet root, and plugins_registry/ (under the root) only where the registration
  // mode can use it.
  const std::string kubelet_root = arg("--kubelet-root-dir");
  const std::string device_plugin_dir = arg("--device-plugin-dir");
  const bool registry = arg("--registration") != "kubelet";
  std::vector<Want> wants = {{device_plugin_dir, device_plugin_dir, false}};
  if (registry) {
    wants.push_back(
        {kubelet_root + "/plugins_registry", kubelet_root + "/plugins_registry", false});
  } else {
    check(host_mount(kubelet_root + "/plugins_registry") == nullptr,
          "plugins_registry is mounted, but --registration=kubelet never uses it");
  }
  for (const Want& w : std::vector<Want>{
           {"/dev", prefix + "/dev", true},
           {"/sys", prefix + "/sys", true},
           {"/var/run/cdi", "/var/run/cdi", false},
           {"/var/run/k8s.cni.cncf.io/devinfo/dp", "/var/run/k8s.cni.cncf.io/devinfo/dp", false}}) {
    wants.push_back(w);
  }
  const std::string driver_dir = kubelet_root + "/plugins/" + e.dra_driver;
  if (!e.dra_driver.empty()) wants.push_back({driver_dir, driver_dir, false});
  for (const Want& w : wants) {
    const json* m = host_mount(w.host);
    check(m != nullptr, "host path " + w.host + " is not mounted in device-plugin");
    if (m == nullptr) continue;
    check(m->value("mountPath", "") == w.container, "host path " + w.host + " is mounted at " +
                                                        m->value("mountPath", "") + ", not " +
                                                        w.container);
    if (w.read_only) {
      check(m->value("readOnly", false), w.host + " is not mounted read-only");
    } else {
      check(!m->value("readOnly", false),
            w.host + " is mounted read-only, but the daemon writes there");
    }
  }
  for (const auto& v : volumes) {
    if (!v.contains("hostPath")) continue;
    const std::string path = v["hostPath"].value("path", "");
    const std::string type = v["hostPath"].value("type", "");
    check(type == "Directory" || type == "DirectoryOrCreate",
          "hostPath " + path + " is not a directory (type " + type + ")");
    check(path.size() < 5 || path.compare(path.size() - 5, 5, ".sock") != 0,
          "hostPath " + path + " is a socket file");
    if (!e.dra_driver.empty() && path == driver_dir) {
      // The kubelet does not create a driver's directory; the first start does.
      check(type == "DirectoryOrCreate", "hostPath " + path + " is not type DirectoryOrCreate");
    } else if (path.rfind(kubelet_root + "/", 0) == 0 || path == device_plugin_dir) {
      check(type == "Directory", "hostPath " + path + " in the kubelet root is not type Directory");
    }
    // Least privilege: no device-plugins/ but the one the daemon writes in.
    const size_t base = path.find_last_of('/');
    if (base != std::string::npos && path.substr(base + 1) == "device-plugins") {
      check(path == device_plugin_dir, "hostPath " + path +
                                           " is a device-plugins/ directory other than "
                                           "--device-plugin-dir " +
                                           device_plugin_dir);
    }
    for (const std::string& problem :
         KubeletPathProblems(path, {e.kubelet_root, kDefaultRoot}, e.dra_driver)) {
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
    // The CNI's node file names the daemon's kubelet directories (pod-resources, checkpoint).
    const auto value_of = [&](const std::string& flag) {
      auto f = std::find(a.begin(), a.end(), flag);
      return f != a.end() && f + 1 != a.end() ? (f + 1)->get<std::string>() : std::string();
    };
    check(value_of("--kubelet-root-dir") == kubelet_root,
          "install-cni: --kubelet-root-dir is not the daemon's " + kubelet_root);
    check(value_of("--device-plugin-dir") == device_plugin_dir,
          "install-cni: --device-plugin-dir is not the daemon's " + device_plugin_dir);
    // The node file's paths as the installer takes them (else it exits 2 at every start).
    static const std::regex kNodePath("/[A-Za-z0-9._/-]*");
    for (const char* flag : {"--kubelet-root-dir", "--device-plugin-dir", "--state-dir",
                             "--host-root", "--device-info-dir"}) {
      const std::string v = value_of(flag);
      check(
          v.empty() || std::regex_match(v, kNodePath),
          std::string("install-cni: ") + flag + " \"" + v + "\" is not a path the installer takes");
    }
  }

  // The DRA driver's node: NODE_NAME (its --node-name default) from the pod's node.
  const json env = dp->value("env", json::array());
  const json* node_name = Item(env, "NODE_NAME");
  if (!e.dra_driver.empty()) {
    check(node_name != nullptr && node_name->value("valueFrom", json::object())
                                          .value("fieldRef", json::object())
                                          .value("fieldPath", "") == "spec.nodeName",
          "NODE_NAME is not the pod's spec.nodeName");
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
  check(requests.contains("memory") && QuantityBytes(requests["memory"]) >= kIdleRssKiB * 1024,
        "memory request below the idle RSS");
  check(limits.contains("memory") &&
            QuantityBytes(limits["memory"]) >= 2 * kLargestConfigRssKiB * 1024,
        "memory limit below twice the RSS of the largest config");
  return bad;
}

}  // namespace hcashare::deploy
