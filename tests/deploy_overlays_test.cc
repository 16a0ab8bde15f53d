// The kustomize overlays and the Helm chart as kustomize's equals: `kubectl kustomize`
// renders the base's source objects, each overlay holds our rules (tests/deploy_rules.h)
// and changes only what it says, the migration example uses your config; the chart,
// rendered by tests/helm-render (Go's text/template, sprig and Helm's functions), gives
// the base's objects with default values and each overlay's with that overlay's values,
// and its other values do what they say. kustomize checks run when a kubectl with
// kustomize v4 or later is on PATH, chart checks when the renderer was built; each is
// skipped otherwise, or fails with HCASHARE_KUBECTL_REQUIRED=1 / HCASHARE_HELM_REQUIRED=1.
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "common/temp_dir.h"
#include "tests/deploy_rules.h"
#include "tests/deploy_support.h"
#include "tests/test_util.h"

namespace hcashare::deploy {
namespace {

namespace fs = std::filesystem;
using hcashare::testing::ReadTextFile;

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
  // A default (not rootless) k3s node: the kubelet root is /var/lib/kubelet; only the CNI
  // bin directory is k3s's own.
  Expect k3s;
  k3s.cni_bin_dir = "/var/lib/rancher/k3s/data/cni";
  const std::vector<Case> cases = {{"cdi", Expect{}, {c0 + "/args/-"}},
                                   {"plugins-registry", Expect{}, {c0 + "/args/-"}},
                                   {"k3s", k3s, {"/spec/template/spec/volumes/8/hostPath/path"}}};
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
      // Only hostPaths a default k3s node has: the kubelet's at /var/lib/kubelet, k3s's
      // CNI bin directory, none under the rootless-only agent/kubelet.
      EXPECT_EQ(ds.dump().find("/var/lib/rancher/k3s/agent/kubelet"), std::string::npos)
          << ds.dump(2);
      EXPECT_NE(ds.dump().find("\"/var/lib/kubelet/device-plugins\""), std::string::npos);
    }
  }
}

// The migration example replaces the base's ConfigMap data with the config.json next to
// it and changes nothing else; shown here with a config of our own in a copy of it.
TEST(DeployKustomize, MigrationExampleUsesYourConfig) {
  const auto base = Kustomize(Src("deploy/k8s/base"));
  SKIP_WITHOUT_KUSTOMIZE(base);
  const std::string example = Src("deploy/examples/migrate-from-mellanox");
  const RunResult valid = ValidateConfig(ReadTextFile(example + "/config.json"));
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
  SKIP_WITHOUT_HELM();
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
  SKIP_WITHOUT_HELM();
  const std::map<std::string, json> cases = {
      {"cdi", json::parse(R"({"cdi": {"enabled": true}})")},
      {"plugins-registry", json::parse(R"({"registration": "plugins-registry"})")},
      {"k3s", json::parse(R"({"cni": {"binDir": "/var/lib/rancher/k3s/data/cni"}})")}};
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
  SKIP_WITHOUT_HELM();
  EXPECT_FALSE(Has(RenderHelm(), "ServiceMonitor"));
  EXPECT_FALSE(Has(RenderHelm(), "Service"));
  const auto objs = RenderHelm(json::parse(
      R"({"metrics": {"serviceMonitor": {"enabled": true, "labels": {"release": "prom"}}}})"));
  ASSERT_TRUE(Find(objs, "DaemonSet") && Find(objs, "Service") && Find(objs, "ServiceMonitor"));
  json ds = *Find(objs, "DaemonSet"), svc = *Find(objs, "Service");
  json sm = *Find(objs, "ServiceMonitor");
  json pod_labels = ds["spec"]["template"]["metadata"]["labels"];
  for (const auto& [k, v] : svc["spec"]["selector"].items()) EXPECT_EQ(pod_labels[k], v) << k;
  // The release is in the selector, so two releases never select each other's pods.
  EXPECT_EQ(svc["spec"]["selector"].value("app.kubernetes.io/instance", ""),
            ds["metadata"]["labels"].value("app.kubernetes.io/instance", "?"));
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
  SKIP_WITHOUT_HELM();
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

// kubeletRootDir moves plugins_registry/ and the installer's node file, never
// device-plugins/: the kubelet keeps that at /var/lib/kubelet/device-plugins whatever its
// --root-dir (a rootless k3s node: /var/lib/rancher/k3s/agent/kubelet). devicePluginDir
// moves it alone. Nothing else of either root is mounted.
TEST(DeployHelm, KubeletRootAndDevicePluginDirAreApart) {
  SKIP_WITHOUT_HELM();
  const std::string root = "/var/lib/rancher/k3s/agent/kubelet";
  auto objs = RenderHelm(json{{"kubeletRootDir", root}});
  ASSERT_TRUE(Find(objs, "DaemonSet"));
  Expect rootless;
  rootless.kubelet_root = root;
  json ds = *Find(objs, "DaemonSet");
  EXPECT_EQ(CheckDaemonSet(ds, rootless), std::vector<std::string>{});
  json spec = PodSpec(ds);
  EXPECT_EQ((*Item(spec["volumes"], "device-plugins"))["hostPath"]["path"],
            "/var/lib/kubelet/device-plugins");
  EXPECT_EQ((*Item(spec["volumes"], "plugins-registry"))["hostPath"]["path"],
            root + "/plugins_registry");
  EXPECT_EQ(ds.dump().find(root + "/device-plugins"), std::string::npos) << ds.dump(2);

  objs = RenderHelm(json{{"devicePluginDir", "/run/kubelet/device-plugins"}});
  ASSERT_TRUE(Find(objs, "DaemonSet"));
  Expect moved;
  moved.device_plugin_dir = "/run/kubelet/device-plugins";
  ds = *Find(objs, "DaemonSet");
  EXPECT_EQ(CheckDaemonSet(ds, moved), std::vector<std::string>{});
  spec = PodSpec(ds);
  EXPECT_EQ((*Item(spec["volumes"], "plugins-registry"))["hostPath"]["path"],
            "/var/lib/kubelet/plugins_registry");
  EXPECT_EQ(ds.dump().find("/var/lib/kubelet/device-plugins"), std::string::npos) << ds.dump(2);
}

TEST(DeployHelm, ConfigFromValuesIsTheMellanoxExampleAndValidates) {
  SKIP_WITHOUT_HELM();
  const auto objs = RenderHelm();
  ASSERT_TRUE(Find(objs, "DaemonSet"));
  std::string arg;
  const std::string text = ConfigText(objs, *Find(objs, "DaemonSet"), &arg);
  ASSERT_FALSE(text.empty());
  EXPECT_EQ(json::parse(text), kMellanoxExample);
  const RunResult r = ValidateConfig(text);
  EXPECT_EQ(r.code, 0) << r.out << r.err;
}

}  // namespace
}  // namespace hcashare::deploy
