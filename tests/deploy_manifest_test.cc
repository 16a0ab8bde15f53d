// Tests of deploy/ as files: every YAML file parses (yaml-cpp) with its required fields;
// the kustomize base holds our rules (tests/deploy_rules.h) and its config is the Mellanox
// example; every rendering (the base, the Helm chart, the overlays) gives the daemon
// command lines it accepts and output directories that reach the host; the image tag is
// the project version, and what the manifests run exists in the image's file tree.
// Elsewhere: tests/deploy_overlays_test.cc (kustomize overlays, the chart against them),
// tests/deploy_examples_test.cc (deploy/examples), tests/deploy_rules_test.cc (the rules
// checker), tests/deploy_chart_test.cc (the chart's schema, NOTES and renderer).
#include <sys/stat.h>

#include <filesystem>
#include <map>
#include <regex>
#include <set>
#include <sstream>
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
using hcashare::testing::BinDir;
using hcashare::testing::ReadTextFile;

// ---------------------------------------------------------------------------------------
// Every YAML file

TEST(DeployYaml, EveryFileParsesWithItsRequiredFields) {
  int files = 0;
  for (const auto& e : fs::recursive_directory_iterator(Src("deploy"))) {
    const std::string ext = e.path().extension().string();
    if (ext != ".yaml" && ext != ".yml") continue;
    const std::string rel = fs::relative(e.path(), Src("deploy")).string();
    if (rel.find("helm/hcashare/templates/") == 0) continue;  // rendered, not YAML
    SCOPED_TRACE(rel);
    ++files;
    std::vector<json> docs;
    ASSERT_NO_THROW(docs = LoadYamlFile(e.path().string()));
    ASSERT_FALSE(docs.empty());
    const std::string name = e.path().filename().string();
    if (name == "kustomization.yaml") {
      // A Kustomization lists resources; a Component (deploy/k8s/injector/components) adds
      // resources or patches to the overlay that includes it.
      const std::string kind = docs[0].value("kind", "");
      EXPECT_TRUE(kind == "Kustomization" || kind == "Component") << kind;
      EXPECT_EQ(docs[0].value("apiVersion", ""), kind == "Component"
                                                     ? "kustomize.config.k8s.io/v1alpha1"
                                                     : "kustomize.config.k8s.io/v1beta1");
      EXPECT_TRUE(docs[0].contains("resources") ||
                  (kind == "Component" && docs[0].contains("patches")));
      for (const auto& r : docs[0].value("resources", json::array())) {
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
  const RunResult r = ValidateConfig(text);
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
  auto sets = AllRenderings();  // fails a required but missing renderer
  if (HelmRendererMissing().empty()) {
    sets.push_back({"helm all options", RenderHelm(json::parse(R"({"cdi": {"enabled": true},
        "registration": "plugins-registry", "logLevel": "debug", "logFormat": "json",
        "extraArgs": ["--health-poll-interval=0.5", "--health-debounce=1"]})"))});
  }
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
  const auto base = BaseObjects();
  ASSERT_TRUE(Find(base, "DaemonSet"));
  EXPECT_EQ(CheckDaemonSet(*Find(base, "DaemonSet"), e), std::vector<std::string>{});
  auto pod = LoadYamlFile(Src("deploy/examples/pod-rdma-doctor.yaml")).at(0);
  EXPECT_EQ(pod["spec"]["containers"][0].value("image", ""), e.image);
  SKIP_WITHOUT_HELM();
  const auto helm = RenderHelm();
  ASSERT_TRUE(Find(helm, "DaemonSet"));
  EXPECT_EQ(CheckDaemonSet(*Find(helm, "DaemonSet"), e), std::vector<std::string>{});
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
  const RunResult built =
      RunProcess({"bash", Src("scripts/build-rootfs.sh"), "--bin-dir", BinDir(), "--out", tree});
  ASSERT_EQ(built.code, 0) << built.out << built.err;
  std::set<std::string> commands;
  std::vector<std::vector<json>> sets = {BaseObjects()};
  if (HelmAvailable()) sets.push_back(RenderHelm());
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

}  // namespace
}  // namespace hcashare::deploy
