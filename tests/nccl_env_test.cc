// The environment Allocate and the CDI spec set. NCCL_IB_HCA (issue 15): a resource with
// `setNcclIbHca` gets the granted RDMA devices as an exact match ('=' prefix; without it
// "mlx5_1" also selects mlx5_10..19), in NUMA order; a resource without the key gets no
// NCCL_IB_HCA. Names per resource (issue 25): HCASHARE_RDMA_DEVICES_<RESOURCE>, distinct
// for every two resources of a config; the generic HCASHARE_RDMA_DEVICES only where it
// cannot conflict (one resource) or with `setRdmaDevicesEnv`.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "common/env_names.h"
#include "common/host.h"
#include "common/temp_dir.h"
#include "config/config.h"
#include "deviceplugin/allocation.h"
#include "deviceplugin/cdi.h"
#include "node/discovery.h"
#include "node/pool.h"
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
    node::PoolState pool = node::BuildPool(rc, node::Discoverer(*host_).Scan());
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
  EXPECT_EQ(envs.at(RdmaDevicesEnvName("rdma/a")), "mlx5_1,mlx5_10,mlx5_0") << "pool order";
  // The only resource of its config: the generic name too (it cannot conflict).
  EXPECT_EQ(envs.at(kRdmaDevicesEnv), "mlx5_1,mlx5_10,mlx5_0");
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

TEST(EnvNamesTest, SuffixIsTheFullNameUpperCasedWithUnderscores) {
  EXPECT_EQ(RdmaDevicesEnvName("rdma/hca_shared_devices_a"),
            "HCASHARE_RDMA_DEVICES_RDMA_HCA_SHARED_DEVICES_A");
  // A DNS prefix's '-' and '.' too: the name stays one a shell can expand.
  EXPECT_EQ(RdmaDevicesEnvName("my-org.example.com/Vf1"),
            "HCASHARE_RDMA_DEVICES_MY_ORG_EXAMPLE_COM_VF1");
  EXPECT_TRUE(IsRdmaDevicesEnvName("HCASHARE_RDMA_DEVICES"));
  EXPECT_TRUE(IsRdmaDevicesEnvName("HCASHARE_RDMA_DEVICES_RDMA_A"));
  EXPECT_FALSE(IsRdmaDevicesEnvName("HCASHARE_RDMA_DEVICESX"));
  EXPECT_FALSE(IsRdmaDevicesEnvName("HCASHARE_RDMA_DEVICES_"));
}

// Two resources whose variables would have one name: an error at the later entry.
TEST(EnvNamesTest, CollidingNamesAreAConfigErrorWithTheirPath) {
  const char* sel = R"("selectors": {"vendors": ["15b3"]})";
  const std::vector<std::pair<std::string, std::string>> pairs = {
      // "x.a/b" and "x/a_b": both X_A_B.
      {R"({"resourcePrefix": "x.a", "resourceName": "b", "rdmaHcaMax": 1, )",
       R"({"resourcePrefix": "x", "resourceName": "a_b", "rdmaHcaMax": 1, )"},
      // Names that differ only in case.
      {R"({"resourceName": "hca", "rdmaHcaMax": 1, )",
       R"({"resourceName": "HCA", "mode": "exclusive", )"}};
  for (const auto& [a, b] : pairs) {
    auto cfg =
        config::ParseConfig(std::string(R"({"configList": [)") + a + sel + "}, " + b + sel + "}]}");
    ASSERT_EQ(cfg.errors.size(), 1u) << config::FormatIssues(cfg);
    EXPECT_EQ(cfg.errors[0].path, "$.configList[1].resourceName");
    EXPECT_THAT(cfg.errors[0].message, HasSubstr("$.configList[0]"));
    EXPECT_THAT(cfg.errors[0].message, HasSubstr("HCASHARE_RDMA_DEVICES_"));
  }
}

// setRdmaDevicesEnv: on by default for a single resource only; explicit values win; two
// resources that set it (or setNcclIbHca) are warned about, at the later one's key.
TEST(EnvNamesTest, GenericNameOnlyWhereItCannotConflict) {
  const std::string a =
      R"({"resourceName": "a", "rdmaHcaMax": 1, "selectors": {"vendors": ["15b3"]})";
  const std::string b =
      R"({"resourceName": "b", "rdmaHcaMax": 1, "selectors": {"vendors": ["15b3"]})";
  auto one = config::ParseConfig(R"({"configList": [)" + a + "}]}");
  ASSERT_TRUE(one.ok()) << config::FormatIssues(one);
  EXPECT_TRUE(one.config->resources[0].set_rdma_devices_env);
  auto null = config::ParseConfig(R"({"configList": [)" + a + R"(, "setRdmaDevicesEnv": null}]})");
  ASSERT_TRUE(null.ok()) << config::FormatIssues(null);
  EXPECT_TRUE(null.config->resources[0].set_rdma_devices_env) << "null is the default";
  auto off = config::ParseConfig(R"({"configList": [)" + a + R"(, "setRdmaDevicesEnv": false}]})");
  ASSERT_TRUE(off.ok()) << config::FormatIssues(off);
  EXPECT_FALSE(off.config->resources[0].set_rdma_devices_env);
  auto two = config::ParseConfig(R"({"configList": [)" + a + "}, " + b + "}]}");
  ASSERT_TRUE(two.ok()) << config::FormatIssues(two);
  EXPECT_FALSE(two.config->resources[0].set_rdma_devices_env);
  EXPECT_FALSE(two.config->resources[1].set_rdma_devices_env);
  EXPECT_TRUE(two.warnings.empty()) << config::FormatIssues(two);
  EXPECT_EQ(RdmaDevicesEnvNames(two.config->resources[1]),
            std::vector<std::string>{"HCASHARE_RDMA_DEVICES_RDMA_B"});
  auto both = config::ParseConfig(R"({"configList": [)" + a +
                                  R"(, "setRdmaDevicesEnv": true, "setNcclIbHca": true}, )" + b +
                                  R"(, "setRdmaDevicesEnv": true, "setNcclIbHca": true}]})");
  ASSERT_TRUE(both.ok()) << config::FormatIssues(both);
  EXPECT_EQ(RdmaDevicesEnvNames(both.config->resources[1]),
            (std::vector<std::string>{"HCASHARE_RDMA_DEVICES_RDMA_B", "HCASHARE_RDMA_DEVICES"}));
  ASSERT_EQ(both.warnings.size(), 2u) << config::FormatIssues(both);
  EXPECT_EQ(both.warnings[0].path, "$.configList[1].setRdmaDevicesEnv");
  EXPECT_THAT(both.warnings[0].message, HasSubstr("also set by $.configList[0]"));
  EXPECT_EQ(both.warnings[1].path, "$.configList[1].setNcclIbHca");
}

// The CDI spec's devices set the variables Allocate sets.
TEST_F(NcclEnvTest, CdiSpecSetsTheResourcesOwnVariables) {
  auto cfg = config::ParseConfig(R"({"configList": [
      {"resourceName": "a", "rdmaHcaMax": 4, "selectors": {"rdmaDevices": ["mlx5_0"]}},
      {"resourceName": "x", "mode": "exclusive", "selectors": {"rdmaDevices": ["mlx5_1"]}}]})");
  ASSERT_TRUE(cfg.ok()) << config::FormatIssues(cfg);
  const node::Inventory inv = node::Discoverer(*host_).Scan();
  std::vector<std::string> envs;
  for (const auto& rc : cfg.config->resources) {
    const auto spec = nlohmann::json::parse(CdiSpecJson(rc, node::BuildPool(rc, inv)));
    for (const auto& d : spec["devices"]) {
      for (const auto& e : d["containerEdits"]["env"]) envs.push_back(e);
    }
  }
  EXPECT_EQ(envs, (std::vector<std::string>{"HCASHARE_RDMA_DEVICES_RDMA_A=mlx5_0",
                                            "HCASHARE_RDMA_DEVICES_RDMA_X=mlx5_1"}));
}

TEST(NcclEnvConfigTest, NonBooleanIsAnErrorWithItsPath) {
  auto cfg = Parse(R"({"resourceName": "a", "rdmaHcaMax": 4, "setNcclIbHca": "yes",
                       "selectors": {"vendors": ["15b3"]}})");
  ASSERT_FALSE(cfg.ok());
  EXPECT_THAT(config::FormatIssues(cfg), HasSubstr("$.configList[0].setNcclIbHca"));
}

}  // namespace
}  // namespace hcashare::dp
