#include <algorithm>
#include <sstream>

#include "common/strings.h"
#include "topo/format.h"

namespace hcashare::topo {
namespace {

constexpr const char* kLegend[] = {
    "  X    = the device itself",
    "  PIX  = at most one PCIe bridge in between (a PCIe switch counts as one bridge)",
    "  PXB  = several PCIe bridges, without a PCIe host bridge",
    "  PHB  = through a PCIe host bridge (the root complex, usually inside the CPU)",
    "  NODE = across PCIe host bridges within one NUMA node",
    "  SYS  = across NUMA nodes, over the SMP interconnect (QPI/UPI/Infinity Fabric)",
    "",
    "  NVLink, NVSwitch and other GPU-to-GPU links are out of scope: only PCIe is read.",
};

std::string Pad(const std::string& s, size_t width) {
  return s.size() >= width ? s + " " : s + std::string(width - s.size(), ' ');
}

// The display name of the device at `address`; the address when it is not in the report.
std::string NameOf(const TopoReport& r, const std::string& address) {
  for (const auto& d : r.devices) {
    if (d.device.address == address) return d.name;
  }
  return address;
}

// The column width of device names.
size_t NameWidth(const TopoReport& r) {
  size_t w = 0;
  for (const auto& d : r.devices) w = std::max(w, d.name.size() + 2);
  return w;
}

std::string NumaText(int numa) { return numa < 0 ? "N/A" : std::to_string(numa); }

void WriteMatrix(const TopoReport& r, std::ostringstream& out) {
  size_t w = 6;
  for (const auto& d : r.devices) w = std::max(w, d.name.size() + 2);
  out << Pad("", w);
  for (const auto& d : r.devices) out << Pad(d.name, w);
  out << "CPU Affinity  NUMA Affinity\n";
  for (const auto& a : r.devices) {
    out << Pad(a.name, w);
    for (const auto& b : r.devices) {
      out << Pad(PathTypeName(r.matrix.at(a.device.address).at(b.device.address)), w);
    }
    out << Pad(a.device.cpus.empty() ? "N/A" : a.device.cpus, 14) << NumaText(a.device.numa_node)
        << "\n";
  }
}

void WriteDevices(const TopoReport& r, std::ostringstream& out) {
  const size_t w = NameWidth(r);
  out << "\nDevices:\n\n";
  for (const auto& d : r.devices) {
    out << "  " << Pad(d.name, w) << d.device.address << "  " << DeviceKindName(d.device.kind);
    if (d.device.kind == DeviceKind::kNic) {
      out << "  netdev " << (d.device.netdevs.empty() ? "-" : Join(d.device.netdevs, ","))
          << "  rdma " << (d.device.rdma.empty() ? "-" : Join(d.device.rdma, ","));
      if (!d.device.physfn.empty()) out << "  VF of " << d.device.physfn;
    }
    if (d.device.link.known) {
      out << "  link " << LinkText(d.device.link);
      if (d.device.link.degraded()) out << " (DEGRADED)";
    }
    out << "\n";
  }
}

void WriteVirtualRdma(const TopoReport& r, std::ostringstream& out) {
  if (r.virtual_rdma.empty()) return;
  out << "\nVirtual RDMA devices (not on PCI, so not in the matrix):\n\n";
  size_t w = 0;
  for (const auto& v : r.virtual_rdma) w = std::max(w, v.name.size() + 2);
  for (const auto& v : r.virtual_rdma) {
    out << "  " << Pad(v.name, w) << "netdev " << (v.netdev.empty() ? "-" : v.netdev);
    if (!v.pci.empty()) out << " (on " << v.pci << ")";
    out << "\n";
  }
}

void WriteBestNics(const TopoReport& r, std::ostringstream& out) {
  if (r.best_nics.empty()) return;
  out << "\nBest NIC per GPU (closest class, then the same NUMA node):\n\n";
  const size_t w = NameWidth(r);
  for (const auto& c : r.best_nics) {
    out << "  " << Pad(NameOf(r, c.gpu), w);
    if (c.nic.empty()) {
      out << "none (no RDMA NIC on this host)\n";
      continue;
    }
    out << Pad(c.nic_name, w) << Pad(PathTypeName(c.path), 6) << "GPUDirect RDMA "
        << GpuDirectVerdict(c.path);
    if (c.acs != AcsState::kNotApplicable) out << ", ACS " << AcsStateName(c.acs);
    out << "\n";
  }
  if (!r.nccl_ib_hca.empty()) {
    out << "\nNCCL_IB_HCA hint: NCCL_IB_HCA=" << r.nccl_ib_hca
        << "  (the leading '=' makes NCCL match these names exactly)\n";
  }
}

void WriteAcs(const TopoReport& r, std::ostringstream& out) {
  if (r.acs_paths.empty()) return;
  out << "\nACS on GPU <-> NIC paths under a PCIe switch (redirect sends P2P up to the root "
         "complex):\n\n";
  const size_t w = NameWidth(r);
  for (const auto& p : r.acs_paths) {
    out << "  " << Pad(NameOf(r, p.gpu), w) << Pad(p.nic_name, w) << AcsStateName(p.state);
    if (!p.redirecting.empty()) out << " at " << Join(p.redirecting, ", ");
    if (!p.unreadable.empty()) out << " (unreadable: " << Join(p.unreadable, ", ") << ")";
    out << "\n";
  }
}

}  // namespace

std::string FormatTable(const TopoReport& r) {
  std::ostringstream out;
  if (r.devices.empty()) {
    out << "no GPUs or NICs found in /sys/bus/pci/devices\n";
    WriteVirtualRdma(r, out);
    return out.str();
  }
  WriteMatrix(r, out);
  out << "\nLegend:\n\n";
  for (const char* line : kLegend) out << line << "\n";
  WriteDevices(r, out);
  WriteVirtualRdma(r, out);
  WriteBestNics(r, out);
  WriteAcs(r, out);
  return out.str();
}

}  // namespace hcashare::topo
