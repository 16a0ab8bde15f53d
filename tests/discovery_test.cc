// Tests for node/discovery: Discoverer::Scan over SimNode fixture trees,
// ExclusionReporter and ParseHexId.
#include "node/discovery.h"
#include "hostfacts/attrs.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "common/host.h"
#include "common/log.h"
#include "common/temp_dir.h"
#include "testing/sim_node.h"

namespace hcashare::node {
namespace {

using hostfacts::ParseHexId;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::SizeIs;

constexpr const char* kIb = "/dev/infiniband/";

// An InfiniBand HCA physical function (class 0x020700, one port).
fake::SimPciFunction IbPf(const std::string& address, const std::string& netdev,
                          const std::string& rdma) {
  fake::SimPciFunction f = fake::SimNode::IbHca(address, netdev, rdma);
  f.device = "101B";  // upper case on purpose: discovery must lower-case it
  return f;
}

// A RoCE (Ethernet) HCA physical function.
fake::SimPciFunction RocePf(const std::string& address, const std::string& netdev,
                            const std::string& rdma) {
  fake::SimPciFunction f;
  f.address = address;
  f.netdevs = {netdev};
  f.link_type = "ether";
  f.rdma_device = rdma;
  return f;
}

// An Ethernet NIC without any RDMA device.
fake::SimPciFunction PlainNic(const std::string& address, const std::string& netdev) {
  fake::SimPciFunction f;
  f.address = address;
  f.vendor = "8086";
  f.device = "1593";
  f.driver = "ice";
  f.netdevs = {netdev};
  return f;
}

std::vector<std::string> Addresses(const std::vector<PciFunction>& fns) {
  std::vector<std::string> out;
  for (const auto& f : fns) out.push_back(f.address);
  return out;
}

std::vector<std::string> Addresses(const std::vector<Exclusion>& ex) {
  std::vector<std::string> out;
  for (const auto& e : ex) out.push_back(e.address);
  return out;
}

// Every char device of every RDMA device of `fns`.
std::set<std::string> AllCharDevices(const std::vector<PciFunction>& fns) {
  std::set<std::string> out;
  for (const auto& f : fns) {
    for (const auto& r : f.rdma) out.insert(r.char_devices.begin(), r.char_devices.end());
  }
  return out;
}

// Captures log lines for the lifetime of the object, then restores stderr output.
class LogCapture {
 public:
  LogCapture() {
    SetLogLevel(LogLevel::kInfo);
    SetLogSink([this](const std::string& line) { lines_.push_back(line); });
  }
  ~LogCapture() { SetLogSink(nullptr); }
  LogCapture(const LogCapture&) = delete;
  LogCapture& operator=(const LogCapture&) = delete;

  const std::vector<std::string>& lines() const { return lines_; }
  // Lines whose level is `level` ("warn", "info") and that contain `text`.
  int Count(const std::string& level, const std::string& text) const {
    int n = 0;
    for (const auto& l : lines_) {
      if (l.find(" " + level + " ") != std::string::npos && l.find(text) != std::string::npos) ++n;
    }
    return n;
  }
  void Clear() { lines_.clear(); }

 private:
  std::vector<std::string> lines_;
};

class DiscoveryTest : public ::testing::Test {
 protected:
  DiscoveryTest() : sim_(tmp_.path()), host_(NewRootedHost(tmp_.path())) {}

  void SetUp() override { ASSERT_FALSE(tmp_.path().empty()); }

  void Add(const fake::SimPciFunction& f) { ASSERT_TRUE(sim_.AddPciFunction(f).ok()) << f.address; }
  Inventory Scan() const { return Discoverer(*host_).Scan(); }
  // Deletes the /dev node of host path `dev_path` from the fixture tree.
  void DeleteNode(const std::string& dev_path) {
    ASSERT_EQ(std::remove(JoinPath(tmp_.path(), dev_path).c_str()), 0) << dev_path;
  }
  // The function at `address`, or nullptr.
  static const PciFunction* Find(const Inventory& inv, const std::string& address) {
    for (const auto& f : inv.functions) {
      if (f.address == address) return &f;
    }
    return nullptr;
  }

  TempDir tmp_;
  fake::SimNode sim_;
  std::unique_ptr<Host> host_;
};

// An InfiniBand PF is reported with every identifying field and its sorted char devices.
TEST_F(DiscoveryTest, DiscoversInfinibandPf) {
  fake::SimPciFunction pf = IbPf("0000:3b:00.0", "ib0", "mlx5_0");
  pf.numa_node = 1;
  Add(pf);

  Inventory inv = Scan();
  EXPECT_TRUE(inv.rdma_cm_present);
  EXPECT_THAT(inv.excluded, IsEmpty());
  ASSERT_THAT(inv.functions, SizeIs(1));
  const PciFunction& f = inv.functions[0];
  EXPECT_EQ(f.address, "0000:3b:00.0");
  EXPECT_EQ(f.vendor, "15b3");
  EXPECT_EQ(f.device, "101b");
  EXPECT_EQ(f.class_code, 0x020700u);
  EXPECT_EQ(f.driver, "mlx5_core");
  EXPECT_EQ(f.numa_node, 1);
  EXPECT_THAT(f.netdevs, ElementsAre("ib0"));
  EXPECT_THAT(f.link_types, ElementsAre("infiniband"));
  EXPECT_FALSE(f.is_vf);
  EXPECT_EQ(f.pf_address, "");
  EXPECT_THAT(f.pf_netdevs, ElementsAre("ib0"));
  ASSERT_THAT(f.rdma, SizeIs(1));
  EXPECT_EQ(f.rdma[0].name, "mlx5_0");
  EXPECT_THAT(f.rdma[0].link_layers, ElementsAre("infiniband"));
  EXPECT_THAT(f.rdma[0].char_devices, ElementsAre("/dev/infiniband/issm0", "/dev/infiniband/umad0",
                                                  "/dev/infiniband/uverbs0"));
}

// A RoCE PF has the "ether" link type, from both its netdev and its RDMA port.
TEST_F(DiscoveryTest, RocePfIsEther) {
  Add(RocePf("0000:5e:00.0", "enp94s0f0", "mlx5_0"));

  Inventory inv = Scan();
  ASSERT_THAT(inv.functions, SizeIs(1));
  EXPECT_THAT(inv.functions[0].link_types, ElementsAre("ether"));
  ASSERT_THAT(inv.functions[0].rdma, SizeIs(1));
  EXPECT_THAT(inv.functions[0].rdma[0].link_layers, ElementsAre("ether"));
}

// A VF knows its PF's address and the PF's netdevs; the PF is not a VF.
TEST_F(DiscoveryTest, VfReportsItsPf) {
  Add(RocePf("0000:3b:00.0", "enp59s0f0", "mlx5_0"));
  fake::SimPciFunction vf = RocePf("0000:3b:00.2", "enp59s0f0v0", "mlx5_2");
  vf.device = "101e";
  vf.physfn = "0000:3b:00.0";
  Add(vf);

  Inventory inv = Scan();
  ASSERT_THAT(Addresses(inv.functions), ElementsAre("0000:3b:00.0", "0000:3b:00.2"));
  const PciFunction& pf = inv.functions[0];
  const PciFunction& v = inv.functions[1];
  EXPECT_FALSE(pf.is_vf);
  EXPECT_TRUE(v.is_vf);
  EXPECT_EQ(v.pf_address, "0000:3b:00.0");
  EXPECT_THAT(v.netdevs, ElementsAre("enp59s0f0v0"));
  EXPECT_THAT(v.pf_netdevs, ElementsAre("enp59s0f0"));
}

// A scalable function (auxiliary device under its PF) is discovered with the PF's PCI
// identity, its own netdev, RDMA device and char devices, and its health inputs.
TEST_F(DiscoveryTest, ScalableFunctionUnderItsPf) {
  fake::SimPciFunction pf = RocePf("0000:3b:00.0", "enp59s0f0", "mlx5_0");
  pf.numa_node = 1;
  Add(pf);
  fake::SimSubFunction sf;
  sf.name = "mlx5_core.sf.4";
  sf.parent = "0000:3b:00.0";
  sf.sfnum = 88;
  sf.netdevs = {"enp59s0f0s88"};
  sf.rdma_device = "mlx5_4";
  ASSERT_TRUE(sim_.AddSubFunction(sf).ok());

  Inventory inv = Scan();
  ASSERT_THAT(Addresses(inv.functions), ElementsAre("0000:3b:00.0", "mlx5_core.sf.4"));
  EXPECT_TRUE(inv.present.count("mlx5_core.sf.4"));
  const PciFunction& f = inv.functions[1];
  EXPECT_TRUE(f.is_sf);
  EXPECT_FALSE(f.is_vf);
  EXPECT_EQ(f.sf_num, 88);
  EXPECT_EQ(f.pf_address, "0000:3b:00.0");
  EXPECT_THAT(f.pf_netdevs, ElementsAre("enp59s0f0"));
  EXPECT_EQ(f.vendor, "15b3");
  EXPECT_EQ(f.numa_node, 1);
  EXPECT_EQ(f.driver, "mlx5_core.sf");
  EXPECT_THAT(f.netdevs, ElementsAre("enp59s0f0s88"));
  ASSERT_THAT(f.rdma, SizeIs(1));
  EXPECT_EQ(f.rdma[0].name, "mlx5_4");
  EXPECT_THAT(f.rdma[0].char_devices, ElementsAre("/dev/infiniband/issm1", "/dev/infiniband/umad1",
                                                  "/dev/infiniband/uverbs1"));
  EXPECT_EQ(hostfacts::DeviceDir(DeviceOf(f)), "/sys/bus/auxiliary/devices/mlx5_core.sf.4");

  // An Ethernet SF, like a VF, is healthy while its PF's port is up, whatever its own
  // (idle) netdev and the RoCE port that follows it say.
  ASSERT_TRUE(sim_.SetPortState("mlx5_core.sf.4", 1, "1: DOWN").ok());
  PciFunction copy = f;
  Discoverer(*host_).RefreshHealth(&copy);
  EXPECT_TRUE(copy.healthy) << copy.health_reason;
  ASSERT_TRUE(sim_.SetOperState("0000:3b:00.0", "enp59s0f0", "down").ok());
  Discoverer(*host_).RefreshHealth(&copy);
  EXPECT_FALSE(copy.healthy);
  EXPECT_EQ(copy.health_reason, "PF netdev enp59s0f0 is down");

  // Hot-removal of the SF.
  ASSERT_TRUE(sim_.RemovePciFunction("mlx5_core.sf.4").ok());
  EXPECT_THAT(Addresses(Scan().functions), ElementsAre("0000:3b:00.0"));
}

// Soft-RoCE devices are virtual (/sys/devices/virtual/infiniband/rxe0, no PCI parent): one
// on an SR-IOV VF's netdev and one on a veth are found through `parent`, with their char
// devices from the virtual class devices, the VF netdev's NUMA node, and no PCI identity.
TEST_F(DiscoveryTest, VirtualRdmaDevicesOnVfAndVeth) {
  fake::SimPciFunction pf = PlainNic("0000:01:00.0", "eth0");
  pf.numa_node = 1;
  Add(pf);
  fake::SimPciFunction vf = PlainNic("0000:01:10.0", "eth4");
  vf.physfn = "0000:01:00.0";
  vf.numa_node = 1;
  vf.driver = "igbvf";
  Add(vf);
  ASSERT_TRUE(sim_.AddVirtualRdma({"rxe0", "eth4", "0000:01:10.0"}).ok());
  fake::SimVirtualRdma veth{"rxe1", "veth0", ""};
  veth.write_parent = false;  // only the GID table names the netdev
  ASSERT_TRUE(sim_.AddVirtualRdma(veth).ok());

  Inventory inv = Scan();
  ASSERT_THAT(Addresses(inv.functions), ElementsAre("rxe0", "rxe1"));
  EXPECT_TRUE(inv.present.count("rxe0"));
  EXPECT_TRUE(inv.present.count("rxe1"));
  const PciFunction& r0 = inv.functions[0];
  EXPECT_TRUE(r0.is_virtual);
  EXPECT_FALSE(r0.is_vf);
  EXPECT_EQ(r0.vendor, "");
  EXPECT_EQ(r0.device, "");
  EXPECT_EQ(r0.driver, "");
  EXPECT_EQ(r0.class_code, 0u);
  EXPECT_EQ(r0.numa_node, 1);
  EXPECT_THAT(r0.netdevs, ElementsAre("eth4"));
  EXPECT_THAT(r0.pf_netdevs, IsEmpty());
  EXPECT_THAT(r0.link_types, ElementsAre("ether"));
  ASSERT_THAT(r0.rdma, SizeIs(1));
  EXPECT_EQ(r0.rdma[0].name, "rxe0");
  EXPECT_THAT(r0.rdma[0].char_devices, ElementsAre("/dev/infiniband/issm0", "/dev/infiniband/umad0",
                                                   "/dev/infiniband/uverbs0"));
  EXPECT_TRUE(r0.healthy);
  EXPECT_EQ(hostfacts::DeviceDir(DeviceOf(r0)), "/sys/class/infiniband/rxe0");
  const PciFunction& r1 = inv.functions[1];
  EXPECT_THAT(r1.netdevs, ElementsAre("veth0"));
  EXPECT_EQ(r1.numa_node, -1);
  EXPECT_THAT(r1.rdma[0].char_devices, ElementsAre("/dev/infiniband/issm1", "/dev/infiniband/umad1",
                                                   "/dev/infiniband/uverbs1"));

  // Health: the port state under /sys/class/infiniband, the netdev under /sys/class/net.
  ASSERT_TRUE(sim_.SetPortState("rxe0", 1, "1: DOWN").ok());
  ASSERT_TRUE(sim_.SetOperState("0000:01:10.0", "eth4", "down").ok());
  PciFunction copy = r0;
  Discoverer(*host_).RefreshHealth(&copy);
  EXPECT_FALSE(copy.healthy);
  EXPECT_EQ(copy.health_reason, "rxe0 port 1 is 1: DOWN; netdev eth4 is down");

  // `rdma link delete rxe1`: gone, with its char devices; the VF's rxe0 stays.
  ASSERT_TRUE(sim_.RemovePciFunction("rxe1").ok());
  inv = Scan();
  EXPECT_THAT(Addresses(inv.functions), ElementsAre("rxe0"));
  EXPECT_FALSE(inv.present.count("rxe1"));
}

// A virtual RDMA device whose uverbs node is missing is excluded, naming it.
TEST_F(DiscoveryTest, VirtualRdmaDeviceWithoutUverbsNodeIsExcluded) {
  ASSERT_TRUE(sim_.AddVirtualRdma({"rxe0", "veth0", ""}).ok());
  DeleteNode("/dev/infiniband/uverbs0");
  Inventory inv = Scan();
  EXPECT_THAT(inv.functions, IsEmpty());
  ASSERT_THAT(Addresses(inv.excluded), ElementsAre("rxe0"));
  EXPECT_THAT(inv.excluded[0].reason, HasSubstr("/dev/infiniband/uverbs0"));
}

// PCI RDMA devices are not mistaken for virtual ones (their class links are not virtual),
// and virtual ones sort among PCI functions by name.
TEST_F(DiscoveryTest, PciAndVirtualDevicesTogether) {
  Add(RocePf("0000:3b:00.0", "enp59s0f0", "mlx5_0"));
  ASSERT_TRUE(sim_.AddVirtualRdma({"rxe0", "veth0", ""}).ok());
  Inventory inv = Scan();
  ASSERT_THAT(Addresses(inv.functions), ElementsAre("0000:3b:00.0", "rxe0"));
  EXPECT_FALSE(inv.functions[0].is_virtual);
  EXPECT_THAT(inv.functions[0].rdma[0].char_devices, SizeIs(3));
  EXPECT_THAT(inv.functions[1].rdma[0].char_devices, SizeIs(3));
}

// An auxiliary device without RDMA (e.g. mlx5_core.eth.0) is skipped quietly.
TEST_F(DiscoveryTest, AuxiliaryDeviceWithoutRdmaIsSkipped) {
  Add(RocePf("0000:3b:00.0", "enp59s0f0", "mlx5_0"));
  fake::SimSubFunction eth;
  eth.name = "mlx5_core.eth.0";
  eth.parent = "0000:3b:00.0";
  ASSERT_TRUE(sim_.AddSubFunction(eth).ok());
  Inventory inv = Scan();
  EXPECT_THAT(Addresses(inv.functions), ElementsAre("0000:3b:00.0"));
  EXPECT_THAT(inv.excluded, IsEmpty());
}

// A two-port HCA gets both umad and both issm nodes, and one link layer per port.
TEST_F(DiscoveryTest, MultiPortHcaHasCharDevicesOfEveryPort) {
  fake::SimPciFunction pf = IbPf("0000:3b:00.0", "ib0", "mlx5_0");
  pf.ports = 2;
  Add(pf);

  Inventory inv = Scan();
  ASSERT_THAT(inv.functions, SizeIs(1));
  ASSERT_THAT(inv.functions[0].rdma, SizeIs(1));
  const RdmaDeviceInfo& r = inv.functions[0].rdma[0];
  EXPECT_THAT(r.char_devices,
              ElementsAre("/dev/infiniband/issm0", "/dev/infiniband/issm1", "/dev/infiniband/umad0",
                          "/dev/infiniband/umad1", "/dev/infiniband/uverbs0"));
  EXPECT_THAT(r.link_layers, ElementsAre("infiniband", "infiniband"));
}

// A network function without an RDMA device is neither offered nor excluded.
TEST_F(DiscoveryTest, NicWithoutRdmaIsSkipped) {
  Add(PlainNic("0000:18:00.0", "eno1"));
  Add(IbPf("0000:3b:00.0", "ib0", "mlx5_0"));

  Inventory inv = Scan();
  EXPECT_THAT(Addresses(inv.functions), ElementsAre("0000:3b:00.0"));
  EXPECT_THAT(inv.excluded, IsEmpty());
}

// An RDMA function without a bound driver is skipped without an exclusion or a warning.
TEST_F(DiscoveryTest, UnboundFunctionIsSkippedQuietly) {
  fake::SimPciFunction unbound = IbPf("0000:3b:00.0", "ib0", "mlx5_0");
  unbound.driver = "";
  Add(unbound);
  Add(IbPf("0000:86:00.0", "ib1", "mlx5_1"));

  LogCapture log;
  Inventory inv = Scan();
  EXPECT_THAT(Addresses(inv.functions), ElementsAre("0000:86:00.0"));
  EXPECT_THAT(inv.excluded, IsEmpty());
  EXPECT_EQ(log.Count("warn", ""), 0);
}

// A non-network PCI class is skipped even when it has an RDMA device and a driver.
TEST_F(DiscoveryTest, NonNetworkClassIsSkipped) {
  fake::SimPciFunction sata = IbPf("0000:00:17.0", "ib9", "mlx5_9");
  sata.class_code = "0x010601";
  sata.driver = "ahci";
  Add(sata);

  Inventory inv = Scan();
  EXPECT_THAT(inv.functions, IsEmpty());
  EXPECT_THAT(inv.excluded, IsEmpty());
}

// Without /dev/infiniband/rdma_cm every RDMA function is excluded with a reason naming it.
TEST_F(DiscoveryTest, MissingRdmaCmExcludesEveryRdmaFunction) {
  Add(IbPf("0000:3b:00.0", "ib0", "mlx5_0"));
  Add(RocePf("0000:86:00.0", "enp134s0f0", "mlx5_1"));
  Add(PlainNic("0000:18:00.0", "eno1"));
  ASSERT_TRUE(sim_.SetRdmaCm(false).ok());

  Inventory inv = Scan();
  EXPECT_FALSE(inv.rdma_cm_present);
  EXPECT_THAT(inv.functions, IsEmpty());
  ASSERT_THAT(Addresses(inv.excluded), ElementsAre("0000:3b:00.0", "0000:86:00.0"));
  for (const auto& e : inv.excluded) EXPECT_THAT(e.reason, HasSubstr("rdma_cm")) << e.address;
}

// A function without a uverbs char device is excluded with a reason naming uverbs.
TEST_F(DiscoveryTest, MissingUverbsExcludes) {
  fake::SimPciFunction pf = IbPf("0000:3b:00.0", "ib0", "mlx5_0");
  pf.with_uverbs = false;
  Add(pf);
  Add(IbPf("0000:86:00.0", "ib1", "mlx5_1"));

  Inventory inv = Scan();
  EXPECT_THAT(Addresses(inv.functions), ElementsAre("0000:86:00.0"));
  ASSERT_THAT(Addresses(inv.excluded), ElementsAre("0000:3b:00.0"));
  EXPECT_THAT(inv.excluded[0].reason, HasSubstr("uverbs"));
}

// umad and issm are optional: a function with only uverbs is usable.
TEST_F(DiscoveryTest, MissingUmadAndIssmIsUsable) {
  fake::SimPciFunction pf = IbPf("0000:3b:00.0", "ib0", "mlx5_0");
  pf.with_umad = false;
  pf.with_issm = false;
  Add(pf);

  Inventory inv = Scan();
  EXPECT_THAT(inv.excluded, IsEmpty());
  ASSERT_THAT(inv.functions, SizeIs(1));
  ASSERT_THAT(inv.functions[0].rdma, SizeIs(1));
  EXPECT_THAT(inv.functions[0].rdma[0].char_devices, ElementsAre("/dev/infiniband/uverbs0"));
}

// A uverbs node listed in sysfs but missing from /dev excludes the function.
TEST_F(DiscoveryTest, DeletedUverbsNodeExcludes) {
  Add(IbPf("0000:3b:00.0", "ib0", "mlx5_0"));
  DeleteNode("/dev/infiniband/uverbs0");

  Inventory inv = Scan();
  EXPECT_THAT(inv.functions, IsEmpty());
  ASSERT_THAT(Addresses(inv.excluded), ElementsAre("0000:3b:00.0"));
  EXPECT_THAT(inv.excluded[0].reason, HasSubstr("uverbs0"));
}

// A umad node missing from /dev is dropped; the function stays usable.
TEST_F(DiscoveryTest, DeletedUmadNodeIsDropped) {
  Add(IbPf("0000:3b:00.0", "ib0", "mlx5_0"));
  DeleteNode("/dev/infiniband/umad0");

  Inventory inv = Scan();
  EXPECT_THAT(inv.excluded, IsEmpty());
  ASSERT_THAT(inv.functions, SizeIs(1));
  ASSERT_THAT(inv.functions[0].rdma, SizeIs(1));
  EXPECT_THAT(inv.functions[0].rdma[0].char_devices,
              ElementsAre("/dev/infiniband/issm0", "/dev/infiniband/uverbs0"));
}

// Every netdev of a function is listed, sorted by name.
TEST_F(DiscoveryTest, ListsAllNetdevsSorted) {
  fake::SimPciFunction pf = RocePf("0000:3b:00.0", "vlan7", "mlx5_0");
  pf.netdevs = {"vlan7", "enp59s0f0", "bond0"};
  Add(pf);

  Inventory inv = Scan();
  ASSERT_THAT(inv.functions, SizeIs(1));
  EXPECT_THAT(inv.functions[0].netdevs, ElementsAre("bond0", "enp59s0f0", "vlan7"));
  EXPECT_THAT(inv.functions[0].pf_netdevs, ElementsAre("bond0", "enp59s0f0", "vlan7"));
}

// numa_node -1 (no NUMA information) is reported as -1.
TEST_F(DiscoveryTest, UnknownNumaNodeIsMinusOne) {
  fake::SimPciFunction pf = IbPf("0000:3b:00.0", "ib0", "mlx5_0");
  pf.numa_node = -1;
  Add(pf);

  Inventory inv = Scan();
  ASSERT_THAT(inv.functions, SizeIs(1));
  EXPECT_EQ(inv.functions[0].numa_node, -1);
}

// After a hot-remove the function and its char devices are gone from the next scan.
TEST_F(DiscoveryTest, HotRemovedFunctionDisappears) {
  Add(IbPf("0000:3b:00.0", "ib0", "mlx5_0"));
  Add(IbPf("0000:86:00.0", "ib1", "mlx5_1"));
  Inventory before = Scan();
  const PciFunction* gone = Find(before, "0000:3b:00.0");
  ASSERT_NE(gone, nullptr);
  std::set<std::string> gone_devs = AllCharDevices({*gone});
  ASSERT_FALSE(gone_devs.empty());

  ASSERT_TRUE(sim_.RemovePciFunction("0000:3b:00.0").ok());
  Inventory after = Scan();
  EXPECT_THAT(Addresses(after.functions), ElementsAre("0000:86:00.0"));
  EXPECT_THAT(after.excluded, IsEmpty());
  std::set<std::string> left = AllCharDevices(after.functions);
  EXPECT_FALSE(left.empty());
  for (const auto& d : gone_devs) EXPECT_EQ(left.count(d), 0u) << d;
}

// Functions and exclusions come out sorted by address whatever the creation order.
TEST_F(DiscoveryTest, ResultsAreSortedByAddress) {
  Add(IbPf("0000:af:00.0", "ib3", "mlx5_3"));
  Add(IbPf("0000:3b:00.0", "ib0", "mlx5_0"));
  Add(IbPf("0000:86:00.1", "ib2", "mlx5_2"));
  Add(IbPf("0000:86:00.0", "ib1", "mlx5_1"));
  fake::SimPciFunction broken_d8 = RocePf("0000:d8:00.0", "eth5", "mlx5_5");
  broken_d8.with_uverbs = false;
  Add(broken_d8);
  fake::SimPciFunction broken_5e = RocePf("0000:5e:00.0", "eth4", "mlx5_4");
  broken_5e.with_uverbs = false;
  Add(broken_5e);

  Inventory inv = Scan();
  EXPECT_THAT(Addresses(inv.functions),
              ElementsAre("0000:3b:00.0", "0000:86:00.0", "0000:86:00.1", "0000:af:00.0"));
  EXPECT_THAT(Addresses(inv.excluded), ElementsAre("0000:5e:00.0", "0000:d8:00.0"));
}

// A node with 1024 RDMA functions is scanned completely.
TEST_F(DiscoveryTest, ScansThousandAndTwentyFourFunctions) {
  constexpr int kCount = 1024;
  for (int i = 0; i < kCount; ++i) {
    char addr[16];
    std::snprintf(addr, sizeof(addr), "0000:%02x:%02x.%d", 0x10 + i / 64, (i / 8) % 8, i % 8);
    Add(RocePf(addr, "eth" + std::to_string(i), "mlx5_" + std::to_string(i)));
    if (HasFatalFailure()) return;
  }

  Inventory inv = Scan();
  EXPECT_THAT(inv.excluded, IsEmpty());
  ASSERT_THAT(inv.functions, SizeIs(kCount));
  std::set<std::string> names;
  for (const auto& f : inv.functions) {
    ASSERT_THAT(f.rdma, SizeIs(1)) << f.address;
    names.insert(f.rdma[0].name);
  }
  EXPECT_THAT(names, SizeIs(kCount));
  std::vector<std::string> addrs = Addresses(inv.functions);
  EXPECT_TRUE(std::is_sorted(addrs.begin(), addrs.end()));
}

// The reporter warns once per excluded device, not once per scan.
TEST(ExclusionReporterTest, WarnsOncePerDevice) {
  LogCapture log;
  ExclusionReporter reporter;
  std::vector<Exclusion> ex = {{"0000:3b:00.0", "missing uverbs"},
                               {"0000:86:00.0", "missing rdma_cm"}};
  reporter.Report(ex);
  reporter.Report(ex);
  reporter.Report(ex);

  EXPECT_EQ(log.Count("warn", "0000:3b:00.0"), 1);
  EXPECT_EQ(log.Count("warn", "0000:86:00.0"), 1);
  EXPECT_THAT(log.lines(), SizeIs(2));
}

// A changed reason is warned about again, for that device only.
TEST(ExclusionReporterTest, WarnsAgainWhenReasonChanges) {
  LogCapture log;
  ExclusionReporter reporter;
  reporter.Report({{"0000:3b:00.0", "missing uverbs"}, {"0000:86:00.0", "missing rdma_cm"}});
  log.Clear();

  reporter.Report({{"0000:3b:00.0", "missing rdma_cm"}, {"0000:86:00.0", "missing rdma_cm"}});
  EXPECT_EQ(log.Count("warn", "0000:3b:00.0"), 1);
  EXPECT_EQ(log.Count("warn", "0000:86:00.0"), 0);
  EXPECT_THAT(log.lines(), SizeIs(1));
}

// A device that leaves the exclusions gets one "no longer excluded" info line.
TEST(ExclusionReporterTest, LogsRecovery) {
  LogCapture log;
  ExclusionReporter reporter;
  reporter.Report({{"0000:3b:00.0", "missing uverbs"}, {"0000:86:00.0", "missing uverbs"}});
  log.Clear();

  reporter.Report({{"0000:86:00.0", "missing uverbs"}});
  reporter.Report({{"0000:86:00.0", "missing uverbs"}});
  ASSERT_THAT(log.lines(), SizeIs(1));
  EXPECT_EQ(log.Count("info", "no longer excluded"), 1);
  EXPECT_THAT(log.lines()[0], HasSubstr("0000:3b:00.0"));
}

// ParseHexId normalises sysfs ids to four lower-case digits and rejects non-ids.
TEST(ParseHexIdTest, NormalisesAndRejects) {
  EXPECT_EQ(ParseHexId("0x15B3\n"), "15b3");
  EXPECT_EQ(ParseHexId("15b3"), "15b3");
  EXPECT_EQ(ParseHexId("zz"), "");
  EXPECT_EQ(ParseHexId("0x12345"), "");
  EXPECT_EQ(ParseHexId(""), "");
  EXPECT_EQ(ParseHexId("0x"), "");
}

}  // namespace
}  // namespace hcashare::node
