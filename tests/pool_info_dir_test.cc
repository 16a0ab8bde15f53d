// Two device plugins on one host serving different kubelets (kubelet roots) must never share,
// and so never remove, each other's pool descriptions (issue 15): each root has its own
// directory, which the daemon and hcashare-cni derive the same way.
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "cni/netconf.h"
#include "common/process.h"
#include "common/strings.h"
#include "common/temp_dir.h"
#include "interop/pool_info.h"
#include "tests/test_util.h"

namespace hcashare {
namespace {

TEST(PoolInfoDirTest, OneDirectoryPerKubeletRoot) {
  EXPECT_EQ(PoolInfoDirFor("/var/lib/kubelet"), kDefaultPoolInfoDir);
  EXPECT_EQ(PoolInfoDirFor("/var/lib/kubelet/"), kDefaultPoolInfoDir);
  EXPECT_EQ(PoolInfoDirFor("/var/lib/kubelet2"),
            std::string(kDefaultPoolInfoDir) + "/kubelet-_var_lib_kubelet2");
  // Reversible: '_' and '/' never map to the same name.
  EXPECT_NE(PoolInfoDirFor("/a_b"), PoolInfoDirFor("/a/b"));
  EXPECT_EQ(PathAsFileName("/a_b c"), "_a%5Fb%20c");
}

// hcashare-cni looks where the daemon of its kubelet root writes, unless the node file
// says otherwise (cni/node_config.h).
TEST(PoolInfoDirTest, CniDerivesItFromKubeletRootDir) {
  EXPECT_EQ(cni::DefaultNodeSettings().pool_info_dir, kDefaultPoolInfoDir);
  auto other = cni::ParseNodeSettings(R"({"kubeletRootDir": "/var/lib/kubelet2"})", "node");
  ASSERT_TRUE(other.ok());
  EXPECT_EQ(other->pool_info_dir, PoolInfoDirFor("/var/lib/kubelet2"));
  auto given = cni::ParseNodeSettings(
      R"({"kubeletRootDir": "/var/lib/kubelet2", "poolInfoDir": "/run/p"})", "node");
  ASSERT_TRUE(given.ok());
  EXPECT_EQ(given->pool_info_dir, "/run/p");
  // The network configuration carries the node's.
  const std::string nad = R"({"cniVersion": "1.0.0", "name": "n", "type": "hcashare-cni",
                              "mode": "macvlan", "resourceName": "rdma/a"})";
  auto conf = cni::ParseNetConf(nad, cni::Verb::kAdd, *given);
  ASSERT_TRUE(conf.ok());
  EXPECT_EQ(conf->node.pool_info_dir, "/run/p");
}

// The daemon picks the same directory for its --kubelet-root-dir when --pool-info-dir is not
// given (an invalid config stops it before it writes anything).
TEST(PoolInfoDirTest, DaemonDerivesItFromItsKubeletRoot) {
  TempDir tmp;
  const std::string config = tmp.path() + "/config.json";
  std::ofstream(config) << "{}";
  const std::string root = tmp.path() + "/kubelet";
  auto p =
      Subprocess::Spawn({testing::BinDir() + "/hcashare-device-plugin", "--kubelet-root-dir", root,
                         "--host-root", tmp.path(), "--config", config, "--log-format", "json"},
                        tmp.path() + "/out.log");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  auto code = p->Wait(std::chrono::milliseconds(10000));
  ASSERT_TRUE(code.ok());
  EXPECT_EQ(*code, 2);
  std::istringstream lines(testing::ReadTextFile(tmp.path() + "/out.log"));
  std::string line, dir;
  while (std::getline(lines, line)) {
    auto rec = nlohmann::json::parse(line, nullptr, false);
    if (rec.is_object() && rec.value("msg", "") == "starting hcashare-device-plugin") {
      dir = rec.value("pool_info_dir", "");
    }
  }
  EXPECT_EQ(dir, PoolInfoDirFor(root));
}

}  // namespace
}  // namespace hcashare
