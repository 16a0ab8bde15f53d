// Tests for NUMA topology and exclusive pools: TopologyInfo in the ListAndWatch device list,
// NUMA-aligned Allocate answers, topology-aware preferred allocations, exclusive Allocate
// (with the SR-IOV style PCIDEVICE_* environment) and exclusive in-use tracking in BuildPool.
// The isVF/pfNames selectors, VF discovery and the device-info files are in vf_test.cc.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "common/env_names.h"
#include "common/host.h"
#include "common/temp_dir.h"
#include "deviceplugin/allocation.h"
#include "deviceplugin/device_info.h"
#include "node/discovery.h"
#include "node/pool.h"
#include "node/selectors.h"
#include "testing/sim_node.h"
#include "tests/support/dp_functions.h"

namespace hcashare::dp {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::SizeIs;
using ::testing::UnorderedElementsAre;

namespace fs = std::filesystem;

using namespace node::testfns;  // Hca, Shared, Exclusive, Pf, Vf

// A pool holding `fns` (sorted by address, as BuildPool keeps them).
node::PoolState PoolOf(std::vector<node::PciFunction> fns) {
  node::PoolState pool;
  pool.hcas = std::move(fns);
  std::sort(
      pool.hcas.begin(), pool.hcas.end(),
      [](const node::PciFunction& a, const node::PciFunction& b) { return a.address < b.address; });
  return pool;
}

// Two HCAs on NUMA node 0 and two on node 1.
node::PoolState TwoNodePool() {
  return PoolOf({Hca("0000:3b:00.0", 0, "mlx5_0"), Hca("0000:3b:00.1", 0, "mlx5_1"),
                 Hca("0000:86:00.0", 1, "mlx5_2"), Hca("0000:86:00.1", 1, "mlx5_3")});
}

// The NUMA node IDs of a device's TopologyInfo (empty when it has none).
std::vector<int64_t> Nodes(const v1beta1::Device& d) {
  std::vector<int64_t> out;
  if (!d.has_topology()) return out;
  for (const auto& n : d.topology().nodes()) out.push_back(n.id());
  return out;
}

std::vector<std::string> Ids(const std::vector<v1beta1::Device>& devs) {
  std::vector<std::string> out;
  for (const auto& d : devs) out.push_back(d.id());
  return out;
}

std::vector<std::string> Range(int n) {
  std::vector<std::string> out;
  for (int i = 0; i < n; ++i) out.push_back(std::to_string(i));
  return out;
}

// ---------------------------------------------------------------------------------------
// DeviceList topology: shared pools without topologyAware

// Every ID of a non-aware pool carries all of the pool's NUMA nodes.
TEST(SharedTopologyTest, EveryIdListsAllPoolNodes) {
  auto devs = DeviceList(Shared(4), TwoNodePool());
  ASSERT_THAT(Ids(devs), ElementsAre("0", "1", "2", "3"));
  for (const auto& d : devs) {
    EXPECT_EQ(d.health(), "Healthy") << d.id();
    EXPECT_THAT(Nodes(d), ElementsAre(0, 1)) << d.id();
  }
}

// One HCA of unknown NUMA node drops TopologyInfo from every ID.
TEST(SharedTopologyTest, UnknownNumaDropsTopology) {
  node::PoolState pool = TwoNodePool();
  pool.hcas[2].numa_node = -1;
  auto devs = DeviceList(Shared(4), pool);
  ASSERT_THAT(devs, SizeIs(4));
  for (const auto& d : devs) {
    EXPECT_FALSE(d.has_topology()) << d.id();
    EXPECT_EQ(d.health(), "Healthy") << d.id();
  }
}

// excludeTopology drops TopologyInfo from every ID.
TEST(SharedTopologyTest, ExcludeTopologyDropsTopology) {
  for (bool aware : {false, true}) {
    config::ResourceConfig rc = Shared(4, aware);
    rc.exclude_topology = true;
    auto devs = DeviceList(rc, TwoNodePool());
    ASSERT_THAT(devs, SizeIs(4)) << aware;
    for (const auto& d : devs) EXPECT_FALSE(d.has_topology()) << d.id() << " aware=" << aware;
  }
}

// ---------------------------------------------------------------------------------------
// DeviceList topology: topologyAware shared pools

// rdmaHcaMax 8 over nodes 0 and 1: IDs 0-3 on node 0, 4-7 on node 1; NodeOfSharedId agrees.
TEST(AlignedTopologyTest, EvenSplit) {
  config::ResourceConfig rc = Shared(8, true);
  node::PoolState pool = TwoNodePool();
  auto devs = DeviceList(rc, pool);
  ASSERT_THAT(Ids(devs), ElementsAreArray(Range(8)));
  for (int i = 0; i < 8; ++i) {
    const int want = i < 4 ? 0 : 1;
    EXPECT_THAT(Nodes(devs[i]), ElementsAre(want)) << i;
    EXPECT_EQ(devs[i].health(), "Healthy") << i;
    EXPECT_EQ(node::NodeOfSharedId(rc, pool, i), want) << i;
  }
  EXPECT_EQ(node::NodeOfSharedId(rc, pool, -1), node::kNoNode);
  EXPECT_EQ(node::NodeOfSharedId(rc, pool, 8), node::kNoNode);
  EXPECT_EQ(node::NodeOfSharedId(Shared(8, false), pool, 0), node::kNoNode);
}

// An odd rdmaHcaMax 5 over two nodes: blocks of 3, so 0-2 on node 0 and 3-4 on node 1.
TEST(AlignedTopologyTest, OddMaxRoundsBlockUp) {
  config::ResourceConfig rc = Shared(5, true);
  node::PoolState pool = TwoNodePool();
  auto devs = DeviceList(rc, pool);
  ASSERT_THAT(devs, SizeIs(5));
  const std::vector<int> want = {0, 0, 0, 1, 1};
  for (int i = 0; i < 5; ++i) {
    EXPECT_THAT(Nodes(devs[i]), ElementsAre(want[i])) << i;
    EXPECT_EQ(node::NodeOfSharedId(rc, pool, i), want[i]) << i;
  }
}

// A pool on one node puts every ID on that node.
TEST(AlignedTopologyTest, SingleNodeTakesEveryId) {
  config::ResourceConfig rc = Shared(6, true);
  node::PoolState pool =
      PoolOf({Hca("0000:3b:00.0", 0, "mlx5_0"), Hca("0000:3b:00.1", 0, "mlx5_1")});
  auto devs = DeviceList(rc, pool);
  ASSERT_THAT(devs, SizeIs(6));
  for (int i = 0; i < 6; ++i) {
    EXPECT_THAT(Nodes(devs[i]), ElementsAre(0)) << i;
    EXPECT_EQ(node::NodeOfSharedId(rc, pool, i), 0) << i;
  }
}

// An empty aware pool keeps its IDs, all Unhealthy and without topology.
TEST(AlignedTopologyTest, EmptyPoolIsUnhealthyWithoutTopology) {
  config::ResourceConfig rc = Shared(4, true);
  auto devs = DeviceList(rc, node::PoolState{});
  ASSERT_THAT(Ids(devs), ElementsAre("0", "1", "2", "3"));
  for (const auto& d : devs) {
    EXPECT_EQ(d.health(), "Unhealthy") << d.id();
    EXPECT_FALSE(d.has_topology()) << d.id();
  }
  EXPECT_EQ(node::NodeOfSharedId(rc, node::PoolState{}, 0), node::kNoNode);
}

// ---------------------------------------------------------------------------------------
// DeviceList: exclusive pools

// One Healthy device per function, ID = PCI address, TopologyInfo = the function's node.
TEST(ExclusiveDeviceListTest, OneDevicePerFunction) {
  auto devs = DeviceList(Exclusive(), TwoNodePool());
  ASSERT_THAT(Ids(devs),
              ElementsAre("0000:3b:00.0", "0000:3b:00.1", "0000:86:00.0", "0000:86:00.1"));
  const std::vector<int> want = {0, 0, 1, 1};
  for (size_t i = 0; i < devs.size(); ++i) {
    EXPECT_EQ(devs[i].health(), "Healthy") << devs[i].id();
    EXPECT_THAT(Nodes(devs[i]), ElementsAre(want[i])) << devs[i].id();
  }
}

// A function of unknown NUMA node has no TopologyInfo; the others keep theirs.
TEST(ExclusiveDeviceListTest, UnknownNumaHasNoTopology) {
  node::PoolState pool = TwoNodePool();
  pool.hcas[1].numa_node = -1;
  auto devs = DeviceList(Exclusive(), pool);
  ASSERT_THAT(devs, SizeIs(4));
  EXPECT_THAT(Nodes(devs[0]), ElementsAre(0));
  EXPECT_FALSE(devs[1].has_topology());
  EXPECT_THAT(Nodes(devs[2]), ElementsAre(1));
  EXPECT_THAT(Nodes(devs[3]), ElementsAre(1));
}

// excludeTopology drops TopologyInfo from every exclusive device.
TEST(ExclusiveDeviceListTest, ExcludeTopology) {
  config::ResourceConfig rc = Exclusive();
  rc.exclude_topology = true;
  auto devs = DeviceList(rc, TwoNodePool());
  ASSERT_THAT(devs, SizeIs(4));
  for (const auto& d : devs) EXPECT_FALSE(d.has_topology()) << d.id();
}

// A blocked exclusive pool advertises nothing.
TEST(ExclusiveDeviceListTest, BlockedPoolIsEmpty) {
  node::Inventory inv;
  inv.functions = TwoNodePool().hcas;
  node::PoolState pool = node::BuildPool(Exclusive(), inv, "blocked for the test");
  EXPECT_THAT(DeviceList(Exclusive(), pool), IsEmpty());
}

// ---------------------------------------------------------------------------------------
// Allocate on a simulated node: four HCAs, two per NUMA node.
//   0000:3b:00.0 mlx5_0 node 0   0000:3b:00.1 mlx5_1 node 0
//   0000:86:00.0 mlx5_2 node 1   0000:86:00.1 mlx5_3 node 1
// Char devices are numbered in that order (uverbsN, umadN, issmN for mlx5_N).

class SimAllocateTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(tmp_.path().empty());
    sim_ = std::make_unique<fake::SimNode>(tmp_.path());
    AddHca("0000:3b:00.0", "ib0", "mlx5_0", 0);
    AddHca("0000:3b:00.1", "ib1", "mlx5_1", 0);
    AddHca("0000:86:00.0", "ib2", "mlx5_2", 1);
    AddHca("0000:86:00.1", "ib3", "mlx5_3", 1);
    host_ = NewRootedHost(tmp_.path());
    inv_ = node::Discoverer(*host_).Scan();
    ASSERT_THAT(inv_.functions, SizeIs(4));
  }

  void AddHca(const std::string& address, const std::string& netdev, const std::string& rdma,
              int numa) {
    ASSERT_TRUE(sim_->AddPciFunction(fake::SimNode::IbHca(address, netdev, rdma, numa)).ok())
        << address;
  }

  static v1beta1::AllocateRequest Request(const std::vector<std::vector<std::string>>& containers) {
    v1beta1::AllocateRequest req;
    for (const auto& ids : containers) {
      auto* c = req.add_container_requests();
      for (const auto& id : ids) c->add_devices_ids(id);
    }
    return req;
  }

  // The host paths of one container response's DeviceSpecs, checking each spec's shape.
  static std::vector<std::string> HostPaths(const v1beta1::ContainerAllocateResponse& c) {
    std::vector<std::string> out;
    for (const auto& d : c.devices()) {
      EXPECT_EQ(d.container_path(), d.host_path());
      EXPECT_EQ(d.permissions(), "rw");
      out.push_back(d.host_path());
    }
    return out;
  }

  // The char devices of mlx5_<n> for each n, sorted, then rdma_cm.
  static std::vector<std::string> DevicesOf(const std::vector<int>& ns) {
    std::set<std::string> s;
    for (int n : ns) {
      for (const char* kind : {"issm", "umad", "uverbs"}) {
        s.insert(std::string("/dev/infiniband/") + kind + std::to_string(n));
      }
    }
    std::vector<std::string> out(s.begin(), s.end());
    out.push_back(hostfacts::kRdmaCmPath);
    return out;
  }

  TempDir tmp_;
  std::unique_ptr<fake::SimNode> sim_;
  std::unique_ptr<Host> host_;
  node::Inventory inv_;
};

// Aware pool, IDs of node 1 only: the node-1 HCAs' char devices (+rdma_cm once) and names.
TEST_F(SimAllocateTest, AlignedIdsOfNodeOneGrantNodeOneHcas) {
  config::ResourceConfig rc = Shared(8, true);
  node::PoolState pool = node::BuildPool(rc, inv_);
  ASSERT_THAT(pool.hcas, SizeIs(4));
  auto resp = BuildAllocateResponse(rc, pool, Request({{"4", "7"}}), *host_);
  ASSERT_TRUE(resp.ok()) << resp.status().ToString();
  ASSERT_EQ(resp->container_responses_size(), 1);
  const auto& c = resp->container_responses(0);
  EXPECT_THAT(HostPaths(c), ElementsAreArray(DevicesOf({2, 3})));
  ASSERT_EQ(c.envs().count(RdmaDevicesEnvName(rc.FullName())), 1u);
  EXPECT_EQ(c.envs().at(RdmaDevicesEnvName(rc.FullName())), "mlx5_2,mlx5_3");
}

// Aware pool, IDs of node 0 only: the node-0 HCAs.
TEST_F(SimAllocateTest, AlignedIdsOfNodeZeroGrantNodeZeroHcas) {
  config::ResourceConfig rc = Shared(8, true);
  node::PoolState pool = node::BuildPool(rc, inv_);
  auto resp = BuildAllocateResponse(rc, pool, Request({{"0", "3"}}), *host_);
  ASSERT_TRUE(resp.ok()) << resp.status().ToString();
  const auto& c = resp->container_responses(0);
  EXPECT_THAT(HostPaths(c), ElementsAreArray(DevicesOf({0, 1})));
  EXPECT_EQ(c.envs().at(RdmaDevicesEnvName(rc.FullName())), "mlx5_0,mlx5_1");
}

// Aware pool, IDs spanning both nodes: all four HCAs.
TEST_F(SimAllocateTest, AlignedIdsSpanningNodesGrantAll) {
  config::ResourceConfig rc = Shared(8, true);
  node::PoolState pool = node::BuildPool(rc, inv_);
  auto resp = BuildAllocateResponse(rc, pool, Request({{"3", "4"}, {"6"}}), *host_);
  ASSERT_TRUE(resp.ok()) << resp.status().ToString();
  ASSERT_EQ(resp->container_responses_size(), 2);
  EXPECT_THAT(HostPaths(resp->container_responses(0)), ElementsAreArray(DevicesOf({0, 1, 2, 3})));
  EXPECT_EQ(resp->container_responses(0).envs().at(RdmaDevicesEnvName(rc.FullName())),
            "mlx5_0,mlx5_1,mlx5_2,mlx5_3");
  // The second container only asked for a node-1 ID.
  EXPECT_THAT(HostPaths(resp->container_responses(1)), ElementsAreArray(DevicesOf({2, 3})));
  EXPECT_EQ(resp->container_responses(1).envs().at(RdmaDevicesEnvName(rc.FullName())),
            "mlx5_2,mlx5_3");
}

// A non-aware pool grants all four HCAs for any ID.
TEST_F(SimAllocateTest, NonAwarePoolGrantsAllForAnyId) {
  config::ResourceConfig rc = Shared(8, false);
  node::PoolState pool = node::BuildPool(rc, inv_);
  for (const char* id : {"0", "4", "7"}) {
    auto resp = BuildAllocateResponse(rc, pool, Request({{id}}), *host_);
    ASSERT_TRUE(resp.ok()) << id << ": " << resp.status().ToString();
    const auto& c = resp->container_responses(0);
    EXPECT_THAT(HostPaths(c), ElementsAreArray(DevicesOf({0, 1, 2, 3}))) << id;
    EXPECT_EQ(c.envs().at(RdmaDevicesEnvName(rc.FullName())), "mlx5_0,mlx5_1,mlx5_2,mlx5_3") << id;
    EXPECT_EQ(c.envs().size(), 1u) << id;
  }
}

// Exclusive: exactly the requested functions' char devices (+rdma_cm once), names in
// request order.
TEST_F(SimAllocateTest, ExclusiveGrantsExactlyRequestedFunctions) {
  config::ResourceConfig rc = Exclusive();
  node::PoolState pool = node::BuildPool(rc, inv_);
  ASSERT_THAT(pool.hcas, SizeIs(4));
  auto resp = BuildAllocateResponse(rc, pool, Request({{"0000:86:00.1", "0000:3b:00.0"}}), *host_);
  ASSERT_TRUE(resp.ok()) << resp.status().ToString();
  ASSERT_EQ(resp->container_responses_size(), 1);
  const auto& c = resp->container_responses(0);
  const auto paths = HostPaths(c);
  EXPECT_THAT(paths, ElementsAreArray(DevicesOf({0, 3})));
  EXPECT_EQ(std::count(paths.begin(), paths.end(), hostfacts::kRdmaCmPath), 1);
  EXPECT_EQ(c.envs().at(RdmaDevicesEnvName(rc.FullName())), "mlx5_3,mlx5_0");
}

// Exclusive: a PCI address that is not in the pool is InvalidArgument naming it.
TEST_F(SimAllocateTest, ExclusiveUnknownAddressIsInvalidArgument) {
  config::ResourceConfig rc = Exclusive();
  node::PoolState pool = node::BuildPool(rc, inv_);
  auto resp = BuildAllocateResponse(rc, pool, Request({{"0000:3b:00.0", "0000:99:00.0"}}), *host_);
  ASSERT_FALSE(resp.ok());
  EXPECT_EQ(resp.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(resp.status().message(), HasSubstr("0000:99:00.0"));
}

// Exclusive: a shared-style ID is not one of ours.
TEST_F(SimAllocateTest, ExclusiveRejectsSharedStyleId) {
  config::ResourceConfig rc = Exclusive();
  node::PoolState pool = node::BuildPool(rc, inv_);
  auto resp = BuildAllocateResponse(rc, pool, Request({{"0"}}), *host_);
  ASSERT_FALSE(resp.ok());
  EXPECT_EQ(resp.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(resp.status().message(), HasSubstr("\"0\""));
}

// Exclusive: PCIDEVICE_<PREFIX>_<NAME> lists the IDs in request order, and its _INFO
// variable is JSON with the generic ID and the RDMA details of each.
TEST_F(SimAllocateTest, ExclusivePciDeviceEnv) {
  config::ResourceConfig rc = Exclusive("nvidia.com", "hca_vfs");
  ASSERT_EQ(PciDeviceEnvName(rc), "PCIDEVICE_NVIDIA_COM_HCA_VFS");
  node::PoolState pool = node::BuildPool(rc, inv_);
  auto resp = BuildAllocateResponse(rc, pool, Request({{"0000:86:00.1", "0000:3b:00.0"}}), *host_);
  ASSERT_TRUE(resp.ok()) << resp.status().ToString();
  const auto& envs = resp->container_responses(0).envs();
  EXPECT_EQ(envs.size(), 3u);
  ASSERT_EQ(envs.count("PCIDEVICE_NVIDIA_COM_HCA_VFS"), 1u);
  EXPECT_EQ(envs.at("PCIDEVICE_NVIDIA_COM_HCA_VFS"), "0000:86:00.1,0000:3b:00.0");
  ASSERT_EQ(envs.count("PCIDEVICE_NVIDIA_COM_HCA_VFS_INFO"), 1u);

  const auto info = nlohmann::json::parse(envs.at("PCIDEVICE_NVIDIA_COM_HCA_VFS_INFO"), nullptr,
                                          /*allow_exceptions=*/false);
  ASSERT_TRUE(info.is_object()) << envs.at("PCIDEVICE_NVIDIA_COM_HCA_VFS_INFO");
  ASSERT_EQ(info.size(), 2u);
  struct Want {
    const char* id;
    const char* rdma_dev;
    const char* uverbs;
  };
  for (const Want& w : {Want{"0000:86:00.1", "mlx5_3", "/dev/infiniband/uverbs3"},
                        Want{"0000:3b:00.0", "mlx5_0", "/dev/infiniband/uverbs0"}}) {
    ASSERT_TRUE(info.contains(w.id)) << w.id;
    const auto& e = info.at(w.id);
    EXPECT_EQ(e.at("generic").at("deviceID"), w.id);
    EXPECT_EQ(e.at("rdma").at("rdma_dev"), w.rdma_dev);
    EXPECT_EQ(e.at("rdma").at("uverbs"), w.uverbs);
    EXPECT_EQ(e.at("rdma").at("rdma_cm"), hostfacts::kRdmaCmPath);
  }
}

// A shared pool's Allocate sets no PCIDEVICE_* variables.
TEST_F(SimAllocateTest, SharedSetsNoPciDeviceEnv) {
  config::ResourceConfig rc = Shared(8, true);
  node::PoolState pool = node::BuildPool(rc, inv_);
  auto resp = BuildAllocateResponse(rc, pool, Request({{"1"}}), *host_);
  ASSERT_TRUE(resp.ok()) << resp.status().ToString();
  const auto& envs = resp->container_responses(0).envs();
  EXPECT_EQ(envs.size(), 1u);
  EXPECT_EQ(envs.count(RdmaDevicesEnvName(rc.FullName())), 1u);
}

// ---------------------------------------------------------------------------------------
// PreferredIds(rc, pool, ...)

// Eight aware IDs over two nodes, size 3: all from node 0 (the first that fits).
TEST(AlignedPreferredIdsTest, FitsOnOneNode) {
  config::ResourceConfig rc = Shared(8, true);
  EXPECT_THAT(PreferredIds(rc, TwoNodePool(), Range(8), {}, 3), ElementsAre("0", "1", "2"));
}

// Only node-1 IDs left in three, node 0 in two: a size-3 request fits only node 1.
TEST(AlignedPreferredIdsTest, PicksTheNodeThatFits) {
  config::ResourceConfig rc = Shared(8, true);
  EXPECT_THAT(PreferredIds(rc, TwoNodePool(), {"2", "3", "5", "6", "7"}, {}, 3),
              ElementsAre("5", "6", "7"));
  // The smallest node that fits wins over a larger one.
  EXPECT_THAT(PreferredIds(rc, TwoNodePool(), {"0", "1", "2", "3", "6", "7"}, {}, 2),
              ElementsAre("6", "7"));
}

// A must-include ID on node 1 comes first, and the rest come from node 1 too.
TEST(AlignedPreferredIdsTest, MustIncludeNodeFirst) {
  config::ResourceConfig rc = Shared(8, true);
  EXPECT_THAT(PreferredIds(rc, TwoNodePool(), Range(8), {"5"}, 3), ElementsAre("5", "4", "6"));
}

// More than one node holds: all of one node, then the rest from the other.
TEST(AlignedPreferredIdsTest, SpillsToSecondNode) {
  config::ResourceConfig rc = Shared(8, true);
  EXPECT_THAT(PreferredIds(rc, TwoNodePool(), Range(8), {}, 6),
              ElementsAre("0", "1", "2", "3", "4", "5"));
}

// The answer does not depend on the order the IDs arrive in.
TEST(AlignedPreferredIdsTest, Deterministic) {
  config::ResourceConfig rc = Shared(8, true);
  std::vector<std::string> ids = Range(8);
  const auto first = PreferredIds(rc, TwoNodePool(), ids, {"5"}, 3);
  std::reverse(ids.begin(), ids.end());
  std::rotate(ids.begin(), ids.begin() + 3, ids.end());
  EXPECT_EQ(PreferredIds(rc, TwoNodePool(), ids, {"5"}, 3), first);
  EXPECT_EQ(PreferredIds(rc, TwoNodePool(), ids, {"5"}, 3), first);
  EXPECT_THAT(first, ElementsAre("5", "4", "6"));
}

// IDs that are not the resource's are ignored, in both lists.
TEST(AlignedPreferredIdsTest, ForeignIdsIgnored) {
  config::ResourceConfig rc = Shared(8, true);
  EXPECT_THAT(PreferredIds(rc, TwoNodePool(), {"8", "abc", "-1", "07", "6", "7", "0000:3b:00.0"},
                           {"9", "x"}, 3),
              ElementsAre("6", "7"));
}

// Exclusive pool, nodes 0,0,1,1: two IDs come from the same node.
TEST(ExclusivePreferredIdsTest, PairFromOneNode) {
  const auto all = Addresses(TwoNodePool().hcas);
  EXPECT_THAT(PreferredIds(Exclusive(), TwoNodePool(), all, {}, 2),
              ElementsAre("0000:3b:00.0", "0000:3b:00.1"));
  // With one node-0 function gone, node 1 is the only one that fits two.
  EXPECT_THAT(PreferredIds(Exclusive(), TwoNodePool(),
                           {"0000:86:00.1", "0000:3b:00.1", "0000:86:00.0"}, {}, 2),
              ElementsAre("0000:86:00.0", "0000:86:00.1"));
}

// Exclusive pool: size 1 with a must-include gives just the must-include.
TEST(ExclusivePreferredIdsTest, MustIncludeOnly) {
  const auto all = Addresses(TwoNodePool().hcas);
  EXPECT_THAT(PreferredIds(Exclusive(), TwoNodePool(), all, {"0000:86:00.1"}, 1),
              ElementsAre("0000:86:00.1"));
  // Size 2: its node-mate follows.
  EXPECT_THAT(PreferredIds(Exclusive(), TwoNodePool(), all, {"0000:86:00.1"}, 2),
              ElementsAre("0000:86:00.1", "0000:86:00.0"));
  // Shared-style and unknown IDs are not ours.
  EXPECT_THAT(PreferredIds(Exclusive(), TwoNodePool(), {"0", "0000:99:00.0"}, {"1"}, 2), IsEmpty());
}

// ---------------------------------------------------------------------------------------
// BuildPool: exclusive in-use tracking

// An inventory of `fns` in which every function is also listed as present.
node::Inventory PresentInventory(std::vector<node::PciFunction> fns) {
  node::Inventory inv;
  inv.functions = std::move(fns);
  for (const auto& f : inv.functions) inv.present.insert(f.address);
  return inv;
}

// An exclusive function whose RDMA device left sysfs but whose PCI function is present
// stays in the pool with its last details and is marked in use.
TEST(ExclusiveInUseTest, VanishedButPresentIsKept) {
  config::ResourceConfig rc = Exclusive();
  const node::Inventory before = PresentInventory(TwoNodePool().hcas);
  const node::PoolState previous = node::BuildPool(rc, before);
  ASSERT_THAT(previous.hcas, SizeIs(4));
  EXPECT_THAT(previous.in_use, IsEmpty());

  node::Inventory after = before;
  after.functions.erase(after.functions.begin() + 2);  // 0000:86:00.0
  ASSERT_EQ(after.present.count("0000:86:00.0"), 1u);
  const node::PoolState pool = node::BuildPool(rc, after, "", &previous);
  EXPECT_THAT(Addresses(pool.hcas),
              ElementsAre("0000:3b:00.0", "0000:3b:00.1", "0000:86:00.0", "0000:86:00.1"));
  const node::PciFunction* kept = pool.Find("0000:86:00.0");
  ASSERT_NE(kept, nullptr);
  EXPECT_EQ(*kept, *previous.Find("0000:86:00.0"));
  EXPECT_THAT(pool.in_use, ElementsAre("0000:86:00.0"));

  // Still in use on the next rebuild (previous is the pool that already kept it).
  const node::PoolState again = node::BuildPool(rc, after, "", &pool);
  EXPECT_EQ(again, pool);

  // Back in sysfs: no longer in use.
  const node::PoolState back = node::BuildPool(rc, before, "", &pool);
  EXPECT_THAT(back.in_use, IsEmpty());
  EXPECT_THAT(back.hcas, SizeIs(4));
}

// A function that left `present` too (hot-removed) is dropped.
TEST(ExclusiveInUseTest, AbsentFromPresentIsDropped) {
  config::ResourceConfig rc = Exclusive();
  const node::Inventory before = PresentInventory(TwoNodePool().hcas);
  const node::PoolState previous = node::BuildPool(rc, before);

  node::Inventory after = before;
  after.functions.erase(after.functions.begin() + 2);
  after.present.erase("0000:86:00.0");
  const node::PoolState pool = node::BuildPool(rc, after, "", &previous);
  EXPECT_THAT(Addresses(pool.hcas), ElementsAre("0000:3b:00.0", "0000:3b:00.1", "0000:86:00.1"));
  EXPECT_THAT(pool.in_use, IsEmpty());
}

// Shared pools never keep vanished functions, even when still present.
TEST(ExclusiveInUseTest, SharedPoolDropsVanished) {
  config::ResourceConfig rc = Shared(8, true);
  const node::Inventory before = PresentInventory(TwoNodePool().hcas);
  const node::PoolState previous = node::BuildPool(rc, before);

  node::Inventory after = before;
  after.functions.erase(after.functions.begin() + 2);
  const node::PoolState pool = node::BuildPool(rc, after, "", &previous);
  EXPECT_THAT(Addresses(pool.hcas), ElementsAre("0000:3b:00.0", "0000:3b:00.1", "0000:86:00.1"));
  EXPECT_THAT(pool.in_use, IsEmpty());
}

// A blocked exclusive pool keeps nothing from the previous pool.
TEST(ExclusiveInUseTest, BlockedKeepsNothing) {
  config::ResourceConfig rc = Exclusive();
  const node::Inventory inv = PresentInventory(TwoNodePool().hcas);
  const node::PoolState previous = node::BuildPool(rc, inv);
  const node::PoolState pool = node::BuildPool(rc, inv, "blocked", &previous);
  EXPECT_THAT(pool.hcas, IsEmpty());
  EXPECT_THAT(pool.in_use, IsEmpty());
}

}  // namespace
}  // namespace hcashare::dp
