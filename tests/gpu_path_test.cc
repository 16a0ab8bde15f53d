// Tests for the GPU <-> NIC fast-path slice of issue 17: degraded PCIe links in topo and
// doctor, the GPUDirect RDMA peer-memory / dma-buf check, and the IOMMU mode check, each on
// a fixture tree in the real sysfs/procfs layout, plus the snapshot round trip of the new
// facts.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <array>
#include <memory>

#include <nlohmann/json.hpp>

#include "common/host.h"
#include "common/process.h"
#include "common/temp_dir.h"
#include "doctor/check.h"
#include "doctor/rdma_sysfs.h"
#include "doctor/report.h"
#include "hostfacts/attrs.h"
#include "hostfacts/reader.h"
#include "hostfacts/snapshot_json.h"
#include "testing/fake_process_limits.h"
#include "testing/fake_rdma_system.h"
#include "testing/fake_verbs.h"
#include "testing/sim_node.h"
#include "tests/test_util.h"
#include "topo/endpoints.h"
#include "topo/format.h"
#include "topo/report.h"

namespace hcashare {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr const char* kGpu = "0000:18:00.0";
constexpr const char* kNic = "0000:19:00.0";
constexpr const char* kGen4 = "16.0 GT/s PCIe";
constexpr const char* kRootPort = "0000:17:00.0";

// A node with one NVIDIA GPU and one InfiniBand HCA (mlx5_0) side by side under one root
// port (or, kBehindSwitch, under two ports of a PCIe switch below it), both links at x16
// Gen4 unless a test changes them.
// The PCIe switch of GpuNode(kBehindSwitch): upstream port kUpstream under root port
// kRootPort, the GPU under downstream port kGpuPort and the NIC under kNicPort.
constexpr const char* kUpstream = "0000:16:00.0";
constexpr const char* kGpuPort = "0000:17:01.0";
constexpr const char* kNicPort = "0000:17:02.0";
constexpr bool kBehindSwitch = true;

fake::SimPciFunction Under(fake::SimPciFunction f, const std::string& bridge) {
  f.parent_bridge = bridge;
  return f;
}

fake::SimPciBridge Bridge(const std::string& address, const std::string& parent) {
  fake::SimPciBridge b;
  b.address = address;
  b.parent = parent;
  return b;
}

struct GpuNode {
  TempDir tmp;
  fake::SimNode node{tmp.path() + "/host"};
  std::unique_ptr<Host> host = NewRootedHost(tmp.path() + "/host");
  fake::FakeVerbs verbs;
  fake::FakeRdmaSystem rdma{RdmaNetnsMode::kShared};
  fake::FakeProcessLimits limits{doctor::kUnlimited, false};
  hostfacts::HostSnapshot snap;

  explicit GpuNode(bool behind_switch = false) {
    EXPECT_TRUE(node.AddPciBridge(Bridge(kRootPort, "")).ok());
    std::string gpu_port = kRootPort, nic_port = kRootPort;
    if (behind_switch) {
      for (const auto& [port, parent] :
           {std::pair{kUpstream, kRootPort}, {kGpuPort, kUpstream}, {kNicPort, kUpstream}}) {
        EXPECT_TRUE(node.AddPciBridge(Bridge(port, parent)).ok());
      }
      gpu_port = kGpuPort;
      nic_port = kNicPort;
    }
    EXPECT_TRUE(node.AddPciFunction(Under(fake::SimNode::Gpu(kGpu), gpu_port)).ok());
    EXPECT_TRUE(
        node.AddPciFunction(Under(fake::SimNode::IbHca(kNic, "ib0", "mlx5_0"), nic_port)).ok());
    EXPECT_TRUE(node.SetPcieLink(kGpu, kGen4, 16, kGen4, 16).ok());
    EXPECT_TRUE(node.SetPcieLink(kNic, kGen4, 16, kGen4, 16).ok());
  }

  std::vector<doctor::CheckResult> Doctor() {
    snap = doctor::ReadDoctorSnapshot(*host);
    return doctor::RunChecks({snap, verbs, rdma, limits, {}});
  }
  topo::TopoReport Topo() {
    auto eps = topo::EndpointsOf(hostfacts::ReadHostSnapshot(*host));
    EXPECT_TRUE(eps.ok());
    return topo::BuildReport(*eps);
  }
};

std::vector<doctor::CheckResult> Named(const std::vector<doctor::CheckResult>& all,
                                       const std::string& name) {
  std::vector<doctor::CheckResult> out;
  for (const auto& r : all) {
    if (r.name == name) out.push_back(r);
  }
  return out;
}

// The one result named `name` (fails the test when there is not exactly one).
doctor::CheckResult One(const std::vector<doctor::CheckResult>& all, const std::string& name) {
  auto v = Named(all, name);
  EXPECT_EQ(v.size(), 1u) << name;
  return v.empty() ? doctor::CheckResult{} : v[0];
}

// The JSON device entry of `pci` in topo's report.
nlohmann::ordered_json TopoDevice(const topo::TopoReport& r, const std::string& pci) {
  const nlohmann::ordered_json doc = topo::ToJson(r);
  for (const auto& d : doc["devices"]) {
    if (d["pci"] == pci) return d;
  }
  return nullptr;
}

TEST(GpuPathAttrsTest, ParsesLinkSpeedsCmdlineAndReleases) {
  EXPECT_EQ(hostfacts::ParseLinkSpeedGts("16.0 GT/s PCIe\n"), 16.0);
  EXPECT_EQ(hostfacts::ParseLinkSpeedGts("8 GT/s"), 8.0);
  EXPECT_EQ(hostfacts::ParseLinkSpeedGts("2.5 GT/s PCIe"), 2.5);
  EXPECT_EQ(hostfacts::ParseLinkSpeedGts("Unknown"), -1);
  EXPECT_EQ(hostfacts::ParseLinkSpeedGts("Unknown speed"), -1);
  EXPECT_EQ(hostfacts::ParseLinkSpeedGts("16.0 PCIe"), -1);
  EXPECT_EQ(hostfacts::ParseLinkSpeedGts(""), -1);
  EXPECT_EQ(hostfacts::ParseIommuCmdline(
                "BOOT_IMAGE=/vmlinuz root=UUID=x intel_iommu=on iommu=pt quiet iommu.strict=0\n"),
            (std::vector<std::string>{"intel_iommu=on", "iommu=pt", "iommu.strict=0"}));
  EXPECT_TRUE(hostfacts::ParseIommuCmdline("root=/dev/sda1 noiommu=1").empty());
  EXPECT_EQ(hostfacts::ParseKernelRelease("6.1.0-18-amd64"), std::make_pair(6, 1));
  EXPECT_EQ(hostfacts::ParseKernelRelease("5.4.0"), std::make_pair(5, 4));
  EXPECT_EQ(hostfacts::ParseKernelRelease("x"), std::make_pair(-1, -1));
  EXPECT_TRUE(hostfacts::IsNvidiaOpenModule(
      "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.95.05  Release Build"));
  EXPECT_FALSE(
      hostfacts::IsNvidiaOpenModule("NVRM version: NVIDIA UNIX x86_64 Kernel Module  550"));
}

// A config space of `size` zero bytes with extended capability headers {offset, ID, next}
// and, at each ACS capability, Control register `ctrl`.
std::string ConfigSpace(size_t size, const std::vector<std::array<uint32_t, 3>>& caps,
                        uint32_t ctrl = 0) {
  std::string c(size, '\0');
  auto put = [&c](size_t at, uint32_t v, int bytes) {
    for (int i = 0; i < bytes && at + i < c.size(); ++i)
      c[at + i] = static_cast<char>(v >> (8 * i));
  };
  for (const auto& [at, id, next] : caps) {
    put(at, id | (1u << 16) | (next << 20), 4);
    if (id == 0x000d) put(at + 6, ctrl, 2);
  }
  return c;
}

TEST(AcsParseTest, FindsTheControlRegisterAlongTheList) {
  // AER, then ACS with RR | CR | SV.
  EXPECT_EQ(
      hostfacts::ParseAcsCtrl(ConfigSpace(4096, {{0x100, 0x1, 0x148}, {0x148, 0xd, 0}}, 0x0d)),
      0x0d);
  EXPECT_EQ(hostfacts::ParseAcsCtrl(ConfigSpace(4096, {{0x100, 0xd, 0x200}}, 0)), 0);
  // Present with every bit: all of the u16.
  EXPECT_EQ(hostfacts::ParseAcsCtrl(ConfigSpace(4096, {{0x100, 0xd, 0}}, 0xffff)), 0xffff);
}

TEST(AcsParseTest, AListWithoutAcsIsAbsent) {
  EXPECT_EQ(hostfacts::ParseAcsCtrl(ConfigSpace(4096, {{0x100, 0x1, 0x148}, {0x148, 0x19, 0}})),
            hostfacts::kAcsAbsent);
  // No extended capabilities at all (a zero header).
  EXPECT_EQ(hostfacts::ParseAcsCtrl(ConfigSpace(4096, {})), hostfacts::kAcsAbsent);
  // A next pointer into the standard header ends the list.
  EXPECT_EQ(hostfacts::ParseAcsCtrl(ConfigSpace(4096, {{0x100, 0x1, 0x40}})),
            hostfacts::kAcsAbsent);
}

TEST(AcsParseTest, ALoopedListEnds) {
  EXPECT_EQ(hostfacts::ParseAcsCtrl(ConfigSpace(4096, {{0x100, 0x1, 0x148}, {0x148, 0x19, 0x100}})),
            hostfacts::kAcsAbsent);
  EXPECT_EQ(hostfacts::ParseAcsCtrl(ConfigSpace(4096, {{0x100, 0x1, 0x100}})),
            hostfacts::kAcsAbsent);
}

TEST(AcsParseTest, ATruncatedReadIsUnread) {
  const std::string full = ConfigSpace(4096, {{0x100, 0x1, 0x148}, {0x148, 0xd, 0}}, 0x1d);
  // Without CAP_SYS_ADMIN sysfs returns the first 64 bytes; without ECAM there are 256.
  EXPECT_EQ(hostfacts::ParseAcsCtrl(full.substr(0, 64)), hostfacts::kAcsUnread);
  EXPECT_EQ(hostfacts::ParseAcsCtrl(full.substr(0, 256)), hostfacts::kAcsUnread);
  EXPECT_EQ(hostfacts::ParseAcsCtrl(""), hostfacts::kAcsUnread);
  // Cut inside the list, or inside the ACS capability.
  EXPECT_EQ(hostfacts::ParseAcsCtrl(full.substr(0, 0x140)), hostfacts::kAcsUnread);
  EXPECT_EQ(hostfacts::ParseAcsCtrl(full.substr(0, 0x14c)), hostfacts::kAcsUnread);
  EXPECT_EQ(hostfacts::ParseAcsCtrl(full.substr(0, 0x150)), 0x1d);
  // A device that does not answer reads as all ones.
  EXPECT_EQ(hostfacts::ParseAcsCtrl(std::string(4096, '\xff')), hostfacts::kAcsUnread);
}

// A full read gives bridges their details and ACS control; the device plugin's scan does
// not read bridges at all.
TEST(AcsReadTest, BridgesAreReadInDetailWithAcsInAFullReadOnly) {
  GpuNode n;
  ASSERT_TRUE(n.node.SetPcieLink(kRootPort, kGen4, 16, kGen4, 16).ok());
  ASSERT_TRUE(n.node.SetBridgeAcs(kRootPort, 0x001d).ok());
  const hostfacts::HostSnapshot snap = hostfacts::ReadHostSnapshot(*n.host);
  const hostfacts::PciFunction* port = snap.FindPci(kRootPort);
  ASSERT_NE(port, nullptr);
  EXPECT_TRUE(port->details);
  EXPECT_EQ(port->acs_ctrl, 0x001d);
  EXPECT_EQ(port->vendor, "8086");
  EXPECT_EQ(port->driver, "pcieport");
  EXPECT_EQ(port->max_link_width, 16);
  EXPECT_EQ(port->max_link_speed, kGen4);
  EXPECT_EQ(port->sysfs_path, "/sys/devices/pci0000:00/0000:17:00.0");
  // Endpoints are not bridges: their config is not read.
  EXPECT_EQ(snap.FindPci(kGpu)->acs_ctrl, hostfacts::kAcsUnread);
  hostfacts::ReadOptions scan;
  scan.all_functions = false;
  const hostfacts::HostSnapshot lean = hostfacts::ReadHostSnapshot(*n.host, scan);
  ASSERT_NE(lean.FindPci(kRootPort), nullptr);
  EXPECT_FALSE(lean.FindPci(kRootPort)->details);
  EXPECT_EQ(lean.FindPci(kRootPort)->acs_ctrl, hostfacts::kAcsUnread);
  // Without an ACS capability; read without privilege; no `config` at all.
  ASSERT_TRUE(n.node.SetBridgeAcs(kRootPort, -1).ok());
  EXPECT_EQ(hostfacts::ReadHostSnapshot(*n.host).FindPci(kRootPort)->acs_ctrl,
            hostfacts::kAcsAbsent);
  ASSERT_TRUE(n.node.SetBridgeAcs(kRootPort, 0x001d, /*unprivileged=*/true).ok());
  EXPECT_EQ(hostfacts::ReadHostSnapshot(*n.host).FindPci(kRootPort)->acs_ctrl,
            hostfacts::kAcsUnread);
}

// The topo JSON best_nics entry of the (one) GPU, and the acs_paths list.
nlohmann::ordered_json BestNicJson(const topo::TopoReport& r) {
  return topo::ToJson(r)["best_nics"][0];
}

TEST(AcsTest, RedirectingSwitchPortsAreFlaggedInTopoAndWarnPerPort) {
  GpuNode n(kBehindSwitch);
  ASSERT_TRUE(n.node.SetBridgeAcs(kUpstream, -1).ok());
  ASSERT_TRUE(n.node.SetBridgeAcs(kGpuPort, 0x001d).ok());  // SV RR CR UF
  ASSERT_TRUE(n.node.SetBridgeAcs(kNicPort, 0x001d).ok());
  const topo::TopoReport r = n.Topo();
  ASSERT_EQ(r.best_nics.size(), 1u);
  EXPECT_EQ(r.best_nics[0].acs, topo::AcsState::kRedirect);
  EXPECT_EQ(BestNicJson(r)["acs"], "redirect");
  ASSERT_EQ(r.acs_paths.size(), 1u);
  EXPECT_EQ(r.acs_paths[0].bridges, (std::vector<std::string>{kGpuPort, kNicPort}));
  EXPECT_EQ(r.acs_paths[0].redirecting, (std::vector<std::string>{kGpuPort, kNicPort}));
  EXPECT_EQ(topo::ToJson(r)["acs_paths"][0]["acs"], "redirect");
  EXPECT_THAT(topo::FormatTable(r), HasSubstr("GPUDirect RDMA good, ACS redirect\n"));
  EXPECT_THAT(topo::FormatTable(r), HasSubstr("redirect at 0000:17:01.0, 0000:17:02.0"));

  const auto acs = Named(n.Doctor(), "acs");
  ASSERT_EQ(acs.size(), 2u);
  EXPECT_EQ(acs[0].device, kGpuPort);
  EXPECT_EQ(acs[1].device, kNicPort);
  for (const auto& a : acs) {
    EXPECT_EQ(a.verdict, doctor::Verdict::kWarn);
    EXPECT_THAT(a.reason, HasSubstr("GPU 0000:18:00.0 <-> NIC mlx5_0 (0000:19:00.0)"));
    EXPECT_THAT(a.reason, HasSubstr("0x001d (RR CR)"));
    EXPECT_THAT(a.reason, HasSubstr("root complex"));
    EXPECT_THAT(a.fix, HasSubstr("setpci -s " + a.device + " ECAP_ACS+0x6.w=0000"));
    EXPECT_THAT(a.fix, HasSubstr("pci=disable_acs_redir=" + a.device));
  }
}

TEST(AcsTest, EgressControlAloneRedirects) {
  GpuNode n(kBehindSwitch);
  ASSERT_TRUE(n.node.SetBridgeAcs(kGpuPort, 0x0020).ok());
  ASSERT_TRUE(n.node.SetBridgeAcs(kNicPort, 0x0000).ok());
  ASSERT_TRUE(n.node.SetBridgeAcs(kUpstream, -1).ok());
  EXPECT_EQ(n.Topo().best_nics[0].acs, topo::AcsState::kRedirect);
  const auto acs = One(n.Doctor(), "acs");
  EXPECT_EQ(acs.verdict, doctor::Verdict::kWarn);
  EXPECT_EQ(acs.device, kGpuPort);
  EXPECT_THAT(acs.reason, HasSubstr("0x0020 (EC)"));
}

// ACS present with only source validation, translation blocking and upstream forwarding:
// nothing is redirected.
TEST(AcsTest, CapabilityWithRedirectBitsClearPasses) {
  GpuNode n(kBehindSwitch);
  ASSERT_TRUE(n.node.SetBridgeAcs(kUpstream, -1).ok());
  ASSERT_TRUE(n.node.SetBridgeAcs(kGpuPort, 0x0013).ok());
  ASSERT_TRUE(n.node.SetBridgeAcs(kNicPort, 0x0053).ok());  // and direct translated P2P
  const topo::TopoReport r = n.Topo();
  EXPECT_EQ(BestNicJson(r)["acs"], "off");
  EXPECT_TRUE(topo::ToJson(r)["acs_paths"][0]["redirecting"].empty());
  EXPECT_THAT(topo::FormatTable(r), HasSubstr("GPUDirect RDMA good, ACS off\n"));
  const auto acs = One(n.Doctor(), "acs");
  EXPECT_EQ(acs.verdict, doctor::Verdict::kPass);
  EXPECT_THAT(acs.reason, HasSubstr("off on the switch ports of all 1 GPU <-> NIC path(s)"));
  EXPECT_THAT(acs.reason, HasSubstr("2 bridge(s) checked"));
}

TEST(AcsTest, NoAcsCapabilityPasses) {
  GpuNode n(kBehindSwitch);
  for (const char* b : {kUpstream, kGpuPort, kNicPort})
    ASSERT_TRUE(n.node.SetBridgeAcs(b, -1).ok());
  EXPECT_EQ(n.Topo().best_nics[0].acs, topo::AcsState::kOff);
  EXPECT_EQ(One(n.Doctor(), "acs").verdict, doctor::Verdict::kPass);
}

// A port on the paths of two GPUs is one WARN naming both pairs, and counted once.
TEST(AcsTest, APortOnTwoPathsWarnsOnceNamingBoth) {
  GpuNode n(kBehindSwitch);
  ASSERT_TRUE(n.node.AddPciBridge(Bridge("0000:17:03.0", kUpstream)).ok());
  ASSERT_TRUE(
      n.node.AddPciFunction(Under(fake::SimNode::Gpu("0000:1a:00.0"), "0000:17:03.0")).ok());
  for (const char* b : {kUpstream, kGpuPort, "0000:17:03.0"}) {
    ASSERT_TRUE(n.node.SetBridgeAcs(b, 0).ok());
  }
  ASSERT_TRUE(n.node.SetBridgeAcs(kNicPort, 0x0004).ok());  // RR only
  const auto acs = One(n.Doctor(), "acs");
  EXPECT_EQ(acs.verdict, doctor::Verdict::kWarn);
  EXPECT_EQ(acs.device, kNicPort);
  EXPECT_THAT(acs.reason, HasSubstr("0x0004 (RR)"));
  EXPECT_THAT(acs.reason, HasSubstr("GPU 0000:18:00.0 <-> NIC mlx5_0 (0000:19:00.0), "
                                    "GPU 0000:1a:00.0 <-> NIC mlx5_0 (0000:19:00.0)"));
  // Cleared: one PASS counting the three ports once each.
  ASSERT_TRUE(n.node.SetBridgeAcs(kNicPort, 0).ok());
  const auto ok = One(n.Doctor(), "acs");
  EXPECT_EQ(ok.verdict, doctor::Verdict::kPass);
  EXPECT_THAT(ok.reason, HasSubstr("all 2 GPU <-> NIC path(s)"));
  EXPECT_THAT(ok.reason, HasSubstr("(3 bridge(s) checked)"));
}

// Read without CAP_SYS_ADMIN: 64 bytes of config space, so ACS is unknown, never "off".
TEST(AcsTest, UnprivilegedReadIsUnknown) {
  GpuNode n(kBehindSwitch);
  for (const char* b : {kUpstream, kGpuPort, kNicPort}) {
    ASSERT_TRUE(n.node.SetBridgeAcs(b, 0x001d, /*unprivileged=*/true).ok());
  }
  const topo::TopoReport r = n.Topo();
  EXPECT_EQ(BestNicJson(r)["acs"], "unknown");
  EXPECT_EQ(topo::ToJson(r)["acs_paths"][0]["unreadable"].size(), 2u);
  const auto acs = One(n.Doctor(), "acs");
  EXPECT_EQ(acs.verdict, doctor::Verdict::kPass);
  EXPECT_THAT(acs.reason, HasSubstr("unknown: the ACS of 0000:17:01.0, 0000:17:02.0"));
  EXPECT_THAT(acs.reason, HasSubstr("CAP_SYS_ADMIN in the initial user namespace"));
}

// A known redirect outweighs an unreadable port; the unreadable one is still reported.
TEST(AcsTest, RedirectAndUnreadableOnOnePath) {
  GpuNode n(kBehindSwitch);
  ASSERT_TRUE(n.node.SetBridgeAcs(kGpuPort, 0x001d).ok());
  ASSERT_TRUE(n.node.SetBridgeAcs(kNicPort, 0x001d, /*unprivileged=*/true).ok());
  EXPECT_EQ(n.Topo().best_nics[0].acs, topo::AcsState::kRedirect);
  const auto acs = Named(n.Doctor(), "acs");
  ASSERT_EQ(acs.size(), 2u);
  EXPECT_EQ(acs[0].verdict, doctor::Verdict::kWarn);
  EXPECT_EQ(acs[0].device, kGpuPort);
  EXPECT_EQ(acs[1].verdict, doctor::Verdict::kPass);
  EXPECT_THAT(acs[1].reason, HasSubstr("unknown: the ACS of 0000:17:02.0 "));
}

// Under one root port, without a switch between them, and without a GPU: no ACS finding.
TEST(AcsTest, NotApplicableWithoutASharedSwitchOrAGpu) {
  GpuNode n;
  ASSERT_TRUE(n.node.SetBridgeAcs(kRootPort, 0x001d).ok());
  const topo::TopoReport r = n.Topo();
  EXPECT_EQ(r.best_nics[0].acs, topo::AcsState::kOff);  // no bridge between them
  TempDir tmp;
  fake::SimNode node(tmp.path() + "/host");
  ASSERT_TRUE(node.AddPciBridge(Bridge(kRootPort, "")).ok());
  ASSERT_TRUE(node.AddPciBridge(Bridge("0000:30:00.0", "")).ok());
  ASSERT_TRUE(
      node.AddPciFunction(Under(fake::SimNode::IbHca(kNic, "ib0", "mlx5_0"), kRootPort)).ok());
  ASSERT_TRUE(node.SetBridgeAcs(kRootPort, 0x001d).ok());
  auto host = NewRootedHost(tmp.path() + "/host");
  const auto snap = doctor::ReadDoctorSnapshot(*host);
  const auto no_gpu = doctor::CheckAcs({snap, n.verbs, n.rdma, n.limits, {}});
  ASSERT_EQ(no_gpu.size(), 1u);
  EXPECT_EQ(no_gpu[0].verdict, doctor::Verdict::kPass);
  EXPECT_THAT(no_gpu[0].reason, HasSubstr("not applicable: no GPU"));
  // A GPU on another root port: its path to the NIC crosses the root complex anyway.
  ASSERT_TRUE(node.AddPciFunction(Under(fake::SimNode::Gpu("0000:31:00.0"), "0000:30:00.0")).ok());
  const auto apart_snap = doctor::ReadDoctorSnapshot(*host);
  const auto apart = doctor::CheckAcs({apart_snap, n.verbs, n.rdma, n.limits, {}});
  ASSERT_EQ(apart.size(), 1u);
  EXPECT_EQ(apart[0].verdict, doctor::Verdict::kPass);
  EXPECT_THAT(apart[0].reason, HasSubstr("no GPU shares a PCIe switch with an RDMA NIC"));
  auto eps = topo::EndpointsOf(apart_snap);
  ASSERT_TRUE(eps.ok());
  const topo::TopoReport far = topo::BuildReport(*eps);
  EXPECT_TRUE(far.acs_paths.empty());
  EXPECT_TRUE(topo::ToJson(far)["best_nics"][0]["acs"].is_null());
  EXPECT_THAT(topo::FormatTable(far), Not(HasSubstr("ACS")));
}

TEST(GpuPathTest, HealthyLinksShowInTopoAndPass) {
  GpuNode n;
  const topo::TopoReport r = n.Topo();
  EXPECT_THAT(topo::FormatTable(r), HasSubstr("link x16 @ 16.0 GT/s\n"));
  EXPECT_THAT(topo::FormatTable(r), Not(HasSubstr("DEGRADED")));
  const auto gpu = TopoDevice(r, kGpu);
  EXPECT_EQ(gpu["pcie_link"]["width"], 16);
  EXPECT_EQ(gpu["pcie_link"]["degraded"], false);
  const auto results = n.Doctor();
  const auto link = One(results, "pcie-link");
  EXPECT_EQ(link.verdict, doctor::Verdict::kPass) << link.reason;
  EXPECT_THAT(link.reason, HasSubstr("2 GPU/NIC links"));
}

TEST(GpuPathTest, DegradedGpuAndNicWidthWarnPerDevice) {
  GpuNode n;
  ASSERT_TRUE(n.node.SetPcieLink(kGpu, kGen4, 8, kGen4, 16).ok());
  ASSERT_TRUE(n.node.SetPcieLink(kNic, kGen4, 8, kGen4, 16).ok());
  const topo::TopoReport r = n.Topo();
  EXPECT_THAT(topo::FormatTable(r), HasSubstr("link x8 of x16 @ 16.0 GT/s (DEGRADED)"));
  const auto nic = TopoDevice(r, kNic);
  EXPECT_EQ(nic["pcie_link"]["width"], 8);
  EXPECT_EQ(nic["pcie_link"]["max_width"], 16);
  EXPECT_EQ(nic["pcie_link"]["degraded"], true);
  EXPECT_EQ(nic["pcie_link"]["text"], "x8 of x16 @ 16.0 GT/s");

  const auto links = Named(n.Doctor(), "pcie-link");
  ASSERT_EQ(links.size(), 2u);
  EXPECT_EQ(links[0].device, kGpu);
  EXPECT_EQ(links[1].device, kNic);
  for (const auto& l : links) {
    EXPECT_EQ(l.verdict, doctor::Verdict::kWarn);
    EXPECT_THAT(l.reason, HasSubstr("x8 of x16"));
    EXPECT_THAT(l.fix, HasSubstr("reseat"));
  }
  EXPECT_THAT(links[1].reason, HasSubstr("NIC mlx5_0 (0000:19:00.0)"));
  const auto json = doctor::ToJson(n.Doctor());
  int per_device = 0;
  for (const auto& c : json["checks"]) {
    if (c["name"] == "pcie-link") {
      EXPECT_EQ(c["status"], "WARN");
      EXPECT_TRUE(c.contains("device"));
      ++per_device;
    }
  }
  EXPECT_EQ(per_device, 2);
}

TEST(GpuPathTest, GpuSpeedDropIsAReCheckAndSlotLimitIsNotDegraded) {
  GpuNode n;
  // An idle GPU at Gen1: WARN, re-check under load.
  ASSERT_TRUE(n.node.SetPcieLink(kGpu, "2.5 GT/s PCIe", 16, kGen4, 16).ok());
  auto gpu = One(n.Doctor(), "pcie-link");
  EXPECT_EQ(gpu.verdict, doctor::Verdict::kWarn);
  EXPECT_THAT(gpu.reason, HasSubstr("x16 @ 2.5 of 16.0 GT/s"));
  EXPECT_THAT(gpu.reason, HasSubstr("re-check under load"));
  // A Gen5 x16 NIC in a Gen4 slot: the attainable speed is the port's, so not degraded.
  ASSERT_TRUE(n.node.SetPcieLink(kGpu, kGen4, 16, kGen4, 16).ok());
  ASSERT_TRUE(n.node.SetPcieLink(kNic, kGen4, 16, "32.0 GT/s PCIe", 16).ok());
  ASSERT_TRUE(n.node.SetPcieLink(kRootPort, kGen4, 16, kGen4, 16).ok());
  EXPECT_EQ(One(n.Doctor(), "pcie-link").verdict, doctor::Verdict::kPass);
}

TEST(GpuPathTest, PeermemHostPasses) {
  GpuNode n;
  ASSERT_TRUE(n.node.AddKernelModule("nvidia_peermem").ok());
  const auto r = One(n.Doctor(), "gpudirect-rdma");
  EXPECT_EQ(r.verdict, doctor::Verdict::kPass) << r.reason;
  EXPECT_THAT(r.reason, HasSubstr("peer memory (nvidia_peermem)"));
  EXPECT_THAT(r.reason, HasSubstr("GDRDMA"));
  EXPECT_EQ(n.snap.peermem_modules, std::vector<std::string>{"nvidia_peermem"});
}

TEST(GpuPathTest, LegacyNvPeerMemPasses) {
  GpuNode n;
  ASSERT_TRUE(n.node.AddKernelModule("nv_peer_mem").ok());
  const auto r = One(n.Doctor(), "gpudirect-rdma");
  EXPECT_EQ(r.verdict, doctor::Verdict::kPass) << r.reason;
  EXPECT_THAT(r.reason, HasSubstr("nv_peer_mem"));
}

TEST(GpuPathTest, DmaBufOnlyHostPasses) {
  GpuNode n;
  ASSERT_TRUE(n.node.AddKernelModule("nvidia").ok());
  ASSERT_TRUE(n.node
                  .WriteHostFile("/proc/driver/nvidia/version",
                                 "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  "
                                 "580.95.05  Release Build\nGCC version: gcc 12\n")
                  .ok());
  ASSERT_TRUE(n.node.WriteHostFile("/proc/sys/kernel/osrelease", "6.1.0-18-amd64\n").ok());
  const auto r = One(n.Doctor(), "gpudirect-rdma");
  EXPECT_EQ(r.verdict, doctor::Verdict::kPass) << r.reason;
  EXPECT_THAT(r.reason, HasSubstr("dma-buf"));
  EXPECT_THAT(r.reason, Not(HasSubstr("peer memory")));
}

TEST(GpuPathTest, NeitherPathWarnsOfBounceBuffers) {
  GpuNode n;
  ASSERT_TRUE(n.node.AddKernelModule("nvidia").ok());
  // The proprietary module on an old kernel: no dma-buf either.
  ASSERT_TRUE(n.node
                  .WriteHostFile("/proc/driver/nvidia/version",
                                 "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.135\n")
                  .ok());
  ASSERT_TRUE(n.node.WriteHostFile("/proc/sys/kernel/osrelease", "5.4.0-150-generic\n").ok());
  const auto r = One(n.Doctor(), "gpudirect-rdma");
  EXPECT_EQ(r.verdict, doctor::Verdict::kWarn);
  EXPECT_THAT(r.reason, HasSubstr("neither nvidia_peermem nor nv_peer_mem is loaded"));
  EXPECT_THAT(r.reason, HasSubstr("without `/GDRDMA`"));
  EXPECT_THAT(r.reason, HasSubstr("kernel 5.4.0-150-generic predates"));
  EXPECT_THAT(r.fix, HasSubstr("modprobe nvidia_peermem"));
}

TEST(GpuPathTest, GpuDirectNotApplicableWithoutNvidiaGpu) {
  TempDir tmp;
  fake::SimNode node(tmp.path() + "/host");
  ASSERT_TRUE(node.AddPciFunction(fake::SimNode::IbHca(kNic, "ib0", "mlx5_0")).ok());
  auto host = NewRootedHost(tmp.path() + "/host");
  const auto snap = doctor::ReadDoctorSnapshot(*host);
  fake::FakeVerbs verbs;
  fake::FakeRdmaSystem rdma{RdmaNetnsMode::kShared};
  fake::FakeProcessLimits limits{doctor::kUnlimited, false};
  const auto r = doctor::CheckGpuDirect({snap, verbs, rdma, limits, {}});
  EXPECT_EQ(r.verdict, doctor::Verdict::kPass);
  EXPECT_THAT(r.reason, HasSubstr("not applicable: no NVIDIA GPU"));
}

TEST(GpuPathTest, TranslatedIommuWarns) {
  GpuNode n;
  ASSERT_TRUE(n.node.AddIommuUnit("dmar0").ok());
  ASSERT_TRUE(n.node.SetIommuGroup(kNic, "17", "DMA-FQ").ok());
  ASSERT_TRUE(n.node.SetIommuGroup(kGpu, "16", "DMA-FQ").ok());
  ASSERT_TRUE(n.node.WriteHostFile("/proc/cmdline", "root=/dev/sda1 intel_iommu=on quiet\n").ok());
  const auto r = One(n.Doctor(), "iommu");
  EXPECT_EQ(r.verdict, doctor::Verdict::kWarn);
  EXPECT_THAT(r.reason, HasSubstr("mlx5_0 (0000:19:00.0) in group 17 (DMA-FQ)"));
  EXPECT_THAT(r.reason, HasSubstr("kernel command line: intel_iommu=on"));
  EXPECT_THAT(r.fix, HasSubstr("iommu=pt"));
  EXPECT_EQ(n.snap.iommu_units, std::vector<std::string>{"dmar0"});
  EXPECT_EQ(n.snap.FindPci(kNic)->iommu_group, "17");
}

TEST(GpuPathTest, PassthroughIommuPasses) {
  GpuNode n;
  ASSERT_TRUE(n.node.AddIommuUnit("dmar0").ok());
  ASSERT_TRUE(n.node.SetIommuGroup(kNic, "17", "identity").ok());
  ASSERT_TRUE(n.node.WriteHostFile("/proc/cmdline", "intel_iommu=on iommu=pt\n").ok());
  const auto r = One(n.Doctor(), "iommu");
  EXPECT_EQ(r.verdict, doctor::Verdict::kPass);
  EXPECT_THAT(r.reason, HasSubstr("passthrough (identity): mlx5_0"));
  EXPECT_THAT(r.reason, HasSubstr("iommu=pt"));
}

TEST(GpuPathTest, NoIommuPasses) {
  GpuNode n;
  const auto r = One(n.Doctor(), "iommu");
  EXPECT_EQ(r.verdict, doctor::Verdict::kPass);
  EXPECT_THAT(r.reason, HasSubstr("IOMMU off"));
}

// `hcashare doctor --host-root DIR --json` as a process, on one fixture tree per finding:
// the checks reach the CLI with their stable keys, verdicts and devices.
TEST(GpuPathCliTest, DoctorOnFixtureTreesReportsEachFinding) {
  // The GPU path results of the CLI's JSON: name -> [(status, device)] in order.
  const auto doctor = [](GpuNode& n) {
    auto out = Execute(testing::BinDir() + "/hcashare",
                       {"hcashare", "doctor", "--json", "--host-root", n.tmp.path() + "/host"},
                       {"PATH=/usr/bin:/bin"}, "", std::chrono::seconds(60));
    EXPECT_TRUE(out.ok());
    std::map<std::string, std::vector<std::pair<std::string, std::string>>> found;
    if (!out.ok()) return found;
    EXPECT_TRUE(out->exit_code == 0 || out->exit_code == 1) << out->err;  // 1: a FAIL elsewhere
    const auto doc = nlohmann::json::parse(out->out, nullptr, false);
    EXPECT_FALSE(doc.is_discarded()) << out->out;
    for (const auto& c : doc.value("checks", nlohmann::json::array())) {
      const std::string name = c.value("name", "");
      if (name == "pcie-link" || name == "gpudirect-rdma" || name == "iommu" || name == "acs") {
        found[name].emplace_back(c.value("status", ""), c.value("device", ""));
      }
    }
    return found;
  };
  using Found = std::vector<std::pair<std::string, std::string>>;

  GpuNode acs(kBehindSwitch);  // an ACS-enabled switch: one WARN per redirecting port
  ASSERT_TRUE(acs.node.SetBridgeAcs(kUpstream, -1).ok());
  ASSERT_TRUE(acs.node.SetBridgeAcs(kGpuPort, 0x001d).ok());
  ASSERT_TRUE(acs.node.SetBridgeAcs(kNicPort, 0).ok());
  EXPECT_EQ(doctor(acs)["acs"], (Found{{"WARN", kGpuPort}}));

  GpuNode degraded;  // an x8 GPU link on an x16 slot
  ASSERT_TRUE(degraded.node.SetPcieLink(kGpu, kGen4, 8, kGen4, 16).ok());
  auto d = doctor(degraded);
  EXPECT_EQ(d["pcie-link"], (Found{{"WARN", kGpu}}));
  EXPECT_EQ(d["acs"], (Found{{"PASS", ""}}));

  GpuNode dmabuf;  // the open kernel module on Linux 6.1, no peer-memory module
  ASSERT_TRUE(dmabuf.node.AddKernelModule("nvidia").ok());
  ASSERT_TRUE(dmabuf.node
                  .WriteHostFile("/proc/driver/nvidia/version",
                                 "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  "
                                 "580.95.05  Release Build\n")
                  .ok());
  ASSERT_TRUE(dmabuf.node.WriteHostFile("/proc/sys/kernel/osrelease", "6.1.0-18-amd64\n").ok());
  EXPECT_EQ(doctor(dmabuf)["gpudirect-rdma"], (Found{{"PASS", ""}}));

  GpuNode bounce;  // the proprietary module on an old kernel, no peer memory: bounce buffers
  ASSERT_TRUE(bounce.node.AddKernelModule("nvidia").ok());
  ASSERT_TRUE(bounce.node
                  .WriteHostFile("/proc/driver/nvidia/version",
                                 "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.135\n")
                  .ok());
  ASSERT_TRUE(bounce.node.WriteHostFile("/proc/sys/kernel/osrelease", "5.4.0-150-generic\n").ok());
  EXPECT_EQ(doctor(bounce)["gpudirect-rdma"], (Found{{"WARN", ""}}));

  GpuNode peermem;  // nvidia_peermem loaded, links healthy
  ASSERT_TRUE(peermem.node.AddKernelModule("nvidia_peermem").ok());
  auto p = doctor(peermem);
  EXPECT_EQ(p["gpudirect-rdma"], (Found{{"PASS", ""}}));
  EXPECT_EQ(p["pcie-link"], (Found{{"PASS", ""}}));
}

TEST(GpuPathTest, NewFactsRoundTripThroughTheSnapshot) {
  GpuNode n;
  ASSERT_TRUE(n.node.SetPcieLink(kGpu, kGen4, 8, kGen4, 16).ok());
  ASSERT_TRUE(n.node.SetPcieLink(kRootPort, kGen4, 16, kGen4, 16).ok());
  ASSERT_TRUE(n.node.AddKernelModule("nvidia_peermem").ok());
  ASSERT_TRUE(n.node.WriteHostFile("/sys/kernel/mm/memory_peers/nv_mem/version", "1.0\n").ok());
  ASSERT_TRUE(n.node.WriteHostFile("/proc/sys/kernel/osrelease", "6.1.0\n").ok());
  ASSERT_TRUE(n.node.AddIommuUnit("dmar0").ok());
  ASSERT_TRUE(n.node.SetIommuGroup(kNic, "17", "DMA").ok());
  ASSERT_TRUE(n.node.WriteHostFile("/proc/cmdline", "intel_iommu=on iommu.strict=1\n").ok());
  ASSERT_TRUE(n.node.SetBridgeAcs(kRootPort, 0x001d).ok());
  const hostfacts::HostSnapshot snap = hostfacts::ReadHostSnapshot(*n.host);
  EXPECT_TRUE(snap.sys_module_listed);
  EXPECT_EQ(snap.memory_peers, std::vector<std::string>{"nv_mem"});
  EXPECT_EQ(snap.kernel_release, "6.1.0");
  EXPECT_EQ(snap.iommu_group_types.at("17"), "DMA");
  EXPECT_EQ(snap.iommu_cmdline, (std::vector<std::string>{"intel_iommu=on", "iommu.strict=1"}));
  EXPECT_EQ(snap.FindPci(kGpu)->current_link_width, 8);
  EXPECT_EQ(snap.FindPci(kGpu)->upstream_max_link_width, 16);
  EXPECT_EQ(snap.FindPci(kRootPort)->acs_ctrl, 0x001d);
  const std::string text = hostfacts::SnapshotToJson(snap).dump(1);
  auto back = hostfacts::SnapshotFromJson(nlohmann::json::parse(text));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_TRUE(*back == snap);
  EXPECT_EQ(hostfacts::SnapshotToJson(*back).dump(1), text);
  // The device plugin's scan reads none of it.
  hostfacts::ReadOptions scan;
  scan.all_functions = false;
  const auto lean = hostfacts::ReadHostSnapshot(*n.host, scan);
  EXPECT_FALSE(lean.sys_module_listed);
  EXPECT_TRUE(lean.iommu_group_types.empty());
}

}  // namespace
}  // namespace hcashare
