// Two device plugins on one host serving different kubelets (kubelet roots) must never share,
// and so never remove, each other's pool descriptions (issue 15): each root has its own
// directory, which the daemon and hcashare-cni derive the same way.
#include <gtest/gtest.h>

#include <string>

#include "cni/netconf.h"
#include "common/pool_info.h"
#include "common/strings.h"

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

// hcashare-cni looks where the daemon of its kubelet root writes, unless told otherwise.
TEST(PoolInfoDirTest, CniDerivesItFromKubeletRootDir) {
  const std::string base = R"({"cniVersion": "1.0.0", "name": "n", "type": "hcashare-cni",
                               "mode": "macvlan", "resourceName": "rdma/a")";
  auto plain = cni::ParseNetConf(base + "}", cni::Verb::kAdd);
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->pool_info_dir, kDefaultPoolInfoDir);
  auto other =
      cni::ParseNetConf(base + R"(, "kubeletRootDir": "/var/lib/kubelet2"})", cni::Verb::kAdd);
  ASSERT_TRUE(other.ok());
  EXPECT_EQ(other->pool_info_dir, PoolInfoDirFor("/var/lib/kubelet2"));
  auto given = cni::ParseNetConf(
      base + R"(, "kubeletRootDir": "/var/lib/kubelet2", "poolInfoDir": "/run/p"})",
      cni::Verb::kAdd);
  ASSERT_TRUE(given.ok());
  EXPECT_EQ(given->pool_info_dir, "/run/p");
}

}  // namespace
}  // namespace hcashare
