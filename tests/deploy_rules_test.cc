// The DaemonSet rules checker (tests/deploy_rules.h) catches each broken rule: a check
// that could not fail would pass every manifest.
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/deploy_rules.h"
#include "tests/deploy_support.h"

namespace hcashare::deploy {
namespace {

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
      {R"([{"op": "replace", "path": "S/volumes/8/hostPath/path", "value": "/tmp"}])",
       "install-cni"},
      {R"([{"op": "replace", "path": "C/args/1", "value": "--kubelet-root-dir=/x"}])",
       "--kubelet-root-dir"},
      {R"([{"op": "replace", "path": "C/args/2", "value": "--device-plugin-dir=/x"}])",
       "--device-plugin-dir is not /var/lib/kubelet/device-plugins"},
      {R"([{"op": "replace", "path": "S/initContainers/0/args/7", "value": "/x"}])",
       "install-cni: --device-plugin-dir is not the daemon's /var/lib/kubelet/device-plugins"},
      {R"([{"op": "replace", "path": "S/initContainers/0/args/11", "value": "host"}])",
       "install-cni: --host-root \"host\" is not a path the installer takes"},
      // device-plugins/ under another kubelet root: the kubelet never uses it.
      {R"([{"op": "replace", "path": "S/volumes/1/hostPath/path", "value": "/data/kubelet/device-plugins"}])",
       "hostPath /data/kubelet/device-plugins is a device-plugins/ directory other than "
       "--device-plugin-dir /var/lib/kubelet/device-plugins"},
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
      {R"([{"op": "add", "path": "C/volumeMounts/-", "value": {"name": "nope", "mountPath": "/x"}}])",
       "device-plugin: volumeMount nope names no volume"},
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

// The DRA driver's additions: the base with deploy/k8s/overlays/dra's DaemonSet patch (a
// JSON patch, applied here without kustomize) holds the rules for the driver and breaks
// them for a DaemonSet without one; each broken addition is caught.
TEST(DeployInvariants, CheckerCatchesBrokenDraDaemonSets) {
  const auto objs = BaseObjects();
  ASSERT_TRUE(Find(objs, "DaemonSet"));
  const json base = *Find(objs, "DaemonSet");
  const auto patch = LoadYamlFile(Src("deploy/k8s/overlays/dra/daemonset-dra.yaml"));
  ASSERT_EQ(patch.size(), 1u);
  const json good = base.patch(patch[0]);
  Expect dra;
  dra.dra_driver = "rdma.hcashare.io";
  EXPECT_EQ(CheckDaemonSet(good, dra), std::vector<std::string>{});
  // Without a driver, the token and the plugins/ directory are wrong.
  const std::string without = Join(CheckDaemonSet(good, Expect{}));
  EXPECT_NE(without.find("automountServiceAccountToken is not false"), std::string::npos)
      << without;
  EXPECT_NE(without.find("hostPath /var/lib/kubelet/plugins/rdma.hcashare.io is in the kubelet "
                         "root, but not in"),
            std::string::npos)
      << without;
  // The base lacks every addition.
  EXPECT_NE(Join(CheckDaemonSet(base, dra)).find("NODE_NAME"), std::string::npos);

  const std::string dir = "/var/lib/kubelet/plugins/rdma.hcashare.io";
  // The indexes of the driver directory's volume and mount.
  const auto index_of = [](const json& list, const std::string& name) {
    for (size_t i = 0; i < list.size(); ++i) {
      if (list[i].value("name", "") == name) return i;
    }
    ADD_FAILURE() << "no " << name << " in " << list.dump();
    return size_t{0};
  };
  const size_t v = index_of(PodSpec(good)["volumes"], "dra-plugin");
  const size_t m = index_of(PodSpec(good)["containers"][0]["volumeMounts"], "dra-plugin");
  const std::string vol = "/spec/template/spec/volumes/" + std::to_string(v);
  const std::string mnt = "/spec/template/spec/containers/0/volumeMounts/" + std::to_string(m);
  const std::vector<std::pair<json, std::string>> breaks = {
      {{{{"op", "replace"},
         {"path", "/spec/template/spec/automountServiceAccountToken"},
         {"value", false}}},
       "automountServiceAccountToken is not true"},
      {{{{"op", "remove"}, {"path", "/spec/template/spec/serviceAccountName"}}},
       "no serviceAccountName"},
      {{{{"op", "remove"}, {"path", "/spec/template/spec/containers/0/env"}}},
       "NODE_NAME is not the pod's spec.nodeName"},
      {{{{"op", "replace"},
         {"path", "/spec/template/spec/containers/0/env/0/valueFrom/fieldRef/fieldPath"},
         {"value", "metadata.name"}}},
       "NODE_NAME is not the pod's spec.nodeName"},
      {{{{"op", "replace"}, {"path", vol + "/hostPath/type"}, {"value", "Directory"}}},
       "hostPath " + dir + " is not type DirectoryOrCreate"},
      {{{{"op", "replace"}, {"path", mnt + "/mountPath"}, {"value", "/plugin"}}},
       "host path " + dir + " is mounted at /plugin"},
      {{{{"op", "add"}, {"path", mnt + "/readOnly"}, {"value", true}}},
       "is mounted read-only, but the daemon writes there"},
      // The pod-resources socket, writable.
      {{{{"op", "remove"},
         {"path", "/spec/template/spec/containers/0/volumeMounts/" +
                      std::to_string(index_of(PodSpec(good)["containers"][0]["volumeMounts"],
                                              "pod-resources")) +
                      "/readOnly"}}},
       "(pod-resources) is mounted writable"},
      // All of plugins/ (other drivers' and CSI sockets), or another driver's directory.
      {{{{"op", "replace"},
         {"path", vol + "/hostPath/path"},
         {"value", "/var/lib/kubelet/plugins"}},
        {{"op", "replace"}, {"path", mnt + "/mountPath"}, {"value", "/var/lib/kubelet/plugins"}}},
       "hostPath /var/lib/kubelet/plugins is in the kubelet root, but not in"},
      {{{{"op", "replace"},
         {"path", vol + "/hostPath/path"},
         {"value", "/var/lib/kubelet/plugins/csi.example.com"}}},
       "hostPath /var/lib/kubelet/plugins/csi.example.com is in the kubelet root, but not in"},
  };
  for (const auto& [p, expected] : breaks) {
    SCOPED_TRACE(p.dump());
    const auto problems = CheckDaemonSet(good.patch(p), dra);
    const std::string all = Join(problems);
    EXPECT_NE(all.find(expected), std::string::npos) << all;
  }
}

}  // namespace
}  // namespace hcashare::deploy
