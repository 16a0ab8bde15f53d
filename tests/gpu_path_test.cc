// Tests for the GPU <-> NIC fast-path slice of issue 17: degraded PCIe links in topo and
// doctor, the GPUDirect RDMA peer-memory / dma-buf check, and the IOMMU mode check, each on
// a fixture tree in the real sysfs/procfs layout, plus the snapshot round trip of the new
// facts.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>

#include <nlohmann/json.hpp>

#include "common/host.h"
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
// port, both links at x16 Gen4 unless a test changes them.
fake::SimPciFunction UnderRootPort(fake::SimPciFunction f) {
  f.parent_bridge = kRootPort;
  return f;
}

struct GpuNode {
  TempDir tmp;
  fake::SimNode node{tmp.path() + "/host"};
  std::unique_ptr<Host> host = NewRootedHost(tmp.path() + "/host");
  fake::FakeVerbs verbs;
  fake::FakeRdmaSystem rdma{RdmaNetnsMode::kShared};
  fake::FakeProcessLimits limits{doctor::kUnlimited, false};
  hostfacts::HostSnapshot snap;

  GpuNode() {
    fake::SimPciBridge port;
    port.address = kRootPort;
    EXPECT_TRUE(node.AddPciBridge(port).ok());
    EXPECT_TRUE(node.AddPciFunction(UnderRootPort(fake::SimNode::Gpu(kGpu))).ok());
    EXPECT_TRUE(
        node.AddPciFunction(UnderRootPort(fake::SimNode::IbHca(kNic, "ib0", "mlx5_0"))).ok());
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
  const hostfacts::HostSnapshot snap = hostfacts::ReadHostSnapshot(*n.host);
  EXPECT_TRUE(snap.sys_module_listed);
  EXPECT_EQ(snap.memory_peers, std::vector<std::string>{"nv_mem"});
  EXPECT_EQ(snap.kernel_release, "6.1.0");
  EXPECT_EQ(snap.iommu_group_types.at("17"), "DMA");
  EXPECT_EQ(snap.iommu_cmdline, (std::vector<std::string>{"intel_iommu=on", "iommu.strict=1"}));
  EXPECT_EQ(snap.FindPci(kGpu)->current_link_width, 8);
  EXPECT_EQ(snap.FindPci(kGpu)->upstream_max_link_width, 16);
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
