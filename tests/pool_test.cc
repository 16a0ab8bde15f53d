// Tests for node/selectors and node/pool: selector matching, pool building,
// the ListAndWatch device list, Allocate answers and preferred allocations.
#include "node/pool.h"
#include "common/env_names.h"
#include "deviceplugin/allocation.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "common/host.h"
#include "common/temp_dir.h"
#include "node/discovery.h"
#include "node/selectors.h"
#include "testing/sim_node.h"

namespace hcashare::dp {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using ::testing::SizeIs;

// ---------------------------------------------------------------------------------------
// Fixture builders.

// A PciFunction built directly (no sysfs), for selector and pool tests.
node::PciFunction Fn(const std::string& address, const std::string& vendor,
                     const std::string& device, const std::string& driver,
                     std::vector<std::string> netdevs, const std::string& link_type) {
  node::PciFunction f;
  f.address = address;
  f.vendor = vendor;
  f.device = device;
  f.class_code = 0x020000;
  f.numa_node = 0;
  f.driver = driver;
  f.netdevs = std::move(netdevs);
  f.pf_netdevs = f.netdevs;
  f.link_types = {link_type};
  return f;
}

// An RDMA device with the given char device paths.
node::RdmaDeviceInfo Rdma(const std::string& name, std::vector<std::string> char_devices) {
  node::RdmaDeviceInfo r;
  r.name = name;
  r.char_devices = std::move(char_devices);
  r.link_layers = {"infiniband"};
  return r;
}

// A VF of an InfiniBand PF with two netdevs, on NUMA node 1: every selector kind has a
// value that matches and a value that does not.
node::PciFunction SelectorSubject() {
  node::PciFunction f =
      Fn("0000:3b:00.2", "15b3", "101c", "mlx5_core", {"ib0", "ib1"}, "infiniband");
  f.numa_node = 1;
  f.is_vf = true;
  f.pf_address = "0000:3b:00.0";
  f.pf_netdevs = {"pfib0"};
  f.rdma = {Rdma("mlx5_2", {"/dev/infiniband/uverbs2"})};
  return f;
}

config::ResourceConfig Resource(int rdma_hca_max, config::Selectors selectors = {}) {
  config::ResourceConfig rc;
  rc.resource_name = "hca_shared";
  rc.resource_prefix = "rdma";
  rc.rdma_hca_max = rdma_hca_max;
  rc.selectors = std::move(selectors);
  return rc;
}

std::vector<std::string> Addresses(const std::vector<node::PciFunction>& fns) {
  std::vector<std::string> out;
  for (const auto& f : fns) out.push_back(f.address);
  return out;
}

// ---------------------------------------------------------------------------------------
// Matches()

// Selectors with only `field` set to `values`.
template <typename T>
config::Selectors With(std::vector<T> config::Selectors::*field, std::vector<T> values) {
  config::Selectors s;
  s.*field = std::move(values);
  return s;
}

// Selectors that each match SelectorSubject(), one value per kind.
config::Selectors AllKindsMatching() {
  config::Selectors s;
  s.vendors = {"15b3"};
  s.device_ids = {"101c"};
  s.drivers = {"mlx5_core"};
  s.if_names = {"ib0"};
  s.link_types = {"infiniband"};
  s.pci_addresses = {"0000:3b:00.2"};
  s.pf_names = {{"pfib0"}};
  s.rdma_devices = {"mlx5_2"};
  s.numa_nodes = {1};
  return s;
}

// AllKindsMatching() with one list replaced by a value that does not match.
config::Selectors AllKindsButDriver() {
  config::Selectors s = AllKindsMatching();
  s.drivers = {"igb"};
  return s;
}

struct SelectorCase {
  const char* name;
  config::Selectors selectors;
  bool want;
};

class MatchesTest : public ::testing::TestWithParam<SelectorCase> {};

// Each selector kind filters on its own field, OR within a list and AND across lists.
TEST_P(MatchesTest, AgainstSelectorSubject) {
  EXPECT_EQ(node::Matches(GetParam().selectors, SelectorSubject()), GetParam().want);
}

using S = config::Selectors;
INSTANTIATE_TEST_SUITE_P(
    Kinds, MatchesTest,
    ::testing::Values(
        SelectorCase{"Empty", S{}, true},
        SelectorCase{"VendorHit", With(&S::vendors, {"15b3"}), true},
        SelectorCase{"VendorMiss", With(&S::vendors, {"8086"}), false},
        SelectorCase{"VendorOrWithinList", With(&S::vendors, {"8086", "15b3"}), true},
        SelectorCase{"DeviceIdHit", With(&S::device_ids, {"101c"}), true},
        SelectorCase{"DeviceIdMiss", With(&S::device_ids, {"1017", "101b"}), false},
        SelectorCase{"DriverHit", With(&S::drivers, {"igb", "mlx5_core"}), true},
        SelectorCase{"DriverMiss", With(&S::drivers, {"mlx4_core"}), false},
        SelectorCase{"IfNameHitsSecondNetdev", With(&S::if_names, {"ib1"}), true},
        SelectorCase{"IfNameMiss", With(&S::if_names, {"eth0"}), false},
        SelectorCase{"IfNameIsNotPfName", With(&S::if_names, {"pfib0"}), false},
        SelectorCase{"LinkTypeHit", With(&S::link_types, {"infiniband"}), true},
        SelectorCase{"LinkTypeMiss", With(&S::link_types, {"ether"}), false},
        SelectorCase{"PciAddressHit", With(&S::pci_addresses, {"0000:3b:00.0", "0000:3b:00.2"}),
                     true},
        SelectorCase{"PciAddressMiss", With(&S::pci_addresses, {"0000:3b:00.0"}), false},
        SelectorCase{"PfNameHit", With(&S::pf_names, {{"pfib0"}}), true},
        SelectorCase{"PfNameIsNotIfName", With(&S::pf_names, {{"ib0"}}), false},
        SelectorCase{"RdmaDeviceHit", With(&S::rdma_devices, {"mlx5_0", "mlx5_2"}), true},
        SelectorCase{"RdmaDeviceMiss", With(&S::rdma_devices, {"mlx5_0"}), false},
        SelectorCase{"NumaHit", With(&S::numa_nodes, {0, 1}), true},
        SelectorCase{"NumaMiss", With(&S::numa_nodes, {0}), false},
        SelectorCase{"AllKindsHit", AllKindsMatching(), true},
        SelectorCase{"AndAcrossKinds", AllKindsButDriver(), false}),
    [](const ::testing::TestParamInfo<SelectorCase>& info) { return info.param.name; });

// A function with unknown NUMA (-1) never matches a numaNodes selector.
TEST(MatchesUnknownNumaTest, UnknownNumaDoesNotMatchNumaSelector) {
  node::PciFunction f = SelectorSubject();
  f.numa_node = -1;
  config::Selectors sel;
  sel.numa_nodes = {0, 1};
  EXPECT_FALSE(node::Matches(sel, f));
  EXPECT_TRUE(node::Matches(config::Selectors{}, f));
}

// The Mellanox acceptance case: only dev1 and dev2 satisfy all five selectors, in order.
TEST(MatchesMellanoxTest, AcceptanceCase) {
  std::vector<node::PciFunction> devs = {
      Fn("0000:02:00.0", "15b3", "1017", "mlx5_core", {"enp2s0f0"}, "ether"),       // dev1
      Fn("0000:02:00.1", "8080", "2031", "igb", {"enp2s0f1"}, "ether"),             // dev2
      Fn("0000:03:00.0", "15b3", "1017", "mlx4_core", {"enp4s0f0"}, "ether"),       // driver
      Fn("0000:04:00.0", "15b3", "1018", "mlx5_core", {"enp4s0f0"}, "ether"),       // device ID
      Fn("0000:04:00.1", "15b3", "1017", "mlx5_core", {"enp4s0f0"}, "infiniband"),  // link
  };
  config::Selectors sel;
  sel.vendors = {"15b3", "8080"};
  sel.device_ids = {"1017", "2031"};
  sel.drivers = {"mlx5_core", "igb"};
  sel.if_names = {"enp2s0f0", "enp2s0f1", "enp4s0f0"};
  sel.link_types = {"ether"};

  std::vector<node::PciFunction> got;
  for (const auto& d : devs) {
    if (node::Matches(sel, d)) got.push_back(d);
  }
  EXPECT_THAT(Addresses(got), ElementsAre("0000:02:00.0", "0000:02:00.1"));
}

// ---------------------------------------------------------------------------------------
// BuildPool, CharDevices, DeviceList

node::Inventory ThreeHcaInventory() {
  node::Inventory inv;
  inv.rdma_cm_present = true;
  for (int i = 0; i < 3; ++i) {
    std::string n = std::to_string(i);
    node::PciFunction f =
        Fn("0000:3" + n + ":00.0", "15b3", "1017", "mlx5_core", {"ib" + n}, "infiniband");
    f.rdma = {Rdma("mlx5_" + n, {"/dev/infiniband/uverbs" + n})};
    inv.functions.push_back(std::move(f));
  }
  return inv;
}

// BuildPool keeps exactly the functions that match the resource's selectors.
TEST(BuildPoolTest, SelectsMatchingFunctions) {
  config::Selectors sel;
  sel.rdma_devices = {"mlx5_2", "mlx5_0"};
  node::PoolState pool = node::BuildPool(Resource(10, sel), ThreeHcaInventory());
  EXPECT_THAT(Addresses(pool.hcas), ElementsAre("0000:30:00.0", "0000:32:00.0"));
  EXPECT_THAT(pool.RdmaNames(), ElementsAre("mlx5_0", "mlx5_2"));
  EXPECT_TRUE(pool.Usable());
}

// A pool whose selectors match nothing is empty and not usable.
TEST(BuildPoolTest, NoMatchIsNotUsable) {
  config::Selectors sel;
  sel.vendors = {"8086"};
  node::PoolState pool = node::BuildPool(Resource(10, sel), ThreeHcaInventory());
  EXPECT_THAT(pool.hcas, IsEmpty());
  EXPECT_FALSE(pool.Usable());
}

// A blocked reason yields an empty, unusable pool that remembers the reason.
TEST(BuildPoolTest, BlockedPoolIsEmpty) {
  node::PoolState pool =
      node::BuildPool(Resource(10), ThreeHcaInventory(), "rdma netns mode is exclusive");
  EXPECT_THAT(pool.hcas, IsEmpty());
  EXPECT_FALSE(pool.Usable());
  EXPECT_EQ(pool.blocked_reason, "rdma netns mode is exclusive");
}

// CharDevices is the sorted, de-duplicated union, with rdma_cm once and last.
TEST(PoolCharDevicesTest, SortedUnionWithRdmaCmLast) {
  node::PoolState pool;
  node::PciFunction a = Fn("0000:3b:00.0", "15b3", "1017", "mlx5_core", {"ib0"}, "infiniband");
  a.rdma = {Rdma("mlx5_0", {"/dev/infiniband/umad1", "/dev/infiniband/uverbs1"})};
  node::PciFunction b = Fn("0000:86:00.0", "15b3", "1017", "mlx5_core", {"ib1"}, "infiniband");
  b.rdma = {
      Rdma("mlx5_1", {"/dev/infiniband/issm0", hostfacts::kRdmaCmPath, "/dev/infiniband/uverbs1"}),
      Rdma("mlx5_2", {"/dev/infiniband/uverbs0"})};
  pool.hcas = {a, b};

  EXPECT_THAT(pool.CharDevices(), ElementsAre("/dev/infiniband/issm0", "/dev/infiniband/umad1",
                                              "/dev/infiniband/uverbs0", "/dev/infiniband/uverbs1",
                                              hostfacts::kRdmaCmPath));
}

// An empty pool has no char devices at all (not even rdma_cm).
TEST(PoolCharDevicesTest, EmptyPoolHasNone) {
  EXPECT_THAT(node::PoolState{}.CharDevices(), IsEmpty());
}

std::vector<std::string> Ids(const std::vector<v1beta1::Device>& devs) {
  std::vector<std::string> out;
  for (const auto& d : devs) out.push_back(d.id());
  return out;
}

std::set<std::string> Healths(const std::vector<v1beta1::Device>& devs) {
  std::set<std::string> out;
  for (const auto& d : devs) out.insert(d.health());
  return out;
}

// A usable pool advertises IDs 0..rdmaHcaMax-1, all Healthy.
TEST(DeviceListTest, UsablePoolIsHealthy) {
  node::PoolState pool = node::BuildPool(Resource(5), ThreeHcaInventory());
  auto devs = DeviceList(Resource(5), pool);
  EXPECT_THAT(Ids(devs), ElementsAre("0", "1", "2", "3", "4"));
  EXPECT_THAT(Healths(devs), ElementsAre("Healthy"));
}

// A pool without HCAs keeps its capacity but marks every ID Unhealthy.
TEST(DeviceListTest, PoolWithoutHcaIsUnhealthy) {
  auto devs = DeviceList(Resource(5), node::PoolState{});
  EXPECT_THAT(Ids(devs), ElementsAre("0", "1", "2", "3", "4"));
  EXPECT_THAT(Healths(devs), ElementsAre("Unhealthy"));
}

// A blocked pool advertises no devices.
TEST(DeviceListTest, BlockedPoolAdvertisesNothing) {
  node::PoolState pool = node::BuildPool(Resource(5), ThreeHcaInventory(), "exclusive netns mode");
  EXPECT_THAT(DeviceList(Resource(5), pool), IsEmpty());
}

// ---------------------------------------------------------------------------------------
// IsValidDeviceId

// Only canonical decimals below rdmaHcaMax are device IDs.
TEST(IsValidDeviceIdTest, CanonicalDecimalsInRange) {
  EXPECT_TRUE(IsValidDeviceId("0", 1000));
  EXPECT_TRUE(IsValidDeviceId("999", 1000));
  for (const char* bad :
       {"1000", "-1", "01", "", "a", "1.0", " 1", "1 ", "+1", "0x1", "99999999999999999999"}) {
    EXPECT_FALSE(IsValidDeviceId(bad, 1000)) << "\"" << bad << "\"";
  }
}

// ---------------------------------------------------------------------------------------
// BuildAllocateResponse

// A SimNode with two single-port InfiniBand HCAs (mlx5_0, mlx5_1), a pool over all of it
// and a Host rooted at the fixture.
class AllocateTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(tmp_.path().empty());
    sim_ = std::make_unique<fake::SimNode>(tmp_.path());
    AddHca("0000:3b:00.0", "ib0", "mlx5_0");
    AddHca("0000:86:00.0", "ib1", "mlx5_1");
    host_ = NewRootedHost(tmp_.path());
    node::Inventory inv = node::Discoverer(*host_).Scan();
    ASSERT_THAT(inv.functions, SizeIs(2));
    pool_ = node::BuildPool(rc_, inv);
  }

  void AddHca(const std::string& address, const std::string& netdev, const std::string& rdma) {
    ASSERT_TRUE(sim_->AddPciFunction(fake::SimNode::IbHca(address, netdev, rdma)).ok()) << address;
  }

  // An AllocateRequest with one container request per element of `containers`.
  static v1beta1::AllocateRequest Request(const std::vector<std::vector<std::string>>& containers) {
    v1beta1::AllocateRequest req;
    for (const auto& ids : containers) {
      auto* c = req.add_container_requests();
      for (const auto& id : ids) c->add_devices_ids(id);
    }
    return req;
  }

  Result<v1beta1::AllocateResponse> Allocate(const v1beta1::AllocateRequest& req) const {
    return BuildAllocateResponse(rc_, pool_, req, *host_);
  }

  TempDir tmp_;
  std::unique_ptr<fake::SimNode> sim_;
  std::unique_ptr<Host> host_;
  config::ResourceConfig rc_ = Resource(1000);
  node::PoolState pool_;
};

const std::vector<std::string> kExpectedDevices = {
    "/dev/infiniband/issm0",  "/dev/infiniband/issm1",   "/dev/infiniband/umad0",
    "/dev/infiniband/umad1",  "/dev/infiniband/uverbs0", "/dev/infiniband/uverbs1",
    "/dev/infiniband/rdma_cm"};

// One container gets every char device once, host-absolute, "rw", plus the RDMA names env.
TEST_F(AllocateTest, OneContainerGetsEveryCharDevice) {
  auto resp = Allocate(Request({{"0"}}));
  ASSERT_TRUE(resp.ok()) << resp.status().ToString();
  ASSERT_EQ(resp->container_responses_size(), 1);
  const auto& c = resp->container_responses(0);

  std::vector<std::string> host_paths;
  for (const auto& d : c.devices()) {
    EXPECT_EQ(d.container_path(), d.host_path());
    EXPECT_EQ(d.permissions(), "rw");
    EXPECT_EQ(d.host_path().rfind("/dev/infiniband/", 0), 0u) << d.host_path();
    EXPECT_THAT(d.host_path(), Not(HasSubstr(tmp_.path()))) << d.host_path();
    host_paths.push_back(d.host_path());
  }
  EXPECT_THAT(host_paths, ElementsAreArray(kExpectedDevices));
  EXPECT_EQ(std::count(host_paths.begin(), host_paths.end(), hostfacts::kRdmaCmPath), 1);
  EXPECT_EQ(std::set<std::string>(host_paths.begin(), host_paths.end()).size(), host_paths.size());
  ASSERT_EQ(c.envs().count(RdmaDevicesEnvName(rc_.FullName())), 1u);
  EXPECT_EQ(c.envs().at(RdmaDevicesEnvName(rc_.FullName())), "mlx5_0,mlx5_1");
}

// A repeated ID in one container request is refused (issue 25: an exclusive one answered
// "mlx5_0,mlx5_0" and two CDI devices of one name).
TEST_F(AllocateTest, ARepeatedIdIsRefused) {
  auto resp = Allocate(Request({{"3", "3"}}));
  ASSERT_FALSE(resp.ok());
  EXPECT_THAT(resp.status().message(), HasSubstr("device ID \"3\" appears twice"));
  EXPECT_TRUE(Allocate(Request({{"3"}, {"3"}})).ok()) << "across containers it is fine";
}

// Each container request gets its own, identical, response.
TEST_F(AllocateTest, TwoContainersGetIdenticalResponses) {
  auto resp = Allocate(Request({{"0"}, {"1", "2"}}));
  ASSERT_TRUE(resp.ok()) << resp.status().ToString();
  ASSERT_EQ(resp->container_responses_size(), 2);
  EXPECT_EQ(resp->container_responses(0).devices_size(), static_cast<int>(kExpectedDevices.size()));
  // One env entry, so the serialised forms are comparable byte for byte.
  EXPECT_EQ(resp->container_responses(0).SerializeAsString(),
            resp->container_responses(1).SerializeAsString());
}

// An ID outside 0..rdmaHcaMax-1 is rejected with InvalidArgument naming the ID.
TEST_F(AllocateTest, UnknownIdIsInvalidArgument) {
  for (const char* id : {"1000", "abc"}) {
    auto resp = Allocate(Request({{"0"}, {"1", id}}));
    ASSERT_FALSE(resp.ok()) << id;
    EXPECT_EQ(resp.status().code(), StatusCode::kInvalidArgument) << id;
    EXPECT_THAT(resp.status().message(), HasSubstr(id));
  }
}

// A request without container requests is rejected.
TEST_F(AllocateTest, EmptyRequestIsInvalidArgument) {
  auto resp = Allocate(v1beta1::AllocateRequest{});
  ASSERT_FALSE(resp.ok());
  EXPECT_EQ(resp.status().code(), StatusCode::kInvalidArgument);
}

// A container request without any ID is rejected, even next to a valid one.
TEST_F(AllocateTest, ContainerWithoutIdsIsInvalidArgument) {
  auto resp = Allocate(Request({{"0"}, {}}));
  ASSERT_FALSE(resp.ok());
  EXPECT_EQ(resp.status().code(), StatusCode::kInvalidArgument);
}

// A pool without HCAs, or a blocked one, cannot allocate.
TEST_F(AllocateTest, UnusablePoolIsFailedPrecondition) {
  for (const node::PoolState& pool :
       {node::PoolState{}, node::BuildPool(rc_, node::Inventory{}, "exclusive netns")}) {
    auto resp = BuildAllocateResponse(rc_, pool, Request({{"0"}}), *host_);
    ASSERT_FALSE(resp.ok());
    EXPECT_EQ(resp.status().code(), StatusCode::kFailedPrecondition);
  }
}

// A device node that vanished after the scan fails the allocation, naming the path.
TEST_F(AllocateTest, VanishedNodeIsFailedPrecondition) {
  // rdma_cm is every HCA's: without it nothing can be handed out.
  const std::string on_disk = JoinPath(tmp_.path(), hostfacts::kRdmaCmPath);
  ASSERT_EQ(std::remove(on_disk.c_str()), 0);
  auto resp = Allocate(Request({{"0"}}));
  ASSERT_FALSE(resp.ok());
  EXPECT_EQ(resp.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(resp.status().message(), HasSubstr(hostfacts::kRdmaCmPath));
  std::ofstream(on_disk).close();
  ASSERT_TRUE(Allocate(Request({{"0"}})).ok());
  // One HCA's node gone: that HCA is left out (tests/device_health_test.cc).
  ASSERT_EQ(std::remove(JoinPath(tmp_.path(), "/dev/infiniband/umad1").c_str()), 0);
  resp = Allocate(Request({{"0"}}));
  ASSERT_TRUE(resp.ok()) << resp.status().ToString();
  EXPECT_EQ(resp->container_responses(0).envs().at(RdmaDevicesEnvName(rc_.FullName())), "mlx5_0");
}

// ---------------------------------------------------------------------------------------
// PreferredIds

std::vector<std::string> Range(int n) {
  std::vector<std::string> out;
  for (int i = 0; i < n; ++i) out.push_back(std::to_string(i));
  return out;
}

// Must-include IDs come first, once, then the lowest other available IDs.
TEST(PreferredIdsTest, MustIncludeFirst) {
  EXPECT_THAT(PreferredIds(Range(12), {"3", "7"}, 4, 100), ElementsAre("3", "7", "0", "1"));
}

// The rest is ordered numerically, not lexically ("10" after "9").
// A must_include ID that is not available is not handed back (issue 25: a local client
// could otherwise get IDs the kubelet never offered).
TEST(PreferredIdsTest, MustIncludeOutsideAvailableIsLeftOut) {
  EXPECT_THAT(PreferredIds({"1", "2", "3"}, {"7", "2"}, 2, 100), ElementsAre("2", "1"));
}

TEST(PreferredIdsTest, AscendingNumericOrder) {
  EXPECT_THAT(PreferredIds({"10", "9", "2", "11", "1"}, {}, 5, 100),
              ElementsAre("1", "2", "9", "10", "11"));
}

// No more than `size` IDs are returned.
TEST(PreferredIdsTest, SizeIsRespected) {
  EXPECT_THAT(PreferredIds(Range(10), {}, 2, 100), ElementsAre("0", "1"));
  EXPECT_THAT(PreferredIds(Range(10), {"5"}, 1, 100), ElementsAre("5"));
}

// IDs that are not ours are ignored, in both lists.
TEST(PreferredIdsTest, UnknownIdsIgnored) {
  EXPECT_THAT(PreferredIds({"5", "abc", "100", "01", "-1", "3"}, {"x", "100"}, 10, 100),
              ElementsAre("3", "5"));
}

// The answer depends only on the sets of IDs, not on the order they arrive in.
TEST(PreferredIdsTest, Deterministic) {
  std::vector<std::string> ids = Range(20);
  std::vector<std::string> first = PreferredIds(ids, {"13"}, 6, 100);
  std::reverse(ids.begin(), ids.end());
  std::rotate(ids.begin(), ids.begin() + 7, ids.end());
  EXPECT_EQ(PreferredIds(ids, {"13"}, 6, 100), first);
  EXPECT_THAT(first, ElementsAre("13", "0", "1", "2", "3", "4"));
}

}  // namespace
}  // namespace hcashare::dp
