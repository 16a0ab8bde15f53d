// Tests for `hcashare discover`: per resource the selected functions, the advertised
// devices, the exact Allocate answer, and — above all — why every other device was left
// out (the first selector or requirement), on the demo node and small fixtures.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>

#include <nlohmann/json.hpp>

#include "common/env_names.h"
#include "common/host.h"
#include "common/temp_dir.h"
#include "deviceplugin/allocation.h"
#include "nl/rdma_netlink.h"
#include "testing/fake_rdma_system.h"
#include "testing/sim_node.h"
#include "tests/cli_fixtures.h"
#include "tools/allocate_json.h"
#include "tools/discover_report.h"
#include "tools/exclusion.h"
#include "tools/snapshot_source.h"

namespace hcashare::cli {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

constexpr const char* kMellanoxExample = R"({
  "configList": [
    {"resourceName": "hca_shared_devices_a", "rdmaHcaMax": 4, "devices": ["ib0", "ib1"]},
    {"resourceName": "hca_shared_devices_b", "rdmaHcaMax": 2,
     "selectors": {"vendors": ["15b3"], "deviceIDs": ["1017"], "ifNames": ["ib3", "ib4"]}}]})";

config::PluginConfig Parse(const std::string& text) {
  config::ParseOutcome out = config::ParseConfig(text);
  EXPECT_TRUE(out.ok()) << config::FormatIssues(out);
  return out.config.value_or(config::PluginConfig{});
}

// The demo node (four HCAs, an Intel NIC without RDMA, a SATA controller).
struct DemoHost {
  TempDir tmp;
  std::string root = tmp.path() + "/host";
  fake::SimNode node{root};
  std::unique_ptr<Host> host = NewRootedHost(root);
  fake::FakeRdmaSystem rdma{RdmaNetnsMode::kShared};
  DemoHost() { EXPECT_TRUE(node.PopulateDemo().ok()); }
  DiscoverReport Run(const std::string& config) {
    return BuildDiscoverReport(Parse(config), ReadNodeSnapshot(*host, rdma), /*use_cdi=*/false);
  }
};

const ExcludedDevice* Excluded(const ResourceReport& r, const std::string& address) {
  for (const auto& e : r.excluded) {
    if (e.address == address) return &e;
  }
  return nullptr;
}

std::vector<std::string> Selected(const ResourceReport& r) {
  std::vector<std::string> out;
  for (const auto& h : r.pool.hcas) out.push_back(h.address);
  return out;
}

TEST(DiscoverTest, ExplainsEveryExclusion) {
  DemoHost h;
  const DiscoverReport rep = h.Run(kMellanoxExample);
  EXPECT_EQ(rep.netns_mode, "shared");
  ASSERT_EQ(rep.resources.size(), 2u);

  const ResourceReport& a = rep.resources[0];
  EXPECT_THAT(Selected(a), ElementsAre("0000:3b:00.0", "0000:86:00.0"));
  const ExcludedDevice* ib3 = Excluded(a, "0000:af:00.0");
  ASSERT_NE(ib3, nullptr);
  EXPECT_EQ(ib3->why.rule, "selectors.ifNames");
  EXPECT_EQ(ib3->why.detail, "has ib3; wants ib0, ib1");
  EXPECT_EQ(ib3->label, "mlx5_2 ib3");
  const ExcludedDevice* eno1 = Excluded(a, "0000:18:00.0");
  ASSERT_NE(eno1, nullptr);
  EXPECT_EQ(eno1->why.rule, "requirement");
  EXPECT_THAT(eno1->why.detail, HasSubstr("no RDMA device"));
  EXPECT_EQ(Excluded(a, "0000:00:17.0"), nullptr);  // SATA: not a network device

  // Resource b: ConnectX-6 (101b) functions fail deviceIDs before ifNames is looked at.
  const ResourceReport& b = rep.resources[1];
  EXPECT_THAT(Selected(b), ElementsAre("0000:af:00.0", "0000:af:00.1"));
  const ExcludedDevice* ib0 = Excluded(b, "0000:3b:00.0");
  ASSERT_NE(ib0, nullptr);
  EXPECT_EQ(ib0->why.rule, "selectors.deviceIDs");
  EXPECT_EQ(ib0->why.detail, "has 101b; wants 1017");
}

TEST(DiscoverTest, AdvertisedDevicesAndExactAllocate) {
  DemoHost h;
  const DiscoverReport rep = h.Run(kMellanoxExample);
  const ResourceReport& a = rep.resources[0];
  ASSERT_EQ(a.devices.size(), 4u);
  EXPECT_EQ(a.devices[3].id(), "3");
  EXPECT_EQ(a.devices[0].topology().nodes_size(), 2);  // NUMA 0 and 1
  ASSERT_EQ(a.allocations.size(), 1u);                 // one topology: one Allocate
  ASSERT_TRUE(a.allocations[0].status.ok()) << a.allocations[0].status.ToString();
  // Exactly what the daemon's Allocate builds for ID "0".
  v1beta1::AllocateRequest req;
  req.add_container_requests()->add_devices_ids("0");
  auto want = dp::BuildAllocateResponse(a.rc, a.pool, req, *h.host);
  ASSERT_TRUE(want.ok());
  EXPECT_EQ(AllocateResponseJson(a.allocations[0].response), AllocateResponseJson(*want));
  const auto j = AllocateResponseJson(a.allocations[0].response);
  EXPECT_EQ(j["container_responses"][0]["envs"][RdmaDevicesEnvName(a.rc.FullName())],
            "mlx5_0,mlx5_1");
  EXPECT_EQ(j["container_responses"][0]["devices"].back()["host_path"], "/dev/infiniband/rdma_cm");
}

TEST(DiscoverTest, TopologyAwarePoolAllocatesOncePerNode) {
  DemoHost h;
  const DiscoverReport rep = h.Run(R"({"configList": [{"resourceName": "numa", "rdmaHcaMax": 4,
      "topologyAware": true, "selectors": {"vendors": ["15b3"]}}]})");
  const ResourceReport& r = rep.resources[0];
  ASSERT_EQ(r.allocations.size(), 2u);
  EXPECT_THAT(r.allocations[0].ids, ElementsAre("0"));
  EXPECT_THAT(r.allocations[1].ids, ElementsAre("2"));
  const auto j = AllocateResponseJson(r.allocations[0].response);
  EXPECT_EQ(j["container_responses"][0]["envs"]["HCASHARE_RDMA_DEVICES_RDMA_NUMA"], "mlx5_0");
  ASSERT_EQ(r.excluded.size(), 1u);  // only the NIC without RDMA
  EXPECT_EQ(r.excluded[0].address, "0000:18:00.0");
}

TEST(DiscoverTest, FirstSelectorInReadmeOrder) {
  DemoHost h;
  // Both vendors and ifNames reject every HCA: vendors comes first.
  DiscoverReport rep = h.Run(R"({"configList": [{"resourceName": "x", "rdmaHcaMax": 1,
      "selectors": {"ifNames": ["ib9"], "vendors": ["8086"]}}]})");
  const ExcludedDevice* e = Excluded(rep.resources[0], "0000:3b:00.0");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->why.rule, "selectors.vendors");
  EXPECT_EQ(e->why.detail, "has 15b3; wants 8086");
  // An empty pool still advertises its IDs (Unhealthy), and Allocate is refused.
  ASSERT_EQ(rep.resources[0].devices.size(), 1u);
  EXPECT_EQ(rep.resources[0].devices[0].health(), "Unhealthy");
  ASSERT_EQ(rep.resources[0].allocations.size(), 1u);
  EXPECT_THAT(rep.resources[0].allocations[0].status.message(), HasSubstr("no usable RDMA HCA"));

  rep = h.Run(R"({"configList": [{"resourceName": "vfs", "mode": "exclusive",
      "selectors": {"isVF": true, "numaNodes": [1]}}]})");
  e = Excluded(rep.resources[0], "0000:86:00.0");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->why.rule, "selectors.isVF");
  EXPECT_EQ(e->why.detail, "has false; wants true");
}

TEST(DiscoverTest, RequirementsAndBlockedPools) {
  DemoHost h;
  fake::SimPciFunction no_uverbs = fake::SimNode::IbHca("0000:d8:00.0", "ib5", "mlx5_5", 1);
  no_uverbs.with_uverbs = false;
  ASSERT_TRUE(h.node.AddPciFunction(no_uverbs).ok());
  fake::SimPciFunction unbound = fake::SimNode::IbHca("0000:d9:00.0", "ib6", "mlx5_6", 1);
  unbound.driver = "";
  ASSERT_TRUE(h.node.AddPciFunction(unbound).ok());
  h.rdma.set_answer(RdmaNetnsMode::kExclusive);
  const DiscoverReport rep = h.Run(R"({"configList": [
      {"resourceName": "shared", "rdmaHcaMax": 1, "selectors": {"vendors": ["15b3"]}},
      {"resourceName": "excl", "mode": "exclusive", "selectors": {"vendors": ["15b3"]}}]})");
  EXPECT_EQ(rep.netns_mode, "exclusive");
  const ResourceReport& shared = rep.resources[0];
  EXPECT_THAT(shared.pool.blocked_reason, HasSubstr("rdma system set netns shared"));
  EXPECT_THAT(shared.devices, IsEmpty());
  const ResourceReport& excl = rep.resources[1];
  EXPECT_EQ(excl.pool.hcas.size(), 4u);
  const ExcludedDevice* e = Excluded(excl, "0000:d8:00.0");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->why.rule, "requirement");
  EXPECT_THAT(e->why.detail, HasSubstr("is ib_uverbs loaded?"));
  e = Excluded(excl, "0000:d9:00.0");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->why.detail, "not bound to a driver");
  EXPECT_EQ(excl.allocations.size(), 2u);  // one per NUMA node
}

TEST(DiscoverTest, ScalableFunctionsOnlyInExclusivePools) {
  DemoHost h;
  fake::SimSubFunction sf;
  sf.name = "mlx5_core.sf.4";
  sf.parent = "0000:3b:00.0";
  sf.sfnum = 4;
  sf.netdevs = {"ib0s4"};
  sf.rdma_device = "mlx5_7";
  ASSERT_TRUE(h.node.AddSubFunction(sf).ok());
  const DiscoverReport rep = h.Run(R"({"configList": [{"resourceName": "s", "rdmaHcaMax": 1,
      "selectors": {"vendors": ["15b3"]}}]})");
  const ExcludedDevice* e = Excluded(rep.resources[0], "mlx5_core.sf.4");
  ASSERT_NE(e, nullptr);
  EXPECT_THAT(e->why.detail, HasSubstr("only by exclusive pools"));
}

// Soft-RoCE devices: selected by ifNames/linkTypes (shared or exclusive, ID = RDMA device
// name), never by PCI selectors; shown as not on PCI, with the virtual char devices.
TEST(DiscoverTest, SoftRoceDevicesBySelectorsOnly) {
  DemoHost h;
  ASSERT_TRUE(h.node.AddVirtualRdma({"rxe0", "veth0", ""}).ok());
  const DiscoverReport rep = h.Run(R"({"configList": [
      {"resourceName": "soft", "mode": "exclusive", "selectors": {"ifNames": ["veth0"]}},
      {"resourceName": "mlx", "rdmaHcaMax": 2, "selectors": {"vendors": ["15b3"]}},
      {"resourceName": "roce", "rdmaHcaMax": 2, "selectors": {"linkTypes": ["ether"]}}]})");
  EXPECT_THAT(Selected(rep.resources[0]), ElementsAre("rxe0"));
  ASSERT_EQ(rep.resources[0].devices.size(), 1u);
  EXPECT_EQ(rep.resources[0].devices[0].id(), "rxe0");
  const ExcludedDevice* e = Excluded(rep.resources[1], "rxe0");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->why.rule, "selectors.vendors");
  EXPECT_THAT(Selected(rep.resources[2]), ElementsAre("rxe0"));
  ASSERT_EQ(rep.resources[0].allocations.size(), 1u);
  const auto alloc = AllocateResponseJson(rep.resources[0].allocations[0].response).dump();
  EXPECT_THAT(alloc, HasSubstr("/dev/infiniband/uverbs4"));
  EXPECT_THAT(FormatDiscoverText(rep),
              HasSubstr("rxe0  rxe0  veth0  virtual, not on PCI  NUMA -1"));
  const auto j = DiscoverJson(rep);
  EXPECT_EQ(j["resources"][0]["selected"][0]["bus"], "virtual");
  EXPECT_TRUE(j["resources"][0]["selected"][0]["pci"].is_null());
  EXPECT_EQ(j["resources"][0]["selected"][0]["id"], "rxe0");
}

TEST(DiscoverTest, TextAndJson) {
  DemoHost h;
  const DiscoverReport rep = h.Run(kMellanoxExample);
  const std::string text = FormatDiscoverText(rep);
  EXPECT_THAT(text, HasSubstr("resource rdma/hca_shared_devices_a (shared, rdmaHcaMax 4)"));
  EXPECT_THAT(text, HasSubstr("IDs 0..3: NUMA 0,1, Healthy"));
  EXPECT_THAT(text, HasSubstr("Allocate [\"0\"]:"));
  EXPECT_THAT(text,
              HasSubstr("0000:af:00.0 (mlx5_2 ib3): selectors.ifNames: has ib3; wants ib0, ib1"));
  const auto j = DiscoverJson(rep);
  EXPECT_EQ(j["resources"][1]["excluded"][1]["rule"], "selectors.deviceIDs");
  EXPECT_EQ(j["resources"][0]["devices"].size(), 4u);
  EXPECT_TRUE(j["resources"][0]["blocked"].is_null());
}

TEST(DiscoverCliTest, RunsOnFixtureAndRejectsBadConfig) {
  DemoHost h;
  const std::string config = h.tmp.path() + "/config.json";
  std::ofstream(config) << kMellanoxExample;
  auto run = testing::RunHcashare(h.tmp, {"discover", "--config", config, "--host-root", h.root});
  EXPECT_EQ(run.code, 0) << run.output;
  EXPECT_THAT(run.output, HasSubstr("selectors.ifNames: has ib3; wants ib0, ib1"));
  auto json = testing::RunHcashare(
      h.tmp, {"discover", "--json", "--use-cdi", "--config", config, "--host-root", h.root});
  EXPECT_EQ(json.code, 0);
  auto doc = nlohmann::json::parse(json.output, nullptr, false);
  ASSERT_FALSE(doc.is_discarded()) << json.output;
  EXPECT_EQ(doc["resources"][0]["allocations"][0]["response"]["container_responses"][0]
               ["cdi_devices"][0]["name"],
            "rdma/hca_shared_devices_a=all");
  std::ofstream(config) << R"({"configList": [{"resourceName": "a"}]})";
  auto bad = testing::RunHcashare(h.tmp, {"discover", "--config", config});
  EXPECT_EQ(bad.code, 2);
  EXPECT_THAT(bad.output, HasSubstr("rdmaHcaMax"));
  auto help = testing::RunHcashare(h.tmp, {"discover", "--help"});
  EXPECT_EQ(help.code, 0);
  EXPECT_THAT(help.output, HasSubstr("--host-root"));
  auto validate = testing::RunHcashare(h.tmp, {"validate", "--host-root", h.root, config});
  EXPECT_EQ(validate.code, 2);
}

}  // namespace
}  // namespace hcashare::cli
