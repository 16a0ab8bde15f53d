// The node's settings (cni/node_config.h): the root-owned node file they come from, and the
// network configuration, which a NetworkAttachmentDefinition author (a tenant) writes, may
// only repeat them.
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "cni/error.h"
#include "cni/netconf.h"
#include "cni/node_config.h"
#include "common/temp_dir.h"
#include "kubelet/podresources.h"

namespace hcashare::cni {
namespace {

namespace fs = std::filesystem;

constexpr const char* kNad =
    R"({"cniVersion": "1.0.0", "name": "n", "type": "hcashare-cni", "deviceID": "0000:3b:00.2")";

class NodeFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root (file ownership)";
    fs::create_directories(dir());
    ASSERT_EQ(::chmod(dir().c_str(), 0755), 0);
  }
  std::string dir() const { return tmp_.path() + "/etc-hcashare"; }
  std::string file() const { return dir() + "/cni.json"; }
  void Write(const std::string& text, mode_t mode = 0644) {
    std::ofstream(file()) << text;
    ASSERT_EQ(::chmod(file().c_str(), mode), 0);
  }
  Result<NodeSettings> Load() { return LoadNodeSettings({{std::string(kNodeConfigEnv), file()}}); }
  // An error whose code is 7 and whose msg and details contain `part`.
  static ::testing::AssertionResult Refused(const Result<NodeSettings>& r,
                                            const std::string& part) {
    if (r.ok()) return ::testing::AssertionFailure() << "accepted";
    const std::string all = r.status().message() + " | " + r.status().details();
    if (CniCodeOf(r.status()) != kErrInvalidNetConf || all.find(part) == std::string::npos) {
      return ::testing::AssertionFailure() << "code " << CniCodeOf(r.status()) << ": " << all;
    }
    return ::testing::AssertionSuccess();
  }

  TempDir tmp_{"hcashare-nodecfg-"};
};

TEST_F(NodeFileTest, ReadsEverySetting) {
  Write(R"({"hostRoot": "/host", "stateDir": "/run/hcashare", "kubeletRootDir": "/var/lib/k",
            "devicePluginDir": "/run/dp", "poolInfoDir": "/run/pools",
            "logFile": "/var/log/cni.log", "checkAllocation": false,
            "draDriver": "rdma.example.com", "deviceInfoDir": "/run/devinfo"})");
  auto node = Load();
  ASSERT_TRUE(node.ok()) << node.status().ToString();
  EXPECT_EQ(node->dra_driver, "rdma.example.com");
  EXPECT_EQ(node->device_info_dir, "/run/devinfo");
  EXPECT_EQ(node->host_root, "/host");
  EXPECT_EQ(node->state_dir, "/run/hcashare");
  EXPECT_EQ(node->kubelet_root_dir, "/var/lib/k");
  EXPECT_EQ(node->device_plugin_dir, "/run/dp");
  EXPECT_EQ(node->pool_info_dir, "/run/pools");
  EXPECT_EQ(node->log_file, "/var/log/cni.log");
  EXPECT_FALSE(node->check_allocation);
  EXPECT_EQ(node->source, file());
}

TEST_F(NodeFileTest, PoolInfoDirFollowsTheKubeletRootByDefault) {
  Write(R"({"kubeletRootDir": "/var/lib/k"})");
  auto node = Load();
  ASSERT_TRUE(node.ok());
  EXPECT_EQ(node->pool_info_dir, "/var/run/hcashare/pools/kubelet-_var_lib_k");
  EXPECT_TRUE(node->check_allocation);
}

// The checkpoint's directory is the kubelet's fixed device-plugin directory, whatever the
// kubelet root (the kubelet does not move it with --root-dir).
TEST_F(NodeFileTest, DevicePluginDirDoesNotFollowTheKubeletRoot) {
  Write(R"({"kubeletRootDir": "/var/lib/k"})");
  auto node = Load();
  ASSERT_TRUE(node.ok());
  EXPECT_EQ(node->device_plugin_dir, "/var/lib/kubelet/device-plugins");
  EXPECT_EQ(kubelet::KubeletCheckpointPath(node->device_plugin_dir),
            "/var/lib/kubelet/device-plugins/kubelet_internal_checkpoint");
}

TEST_F(NodeFileTest, AbsentDefaultFileMeansBuiltInDefaultsButANamedFileMustExist) {
  // kDefaultNodeConfigPath is absent on the test machine (nothing installs it there).
  if (fs::exists(std::string(kDefaultNodeConfigPath))) GTEST_SKIP() << "this node has one";
  auto defaults = LoadNodeSettings({});
  ASSERT_TRUE(defaults.ok());
  EXPECT_EQ(defaults->state_dir, std::string(kDefaultStateDir));
  EXPECT_EQ(defaults->source, "");
  EXPECT_TRUE(Refused(Load(), "does not exist"));
}

// The adversary: anyone but root who could write the node file (or its directory) would
// choose the root plugin's host paths.
TEST_F(NodeFileTest, RefusedUnlessOnlyRootCanWriteIt) {
  Write(R"({"stateDir": "/run/x"})", 0664);
  EXPECT_TRUE(
      Refused(Load(), "with mode 0664; it must be owned by root and writable by root only"));
  Write(R"({"stateDir": "/run/x"})", 0646);
  EXPECT_TRUE(Refused(Load(), "with mode 0646"));
  Write(R"({"stateDir": "/run/x"})", 0644);
  ASSERT_EQ(::chown(file().c_str(), 65534, 65534), 0);
  EXPECT_TRUE(Refused(Load(), "is owned by uid 65534"));
  ASSERT_EQ(::chown(file().c_str(), 0, 0), 0);
  ASSERT_TRUE(Load().ok());
  ASSERT_EQ(::chmod(dir().c_str(), 0777), 0);
  EXPECT_TRUE(Refused(Load(), "its directory is writable by its group or by others"));
  ASSERT_EQ(::chmod(dir().c_str(), 0755), 0);
  ASSERT_EQ(::chown(dir().c_str(), 1000, 0), 0);
  EXPECT_TRUE(Refused(Load(), "its directory is owned by uid 1000"));
}

TEST_F(NodeFileTest, SymlinksFifosAndHugeFilesAreRefusedWithoutBlocking) {
  Write("{}");
  const std::string real = file() + ".real";
  fs::rename(file(), real);
  fs::create_symlink(real, file());
  EXPECT_TRUE(Refused(Load(), "symlink"));
  fs::remove(file());
  ASSERT_EQ(::mkfifo(file().c_str(), 0600), 0);
  EXPECT_TRUE(Refused(Load(), "is a FIFO, not a regular file"));  // returns: O_NONBLOCK
  fs::remove(file());
  Write("{\"stateDir\": \"/" + std::string(kMaxNodeConfigBytes, 'a') + "\"}");
  EXPECT_TRUE(Refused(Load(), "the limit is 65536 bytes"));
}

TEST_F(NodeFileTest, EveryProblemWithItsPath) {
  Write(R"({"hostRoot": "host", "stateDir": 5, "checkAllocation": "no", "statedir": "/x",
            "kubeletRootdir": "/y", "draDriver": "../../etc", "deviceInfoDir": "devinfo"})");
  auto node = Load();
  ASSERT_FALSE(node.ok());
  EXPECT_EQ(CniCodeOf(node.status()), kErrInvalidNetConf);
  EXPECT_EQ(node.status().message(), "invalid node configuration " + file());
  const std::string d = node.status().details();
  EXPECT_NE(d.find("hostRoot: must be an absolute path, got \"host\""), std::string::npos) << d;
  EXPECT_NE(d.find("stateDir: must be a string, got number 5"), std::string::npos) << d;
  EXPECT_NE(d.find("checkAllocation: must be a boolean"), std::string::npos) << d;
  EXPECT_NE(d.find("deviceInfoDir: must be an absolute path"), std::string::npos) << d;
  // A path out of <kubeletRootDir>/plugins is not a driver name.
  EXPECT_NE(d.find("draDriver: not a DRA driver name"), std::string::npos) << d;
  EXPECT_NE(d.find("statedir: unknown key; did you mean \"stateDir\"?"), std::string::npos) << d;
  EXPECT_NE(d.find("kubeletRootdir: unknown key; did you mean \"kubeletRootDir\"?"),
            std::string::npos)
      << d;
  Write("[1]");
  EXPECT_TRUE(Refused(Load(), "must be a JSON object"));
}

// The adversary: the NAD author. A host path in the network configuration is accepted only
// when it is the node's own; any other value is refused naming the key and the node file.
TEST(NodeSettingsInNad, OnlyTheNodesOwnValuesAreAccepted) {
  NodeSettings node = DefaultNodeSettings();
  node.source = "/etc/hcashare/cni.json";
  node.host_root = "/host";
  node.log_file = "/var/log/hcashare-cni.log";
  const struct {
    const char* key;
    const char* same;   // the node's value, written differently or not
    const char* other;  // a tenant's choice
  } cases[] = {
      {"hostRoot", "/host/", "/var/lib/kubelet/pods/x/volumes/kubernetes.io~empty-dir/t"},
      {"stateDir", "/var/lib/cni/hcashare", "/tmp/state"},
      {"kubeletRootDir", "/var/lib//kubelet", "/tmp/kubelet"},
      {"poolInfoDir", "/var/run/hcashare/pools", "/tmp/pools"},
      {"logFile", "/var/log/hcashare-cni.log", "/etc/cron.d/x"},
  };
  for (const auto& c : cases) {
    const std::string same = std::string(kNad) + ", \"" + c.key + "\": \"" + c.same + "\"}";
    EXPECT_TRUE(ParseNetConf(same, Verb::kAdd, node).ok()) << c.key;
    const std::string other = std::string(kNad) + ", \"" + c.key + "\": \"" + c.other + "\"}";
    auto refused = ParseNetConf(other, Verb::kAdd, node);
    ASSERT_FALSE(refused.ok()) << c.key;
    EXPECT_EQ(CniCodeOf(refused.status()), kErrInvalidNetConf);
    const std::string d = refused.status().details();
    EXPECT_EQ(d.rfind(std::string(c.key) + ": \"" + c.other + "\" is not this node's setting", 0),
              0u)
        << d;
    EXPECT_NE(d.find("from /etc/hcashare/cni.json"), std::string::npos) << d;
    EXPECT_NE(d.find(std::string("remove ") + c.key), std::string::npos) << d;
  }
  // A log file the node does not set cannot be set by the NAD either.
  node.log_file.reset();
  auto log =
      ParseNetConf(std::string(kNad) + R"(, "logFile": "/var/log/x.log"})", Verb::kDel, node);
  ASSERT_FALSE(log.ok());
  EXPECT_NE(log.status().details().find("(unset,"), std::string::npos) << log.status().details();
}

TEST(NodeSettingsInNad, BuiltInDefaultsAreNamedAsSuch) {
  auto refused = ParseNetConf(std::string(kNad) + R"(, "hostRoot": "/x"})", Verb::kAdd);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().details().find(
                "(\"/\", the built-in default; there is no /etc/hcashare/cni.json)"),
            std::string::npos)
      << refused.status().details();
}

}  // namespace
}  // namespace hcashare::cni
