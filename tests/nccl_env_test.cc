// NCCL_IB_HCA from Allocate (issue 15): a resource with `setNcclIbHca` gets the granted RDMA
// devices as an exact match ('=' prefix; without it "mlx5_1" also selects mlx5_10..19),
// in NUMA order; a resource without the key gets no NCCL_IB_HCA.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "common/host.h"
#include "common/temp_dir.h"
#include "config/config.h"
#include "deviceplugin/allocation.h"
#include "deviceplugin/discovery.h"
#include "deviceplugin/pool.h"
#include "testing/sim_node.h"

namespace hcashare::dp {
namespace {

using ::testing::HasSubstr;

config::ParseOutcome Parse(const std::string& entry) {
  return config::ParseConfig(R"({"configList": [)" + entry + "]}");
}

class NcclEnvTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // Address order mlx5_1, mlx5_10, mlx5_0; NUMA order mlx5_10 (0), mlx5_1 (1), mlx5_0 (?).
    ASSERT_TRUE(sim_.AddPciFunction(fake::SimNode::IbHca("0000:1a:00.0", "ib1", "mlx5_1", 1)).ok());
    ASSERT_TRUE(
        sim_.AddPciFunction(fake::SimNode::IbHca("0000:3b:00.0", "ib10", "mlx5_10", 0)).ok());
    ASSERT_TRUE(
        sim_.AddPciFunction(fake::SimNode::IbHca("0000:86:00.0", "ib0", "mlx5_0", -1)).ok());
  }
  // The envs of an Allocate of `id` from resource `entry`.
  google::protobuf::Map<std::string, std::string> Envs(const std::string& entry,
                                                       const std::string& id) {
    auto cfg = Parse(entry);
    EXPECT_TRUE(cfg.ok()) << config::FormatIssues(cfg);
    if (!cfg.ok()) return {};
    const config::ResourceConfig& rc = cfg.config->resources.at(0);
    PoolState pool = BuildPool(rc, Discoverer(*host_).Scan());
    v1beta1::AllocateRequest req;
    req.add_container_requests()->add_devices_ids(id);
    auto resp = BuildAllocateResponse(rc, pool, req, *host_);
    EXPECT_TRUE(resp.ok()) << resp.status().ToString();
    return resp.ok() ? resp->container_responses(0).envs()
                     : google::protobuf::Map<std::string, std::string>{};
  }

  TempDir tmp_;
  fake::SimNode sim_{tmp_.path()};
  std::unique_ptr<Host> host_ = NewRootedHost(tmp_.path());
};

TEST_F(NcclEnvTest, SharedPoolSetsAnExactMatchInNumaOrder) {
  auto envs = Envs(R"({"resourceName": "a", "rdmaHcaMax": 4, "setNcclIbHca": true,
                       "selectors": {"vendors": ["15b3"]}})",
                   "0");
  EXPECT_EQ(envs.at(kNcclIbHcaEnv), "=mlx5_10,mlx5_1,mlx5_0");
  EXPECT_EQ(envs.at(kRdmaDevicesEnv), "mlx5_1,mlx5_10,mlx5_0") << "pool order, unchanged";
}

TEST_F(NcclEnvTest, ExclusivePoolSetsTheGrantedDevice) {
  auto envs = Envs(R"({"resourceName": "x", "mode": "exclusive", "setNcclIbHca": true,
                       "selectors": {"vendors": ["15b3"]}})",
                   "0000:1a:00.0");
  EXPECT_EQ(envs.at(kNcclIbHcaEnv), "=mlx5_1");
}

TEST_F(NcclEnvTest, NotSetWithoutTheKey) {
  auto envs =
      Envs(R"({"resourceName": "a", "rdmaHcaMax": 4, "selectors": {"vendors": ["15b3"]}})", "0");
  EXPECT_EQ(envs.count(kNcclIbHcaEnv), 0u);
}

TEST(NcclEnvConfigTest, NonBooleanIsAnErrorWithItsPath) {
  auto cfg = Parse(R"({"resourceName": "a", "rdmaHcaMax": 4, "setNcclIbHca": "yes",
                       "selectors": {"vendors": ["15b3"]}})");
  ASSERT_FALSE(cfg.ok());
  EXPECT_THAT(config::FormatIssues(cfg), HasSubstr("$.configList[0].setNcclIbHca"));
}

}  // namespace
}  // namespace hcashare::dp
