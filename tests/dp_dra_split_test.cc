// Issue 27: a function is offered through one API only. The device plugin serves no
// resource with "api": "dra" (no socket, no registration), and its pools refuse the
// functions a DRA resource offers, naming that resource; a resource that moves between the
// APIs on reload gains or loses its server. The rule itself (node::DraOwnedFunctions,
// node::RefuseDraOwned) is tested on a plain Inventory first.
#include <filesystem>
#include <set>
#include <string>

#include <gtest/gtest.h>

#include "node/dra_owned.h"
#include "node/pool.h"
#include "tests/server_fixture.h"
#include "tests/test_util.h"

namespace hcashare::dp {
namespace {

namespace fs = std::filesystem;

// hca_a (device plugin, exclusive) selects both HCAs; hca_dra (`api`) selects mlx5_1 only.
std::string SplitConfig(const std::string& api) {
  return R"({"configList": [
    {"resourceName": "hca_a", "mode": "exclusive", "selectors": {"ifNames": ["ib0", "ib1"]}},
    {"resourceName": "hca_dra", "mode": "exclusive", "api": ")" +
         api + R"(", "selectors": {"rdmaDevices": ["mlx5_1"]}}]})";
}

// An inventory of two plain functions.
node::Inventory TwoFunctions() {
  node::Inventory inv;
  for (const char* a : {"0000:3b:00.0", "0000:86:00.0"}) {
    node::PciFunction fn;
    fn.address = a;
    fn.vendor = "15b3";
    fn.rdma.push_back({std::string("mlx5_") + a[5], {}, {}, {}});
    inv.functions.push_back(fn);
    inv.present.insert(a);
  }
  return inv;
}

TEST(DraOwnedTest, FirstDraResourceOwnsAndDevicePluginPoolsRefuse) {
  const config::PluginConfig cfg = ParseOrDie(R"({"configList": [
    {"resourceName": "dp", "mode": "exclusive", "selectors": {"vendors": ["15b3"]}},
    {"resourceName": "dra_one", "mode": "exclusive", "api": "dra",
     "selectors": {"pciAddresses": ["0000:86:00.0"]}},
    {"resourceName": "dra_all", "rdmaHcaMax": 4, "api": "dra",
     "selectors": {"vendors": ["15b3"]}}]})");
  const node::Inventory inv = TwoFunctions();
  const node::DraOwners owners = node::DraOwnedFunctions(cfg, inv);
  EXPECT_EQ(owners,
            (node::DraOwners{{"0000:3b:00.0", "rdma/dra_all"}, {"0000:86:00.0", "rdma/dra_one"}}));

  node::PoolState pool = node::BuildPool(cfg.resources[0], inv);
  ASSERT_EQ(pool.hcas.size(), 2u);
  node::RefuseDraOwned(owners, &pool);
  EXPECT_TRUE(pool.hcas.empty());
  ASSERT_EQ(pool.refused.size(), 2u);
  EXPECT_EQ(pool.refused[0].address, "0000:3b:00.0");
  EXPECT_EQ(pool.refused[0].reason, "offered through DRA by resource rdma/dra_all");
  EXPECT_EQ(pool.refused[1].reason, "offered through DRA by resource rdma/dra_one");
  EXPECT_EQ(node::DevicePluginResources(cfg.resources).size(), 1u);
}

TEST(DraOwnedTest, NoDraResourceChangesNothing) {
  const config::PluginConfig cfg = ParseOrDie(
      R"({"configList": [{"resourceName": "dp", "rdmaHcaMax": 2, "selectors": {"vendors": ["15b3"]}}]})");
  const node::Inventory inv = TwoFunctions();
  EXPECT_TRUE(node::DraOwnedFunctions(cfg, inv).empty());
  node::PoolState pool = node::BuildPool(cfg.resources[0], inv);
  const node::PoolState before = pool;
  node::RefuseDraOwned(node::DraOwnedFunctions(cfg, inv), &pool);
  EXPECT_EQ(pool, before);
}

using DraSplitServerTest = ServerTest;

TEST_F(DraSplitServerTest, DraResourceGetsNoServerAndItsFunctionIsRefused) {
  ASSERT_TRUE(kubelet_->Start().ok());
  daemon::ControlLoop* m = StartManager(SplitConfig("dra"));
  ASSERT_TRUE(WaitListed(kResA, 1));
  EXPECT_EQ(kubelet_->View(kResA).devices[0].id(), "0000:3b:00.0");
  std::set<std::string> served;
  for (const auto& [name, info] : m->Servers()) served.insert(name);
  EXPECT_EQ(served, (std::set<std::string>{kResA}));
  EXPECT_EQ(m->SnapshotOf("rdma/hca_dra"), nullptr);
  EXPECT_FALSE(fs::exists(kubelet_->DevicePluginDir() + "/hca_dra.sock"));
  EXPECT_EQ(kubelet_->View("rdma/hca_dra").registrations, 0);
  auto snap = m->SnapshotOf(kResA);
  ASSERT_NE(snap, nullptr);
  ASSERT_EQ(snap->pool.refused.size(), 1u);
  EXPECT_EQ(snap->pool.refused[0].address, "0000:86:00.0");
  EXPECT_EQ(snap->pool.refused[0].reason, "offered through DRA by resource rdma/hca_dra");
}

TEST_F(DraSplitServerTest, ResourceMovingBetweenApisGainsAndLosesItsServer) {
  ASSERT_TRUE(kubelet_->Start().ok());
  daemon::ControlLoop* m = StartManager(SplitConfig("dra"));
  ASSERT_TRUE(WaitListed(kResA, 1));
  // To the device plugin: both resources offer mlx5_1 (device-plugin pools may overlap).
  m->Reload(ParseOrDie(SplitConfig("devicePlugin")));
  ASSERT_TRUE(WaitListed("rdma/hca_dra", 1));
  ASSERT_TRUE(WaitListed(kResA, 2));
  // And back: its server goes, and hca_a gives the function up again.
  m->Reload(ParseOrDie(SplitConfig("dra")));
  ASSERT_TRUE(WaitListed(kResA, 1));
  EXPECT_TRUE(testing::WaitUntil(
      [&] { return !fs::exists(kubelet_->DevicePluginDir() + "/hca_dra.sock"); }));
  EXPECT_TRUE(testing::WaitUntil([&] { return m->SnapshotOf("rdma/hca_dra") == nullptr; }));
}

}  // namespace
}  // namespace hcashare::dp
