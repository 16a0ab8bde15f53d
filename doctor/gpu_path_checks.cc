// The GPU <-> NIC fast-path checks (issue 17): degraded PCIe links, the GPUDirect RDMA
// peer-memory path, the IOMMU mode of the RDMA devices, and ACS P2P redirect on the switch
// ports between GPUs and NICs. All from the host snapshot.
#include <algorithm>
#include <cstdio>
#include <map>
#include <set>

#include "common/strings.h"
#include "doctor/check_util.h"
#include "hostfacts/attrs.h"
#include "topo/acs.h"
#include "topo/endpoints.h"
#include "topo/link.h"

namespace hcashare::doctor {
namespace {

constexpr const char* kPcieFix =
    "reseat the card, check that the slot is wired for the full width (an x16 slot may be x8 "
    "electrically) and set the slot's PCIe link speed to Auto or its generation in the BIOS";

bool IsNvidiaGpu(const hostfacts::PciFunction& f) {
  return f.vendor == "10de" && f.class_code >= 0 && (f.class_code >> 16) == 0x03;
}

// "mlx5_0 (0000:3b:00.0)", or the address alone.
std::string NameOf(const hostfacts::PciFunction& f) {
  return f.rdma_devices.empty() ? f.address : Join(f.rdma_devices, ",") + " (" + f.address + ")";
}

// Why dma-buf is not possible; "" when the kernel and GPU driver allow it.
std::string DmaBufMissing(const hostfacts::HostSnapshot& snap) {
  std::vector<std::string> why;
  if (!hostfacts::IsNvidiaOpenModule(snap.nvidia_version)) {
    why.push_back(snap.nvidia_version.empty() ? "/proc/driver/nvidia/version is missing"
                                              : "the NVIDIA driver is not the open kernel module");
  }
  const auto [major, minor] = hostfacts::ParseKernelRelease(snap.kernel_release);
  if (major < 0) {
    why.push_back("the kernel release is unknown");
  } else if (major < 5 || (major == 5 && minor < 12)) {
    why.push_back("kernel " + snap.kernel_release + " predates dma-buf MRs (5.12)");
  }
  return Join(why, ", ");
}

// "0x001d (RR CR)": an ACS Control value and the redirect bits set in it.
std::string AcsCtrlText(int ctrl) {
  char hex[16];
  std::snprintf(hex, sizeof(hex), "0x%04x", ctrl);
  std::vector<std::string> bits;
  if (ctrl & 0x04) bits.push_back("RR");
  if (ctrl & 0x08) bits.push_back("CR");
  if (ctrl & 0x20) bits.push_back("EC");
  return std::string(hex) + " (" + Join(bits, " ") + ")";
}

// "GPU 0000:18:00.0 <-> NIC mlx5_0 (0000:19:00.0)".
std::string PairText(const topo::AcsPath& p) {
  return "GPU " + p.gpu + " <-> NIC " +
         (p.nic_name.empty() ? p.nic : p.nic_name + " (" + p.nic + ")");
}

}  // namespace

std::vector<CheckResult> CheckPcieLinks(const DoctorInputs& in) {
  std::vector<CheckResult> out;
  int known = 0;
  for (const auto& f : in.snap.pci) {
    if (!f.details || f.class_code < 0) continue;
    auto kind = topo::KindOfClass(static_cast<uint32_t>(f.class_code), f.vendor);
    if (!kind) continue;
    const topo::PcieLink link = topo::LinkOf(f);
    if (!link.known) continue;
    ++known;
    if (!link.degraded()) continue;
    const bool gpu = *kind == topo::DeviceKind::kGpu;
    std::string reason = std::string(gpu ? "GPU " : "NIC ") + NameOf(f) + " trained at " +
                         topo::LinkText(link) + ": ";
    if (link.width_degraded) {
      reason +=
          "a fraction of its PCIe bandwidth, and NCCL sizes links from max_link_* so it "
          "will not notice";
    } else if (gpu) {
      reason += "an idle GPU lowers its link speed to save power; re-check under load";
    } else {
      reason += "a fraction of its PCIe bandwidth, and NCCL will not notice";
    }
    CheckResult r = Warn("pcie-link", reason, kPcieFix);
    r.device = f.address;
    out.push_back(std::move(r));
  }
  if (out.empty()) {
    out.push_back(Pass("pcie-link", known == 0 ? "no GPU or NIC reports its PCIe link"
                                               : std::to_string(known) +
                                                     " GPU/NIC links at their attainable "
                                                     "width and speed"));
  }
  return out;
}

CheckResult CheckGpuDirect(const DoctorInputs& in) {
  const auto& s = in.snap;
  int gpus = 0;
  for (const auto& f : s.pci) gpus += IsNvidiaGpu(f) ? 1 : 0;
  if (gpus == 0 || s.rdma.empty()) {
    return Pass("gpudirect-rdma", std::string("not applicable: no ") +
                                      (gpus == 0 ? "NVIDIA GPU" : "RDMA device") + " on this node");
  }
  std::vector<std::string> peer = s.peermem_modules;
  for (const auto& p : s.memory_peers) {
    if (p == "nv_mem" || p == "nv_mem_nc") peer.push_back("memory_peers/" + p);
  }
  const std::string dmabuf_missing = DmaBufMissing(s);
  std::vector<std::string> paths;
  if (!peer.empty()) paths.push_back("peer memory (" + Join(peer, ", ") + ")");
  if (dmabuf_missing.empty()) {
    paths.push_back("dma-buf (open kernel module, kernel " + s.kernel_release +
                    "; also needs rdma-core >= 34 and CUDA >= 11.7)");
  }
  if (!paths.empty()) {
    return Pass("gpudirect-rdma", "GPUDirect RDMA via " + Join(paths, " and ") +
                                      ": NCCL's channels should read `via NET/IB/<n>/GDRDMA`");
  }
  const std::string modules = s.sys_module_listed
                                  ? "neither nvidia_peermem nor nv_peer_mem is loaded"
                                  : "/sys/module is unreadable, so no peer-memory module is known";
  return Warn("gpudirect-rdma",
              modules + " and dma-buf is not possible (" + dmabuf_missing +
                  "): NCCL stages GPU buffers through host memory; its log shows `via NET/IB/<n>` "
                  "without `/GDRDMA`",
              "load the peer-memory module (modprobe nvidia_peermem, shipped with the driver "
              "since R470), or use the NVIDIA open kernel modules on Linux >= 5.12 for dma-buf");
}

CheckResult CheckIommu(const DoctorInputs& in) {
  const auto& s = in.snap;
  const std::string cmdline = s.iommu_cmdline.empty()
                                  ? "no IOMMU parameters on the kernel command line"
                                  : "kernel command line: " + Join(s.iommu_cmdline, " ");
  std::vector<std::string> translated, passthrough, unknown;
  for (const auto& f : s.pci) {
    if (f.rdma_devices.empty()) continue;
    auto it = s.iommu_group_types.find(f.iommu_group);
    const std::string type = it == s.iommu_group_types.end() ? "" : it->second;
    if (type.rfind("DMA", 0) == 0) {
      translated.push_back(NameOf(f) + " in group " + f.iommu_group + " (" + type + ")");
    } else if (type == "identity") {
      passthrough.push_back(NameOf(f));
    } else if (!f.iommu_group.empty()) {
      unknown.push_back(NameOf(f) + " in group " + f.iommu_group + " (" +
                        (type.empty() ? "type unreadable" : type) + ")");
    }
  }
  if (!translated.empty()) {
    return Warn("iommu",
                "translated IOMMU domain: " + Join(translated, ", ") +
                    ": GPU <-> NIC DMA is remapped and may go through the root complex; " + cmdline,
                "boot with iommu=pt (Intel: intel_iommu=on iommu=pt) so devices get identity "
                "(passthrough) domains, or write identity to /sys/kernel/iommu_groups/<N>/type "
                "while the group's driver is unbound");
  }
  if (!passthrough.empty()) {
    return Pass("iommu", "passthrough (identity): " + Join(passthrough, ", ") + "; " + cmdline);
  }
  if (!unknown.empty()) return Pass("iommu", "IOMMU mode unknown: " + Join(unknown, ", "));
  if (s.iommu_units.empty()) return Pass("iommu", "IOMMU off (no /sys/class/iommu units)");
  return Pass("iommu", "no RDMA device on PCI is in an IOMMU group; " + cmdline);
}

std::vector<CheckResult> CheckAcs(const DoctorInputs& in) {
  auto eps = topo::EndpointsOf(in.snap);
  if (!eps.ok()) return {Pass("acs", "not applicable: " + eps.status().message())};
  const bool gpus = std::any_of(eps->devices.begin(), eps->devices.end(),
                                [](const auto& d) { return d.kind == topo::DeviceKind::kGpu; });
  if (!gpus) return {Pass("acs", "not applicable: no GPU on this node")};
  const std::vector<topo::AcsPath> paths = topo::AcsPaths(*eps);
  if (paths.empty()) {
    return {Pass("acs",
                 "not applicable: no GPU shares a PCIe switch with an RDMA NIC (P2P between "
                 "them crosses the root complex anyway)")};
  }
  // The GPU <-> NIC pairs through each redirecting bridge, and the unreadable bridges.
  std::map<std::string, std::vector<std::string>> redirecting;
  std::set<std::string> unreadable, bridges;
  for (const auto& p : paths) {
    bridges.insert(p.bridges.begin(), p.bridges.end());
    for (const auto& b : p.redirecting) redirecting[b].push_back(PairText(p));
    unreadable.insert(p.unreadable.begin(), p.unreadable.end());
  }
  std::vector<CheckResult> out;
  for (const auto& [bridge, pairs] : redirecting) {
    const hostfacts::PciFunction* f = in.snap.FindPci(bridge);
    CheckResult r = Warn(
        "acs",
        "PCIe switch port " + bridge + " has ACS P2P redirect on (Control " +
            AcsCtrlText(f == nullptr ? 0 : f->acs_ctrl) + "): P2P between " + Join(pairs, ", ") +
            " goes up through the root complex instead of across the switch, so GPUDirect "
            "bandwidth falls far below what the PIX/PXB path promises",
        "setpci -s " + bridge +
            " ECAP_ACS+0x6.w=0000 (as root; lost on reboot), or boot with "
            "pci=disable_acs_redir=" +
            bridge);
    r.device = bridge;
    out.push_back(std::move(r));
  }
  if (!unreadable.empty()) {
    const std::vector<std::string> list(unreadable.begin(), unreadable.end());
    out.push_back(Pass("acs", "unknown: the ACS of " + Join(list, ", ") +
                                  " on GPU <-> NIC paths could not be read (the extended config "
                                  "space needs CAP_SYS_ADMIN in the initial user namespace: run "
                                  "doctor as root on the host or in a privileged container)"));
  }
  if (out.empty()) {
    out.push_back(Pass("acs", "ACS P2P redirect is off on the switch ports of all " +
                                  std::to_string(paths.size()) +
                                  " GPU <-> NIC path(s) under a PCIe switch (" +
                                  std::to_string(bridges.size()) + " bridge(s) checked)"));
  }
  return out;
}

}  // namespace hcashare::doctor
