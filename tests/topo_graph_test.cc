// Tests for topo/: class table, BDF parsing, the graph, FlattenSwitches as a pass of its
// own, hop and path classes, and the best-NIC choice, on hand-built snapshots.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "common/host.h"
#include "common/temp_dir.h"
#include "testing/sim_node.h"
#include "topo/endpoints.h"
#include "topo/format.h"
#include "topo/graph.h"
#include "topo/paths.h"
#include "topo/report.h"

namespace hcashare::topo {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

namespace fs = std::filesystem;

PciEndpoint Ep(const std::string& address, DeviceKind kind, int numa, const std::string& rc,
               std::vector<std::string> bridges, std::vector<std::string> rdma = {}) {
  PciEndpoint e;
  e.address = address;
  e.kind = kind;
  e.numa_node = numa;
  e.root_complex = rc;
  e.bridges = std::move(bridges);
  e.rdma = std::move(rdma);
  return e;
}

// One root port (0000:00:01.0) with a switch (upstream 0000:01:00.0, downstream ports
// 0000:02:0N.0); GPU a under port 0, NIC b under port 1, and a nested switch (0000:03:00.0
// -> 0000:04:00.0) with GPU c. GPU d sits directly on the root bus.
Endpoints SwitchSnapshot() {
  Endpoints s;
  const std::vector<std::string> sw = {"0000:00:01.0", "0000:01:00.0"};
  auto under = [&](std::vector<std::string> extra) {
    std::vector<std::string> v = sw;
    v.insert(v.end(), extra.begin(), extra.end());
    return v;
  };
  s.devices = {
      Ep("0000:05:00.0", DeviceKind::kGpu, 0, "pci0000:00", under({"0000:02:00.0"})),
      Ep("0000:06:00.0", DeviceKind::kGpu, 0, "pci0000:00",
         under({"0000:02:02.0", "0000:03:00.0", "0000:04:00.0"})),
      Ep("0000:00:02.0", DeviceKind::kGpu, 0, "pci0000:00", {}),
      Ep("0000:07:00.0", DeviceKind::kNic, 0, "pci0000:00", under({"0000:02:01.0"}), {"mlx5_0"}),
  };
  return s;
}

TEST(TopoSnapshotTest, IsBdf) {
  EXPECT_TRUE(IsBdf("0000:3b:00.0"));
  EXPECT_TRUE(IsBdf("10000:e0:1d.7"));  // VMD domain
  EXPECT_FALSE(IsBdf("pci0000:3a"));
  EXPECT_FALSE(IsBdf("0000:3b:00.8"));
  EXPECT_FALSE(IsBdf("0000:3B:00.0"));
  EXPECT_FALSE(IsBdf("0000:3b:00"));
  EXPECT_FALSE(IsBdf("virtio0"));
}

TEST(TopoSnapshotTest, ClassTable) {
  EXPECT_EQ(KindOfClass(0x030200, "10de"), DeviceKind::kGpu);  // NVIDIA 3D controller
  EXPECT_EQ(KindOfClass(0x030000, "1002"), DeviceKind::kGpu);  // AMD VGA
  EXPECT_EQ(KindOfClass(0x030000, "1a03"), std::nullopt);      // ASPEED BMC console
  EXPECT_EQ(KindOfClass(0x038000, "8086"), std::nullopt);      // other display controller
  EXPECT_EQ(KindOfClass(0x020700, "15b3"), DeviceKind::kNic);  // InfiniBand
  EXPECT_EQ(KindOfClass(0x020000, "8086"), DeviceKind::kNic);  // Ethernet
  EXPECT_EQ(KindOfClass(0x060400, "8086"), std::nullopt);      // bridge
}

// A device behind a VMD: the root complex is the first non-BDF component going up.
TEST(TopoSnapshotTest, ReadsRootComplexBehindVmd) {
  TempDir tmp;
  const std::string dev =
      "/sys/devices/pci0000:00/0000:00:0e.5/pci10000:e0/10000:e0:1d.0/10000:e1:00.0";
  fs::create_directories(tmp.path() + dev);
  std::ofstream(tmp.path() + dev + "/class") << "0x020000\n";
  std::ofstream(tmp.path() + dev + "/vendor") << "0x8086\n";
  fs::create_directories(tmp.path() + "/sys/bus/pci/devices");
  fs::create_symlink("../../.." + dev.substr(4), tmp.path() + "/sys/bus/pci/devices/10000:e1:00.0");
  auto snap = ReadEndpoints(*NewRootedHost(tmp.path()));
  ASSERT_TRUE(snap.ok()) << snap.status().ToString();
  ASSERT_EQ(snap->devices.size(), 1u);
  EXPECT_EQ(snap->devices[0].root_complex, "pci0000:00/0000:00:0e.5/pci10000:e0");
  EXPECT_THAT(snap->devices[0].bridges, ElementsAre("10000:e0:1d.0"));
  EXPECT_EQ(snap->devices[0].numa_node, -1);
}

// Soft-RoCE devices are not on PCI: they are listed apart, with their netdev and that
// netdev's PCI function, and stay out of the matrix; the table and JSON show them.
TEST(TopoSnapshotTest, VirtualRdmaDevicesAreListedNotPlaced) {
  TempDir tmp;
  fake::SimNode node(tmp.path());
  fake::SimPciFunction pf;
  pf.address = "0000:01:00.0";
  pf.vendor = "8086";
  pf.driver = "igb";
  pf.netdevs = {"eth0"};
  ASSERT_TRUE(node.AddPciFunction(pf).ok());
  fake::SimPciFunction vf = pf;
  vf.address = "0000:01:10.2";
  vf.driver = "igbvf";
  vf.netdevs = {"eth5"};
  vf.physfn = pf.address;
  ASSERT_TRUE(node.AddPciFunction(vf).ok());
  ASSERT_TRUE(node.AddVirtualRdma({"rxe0", "eth5", vf.address}).ok());
  ASSERT_TRUE(node.AddVirtualRdma({"rxe1", "veth0", ""}).ok());

  auto snap = ReadEndpoints(*NewRootedHost(tmp.path()));
  ASSERT_TRUE(snap.ok()) << snap.status().ToString();
  ASSERT_EQ(snap->virtual_rdma.size(), 2u);
  EXPECT_EQ(snap->virtual_rdma[0].name, "rxe0");
  EXPECT_EQ(snap->virtual_rdma[0].netdev, "eth5");
  EXPECT_EQ(snap->virtual_rdma[0].pci, "0000:01:10.2");
  EXPECT_EQ(snap->virtual_rdma[1].netdev, "veth0");
  EXPECT_EQ(snap->virtual_rdma[1].pci, "");
  for (const auto& d : snap->devices) EXPECT_THAT(d.rdma, IsEmpty()) << d.address;

  const TopoReport report = BuildReport(*snap);
  EXPECT_EQ(report.matrix.size(), 2u);  // the PF and the VF only
  const std::string table = FormatTable(report);
  EXPECT_NE(table.find("Virtual RDMA devices (not on PCI, so not in the matrix):\n\n"
                       "  rxe0  netdev eth5 (on 0000:01:10.2)\n"
                       "  rxe1  netdev veth0\n"),
            std::string::npos)
      << table;
  const auto json = ToJson(report);
  ASSERT_EQ(json.at("virtual_rdma").size(), 2u);
  EXPECT_EQ(json.at("virtual_rdma")[0].at("pci"), "0000:01:10.2");
  EXPECT_TRUE(json.at("virtual_rdma")[1].at("pci").is_null());
}

TEST(TopoSnapshotTest, MissingSysfsIsNotFound) {
  TempDir tmp;
  auto snap = ReadEndpoints(*NewRootedHost(tmp.path()));
  EXPECT_TRUE(snap.status().IsNotFound()) << snap.status().ToString();
}

TEST(TopoGraphTest, BuildsTreeWithStableIds) {
  const Graph g = Graph::FromSnapshot(SwitchSnapshot());
  EXPECT_THAT(g.Ancestors("0000:05:00.0"),
              ElementsAre("0000:05:00.0", "0000:02:00.0", "0000:01:00.0", "0000:00:01.0",
                          "rc:pci0000:00", "numa:0", "system"));
  EXPECT_THAT(g.Find("0000:01:00.0")->children,
              ElementsAre("0000:02:00.0", "0000:02:01.0", "0000:02:02.0"));
  EXPECT_THAT(g.Ancestors("nope"), IsEmpty());
}

TEST(TopoGraphTest, FlattenSwitchesFoldsDownstreamPorts) {
  Graph g = Graph::FromSnapshot(SwitchSnapshot());
  FlattenSwitches(&g);
  // The outer switch is one node holding GPU a, the NIC and the nested switch.
  const Node* sw = g.Find("0000:01:00.0");
  ASSERT_NE(sw, nullptr);
  EXPECT_THAT(sw->children, ElementsAre("0000:03:00.0", "0000:05:00.0", "0000:07:00.0"));
  EXPECT_THAT(sw->merged, ElementsAre("0000:02:00.0", "0000:02:01.0", "0000:02:02.0"));
  EXPECT_EQ(g.Find("0000:02:00.0"), nullptr);
  // The nested switch: its downstream port folded too.
  EXPECT_THAT(g.Find("0000:03:00.0")->children, ElementsAre("0000:06:00.0"));
  EXPECT_THAT(g.Find("0000:03:00.0")->merged, ElementsAre("0000:04:00.0"));
  // The root port stays.
  EXPECT_THAT(g.Find("0000:00:01.0")->children, ElementsAre("0000:01:00.0"));
}

TEST(TopoPathsTest, HopTable) {
  EXPECT_EQ(HopType(NodeType::kGpu, NodeType::kBridge), PathType::kPix);
  EXPECT_EQ(HopType(NodeType::kBridge, NodeType::kBridge), PathType::kPxb);
  EXPECT_EQ(HopType(NodeType::kNic, NodeType::kRootComplex), PathType::kPhb);
  EXPECT_EQ(HopType(NodeType::kBridge, NodeType::kRootComplex), PathType::kPhb);
  EXPECT_EQ(HopType(NodeType::kRootComplex, NodeType::kNuma), PathType::kNode);
  EXPECT_EQ(HopType(NodeType::kNuma, NodeType::kSystem), PathType::kSys);
  for (const char* n : {"X", "PIX", "PXB", "PHB", "NODE", "SYS"}) {
    EXPECT_STREQ(PathTypeName(*ParsePathType(n)), n);
  }
  EXPECT_EQ(ParsePathType("NV4"), std::nullopt);
}

TEST(TopoPathsTest, SwitchRuleAfterFlattening) {
  Graph g = Graph::FromSnapshot(SwitchSnapshot());
  // Before flattening the downstream ports count as bridges: the same switch is PXB.
  EXPECT_EQ(PathBetween(g, "0000:05:00.0", "0000:07:00.0"), PathType::kPxb);
  FlattenSwitches(&g);
  EXPECT_EQ(PathBetween(g, "0000:05:00.0", "0000:05:00.0"), PathType::kSelf);
  EXPECT_EQ(PathBetween(g, "0000:05:00.0", "0000:07:00.0"), PathType::kPix);
  EXPECT_EQ(PathBetween(g, "0000:06:00.0", "0000:07:00.0"), PathType::kPxb);  // nested
  EXPECT_EQ(PathBetween(g, "0000:00:02.0", "0000:07:00.0"), PathType::kPhb);  // root bus
}

TEST(TopoPathsTest, NodeAndSys) {
  Endpoints s;
  s.devices = {
      Ep("0000:18:00.0", DeviceKind::kGpu, 0, "pci0000:15", {"0000:15:01.0"}),
      Ep("0000:37:00.0", DeviceKind::kNic, 0, "pci0000:36", {"0000:36:01.0"}, {"mlx5_0"}),
      Ep("0000:9a:00.0", DeviceKind::kGpu, 1, "pci0000:97", {"0000:97:01.0"}),
      Ep("0000:9b:00.0", DeviceKind::kNic, 1, "pci0000:97", {"0000:97:02.0"}, {"mlx5_1"}),
  };
  Graph g = Graph::FromSnapshot(s);
  FlattenSwitches(&g);
  EXPECT_EQ(PathBetween(g, "0000:18:00.0", "0000:37:00.0"), PathType::kNode);
  EXPECT_EQ(PathBetween(g, "0000:18:00.0", "0000:9a:00.0"), PathType::kSys);
  EXPECT_EQ(PathBetween(g, "0000:9a:00.0", "0000:9b:00.0"), PathType::kPhb);
}

// A root complex that sysfs shows holding devices of two NUMA nodes: numa_node wins.
TEST(TopoPathsTest, DisagreeingNumaNodesAreSys) {
  Endpoints s;
  s.devices = {
      Ep("0000:3b:00.0", DeviceKind::kNic, 0, "pci0000:00", {"0000:00:01.0"}, {"mlx5_0"}),
      Ep("0000:86:00.0", DeviceKind::kNic, 1, "pci0000:00", {"0000:00:02.0"}, {"mlx5_1"}),
      Ep("0000:af:00.0", DeviceKind::kNic, -1, "pci0000:00", {"0000:00:03.0"}, {"mlx5_2"}),
  };
  const Graph g = Graph::FromSnapshot(s);
  EXPECT_EQ(PathBetween(g, "0000:3b:00.0", "0000:86:00.0"), PathType::kSys);
  EXPECT_EQ(PathBetween(g, "0000:3b:00.0", "0000:af:00.0"), PathType::kPhb);  // unknown
}

TEST(TopoReportTest, BestNicPrefersClassThenNumaThenPf) {
  Endpoints s;
  // Both NICs share a root complex on NUMA 0, so both are NODE from the GPU; the one
  // reporting the GPU's NUMA node wins over the one whose node is unknown, despite the
  // latter's lower address.
  s.devices = {
      Ep("0000:18:00.0", DeviceKind::kGpu, 0, "pci0000:15", {"0000:15:01.0"}),
      Ep("0000:37:00.0", DeviceKind::kNic, -1, "pci0000:36", {"0000:36:01.0"}, {"mlx5_0"}),
      Ep("0000:38:00.0", DeviceKind::kNic, 0, "pci0000:36", {"0000:36:02.0"}, {"mlx5_1"}),
  };
  TopoReport r = BuildReport(s);
  ASSERT_EQ(r.best_nics.size(), 1u);
  EXPECT_EQ(r.best_nics[0].path, PathType::kNode);
  EXPECT_EQ(r.best_nics[0].nic_name, "mlx5_1");
  EXPECT_EQ(r.nccl_ib_hca, "=mlx5_1");

  // A PF beats its VF at the same class.
  Endpoints v;
  v.devices = {
      Ep("0000:18:00.0", DeviceKind::kGpu, 0, "pci0000:15", {"0000:15:01.0"}),
      Ep("0000:19:00.1", DeviceKind::kNic, 0, "pci0000:15", {"0000:15:01.0"}, {"mlx5_1"}),
      Ep("0000:19:00.0", DeviceKind::kNic, 0, "pci0000:15", {"0000:15:01.0"}, {"mlx5_0"}),
  };
  v.devices[2].physfn = "0000:19:00.1";
  r = BuildReport(v);
  EXPECT_EQ(r.best_nics[0].nic_name, "mlx5_1");
  EXPECT_EQ(r.best_nics[0].path, PathType::kPix);
}

TEST(TopoReportTest, NoRdmaNicMeansNoChoice) {
  Endpoints s;
  s.devices = {
      Ep("0000:18:00.0", DeviceKind::kGpu, 0, "pci0000:15", {"0000:15:01.0"}),
      Ep("0000:19:00.0", DeviceKind::kNic, 0, "pci0000:15", {"0000:15:01.0"}),
  };
  TopoReport r = BuildReport(s);
  ASSERT_EQ(r.best_nics.size(), 1u);
  EXPECT_EQ(r.best_nics[0].nic, "");
  EXPECT_EQ(r.nccl_ib_hca, "");
  EXPECT_EQ(r.devices[1].name, "NIC0");
}

TEST(TopoReportTest, GpuDirectVerdicts) {
  EXPECT_STREQ(GpuDirectVerdict(PathType::kPix), "good");
  EXPECT_STREQ(GpuDirectVerdict(PathType::kPxb), "good");
  EXPECT_STREQ(GpuDirectVerdict(PathType::kPhb), "degraded");
  EXPECT_STREQ(GpuDirectVerdict(PathType::kNode), "degraded");
  EXPECT_STREQ(GpuDirectVerdict(PathType::kSys), "poor");
}

}  // namespace
}  // namespace hcashare::topo
