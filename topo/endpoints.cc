#include "topo/endpoints.h"

#include <algorithm>
#include <cctype>

#include "common/log.h"
#include "hostfacts/attrs.h"
#include "hostfacts/live.h"
#include "hostfacts/reader.h"

namespace hcashare::topo {
namespace {

// Class codes that make a function a matrix endpoint: (class & mask) == value.
struct ClassRule {
  uint32_t value;
  uint32_t mask;
  DeviceKind kind;
};
constexpr ClassRule kClassRules[] = {
    {0x030000, 0xffff00, DeviceKind::kGpu},  // VGA compatible controller
    {0x030200, 0xffff00, DeviceKind::kGpu},  // 3D controller
    {0x020000, 0xff0000, DeviceKind::kNic},  // any network controller
};

// Vendors whose VGA functions are BMC consoles on server boards, not compute GPUs.
constexpr const char* kBmcVgaVendors[] = {"1a03" /* ASPEED */, "102b" /* Matrox */};

bool IsHex(char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; }

std::vector<std::string> Split(const std::string& s, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= s.size()) {
    size_t end = s.find(sep, start);
    if (end == std::string::npos) end = s.size();
    if (end > start) out.push_back(s.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

// Places `ep` in the hierarchy from its resolved sysfs path: the BDF components above it are
// bridges, and the first component that is not a BDF is the root complex. False when the
// path does not end in the device or has no root complex.
bool PlaceInHierarchy(const std::string& real_path, PciEndpoint* ep) {
  const std::string below = hostfacts::PathBelowSysDevices(real_path);
  if (below.empty()) return false;
  const std::vector<std::string> parts = Split(below, '/');
  if (parts.empty() || parts.back() != ep->address) return false;
  size_t i = parts.size() - 1;
  while (i > 0 && IsBdf(parts[i - 1])) --i;
  if (i == 0) return false;
  ep->bridges.assign(parts.begin() + static_cast<long>(i), parts.end() - 1);
  std::string rc;
  for (size_t k = 0; k < i; ++k) rc += (k ? "/" : "") + parts[k];
  ep->root_complex = rc;
  return true;
}

}  // namespace

const char* DeviceKindName(DeviceKind kind) { return kind == DeviceKind::kGpu ? "gpu" : "nic"; }

bool IsBdf(const std::string& s) {
  // domain (4+ hex) ':' bus (2 hex) ':' device (2 hex) '.' function (0-7)
  const size_t c1 = s.find(':');
  if (c1 == std::string::npos || c1 < 4) return false;
  if (s.size() != c1 + 8 || s[c1 + 3] != ':' || s[c1 + 6] != '.') return false;
  for (size_t k = 0; k < s.size(); ++k) {
    if (k == c1 || k == c1 + 3 || k == c1 + 6) continue;
    const char c = s[k];
    if (!IsHex(c) || std::isupper(static_cast<unsigned char>(c))) return false;
  }
  return s.back() >= '0' && s.back() <= '7';
}

std::optional<DeviceKind> KindOfClass(uint32_t class_code, const std::string& vendor) {
  for (const auto& rule : kClassRules) {
    if ((class_code & rule.mask) != rule.value) continue;
    if (rule.value == 0x030000 && std::find(std::begin(kBmcVgaVendors), std::end(kBmcVgaVendors),
                                            vendor) != std::end(kBmcVgaVendors)) {
      return std::nullopt;
    }
    return rule.kind;
  }
  return std::nullopt;
}

Result<Endpoints> EndpointsOf(const hostfacts::HostSnapshot& snap) {
  if (!snap.pci_listed)
    return Status::NotFound("cannot list " + hostfacts::BusDir(hostfacts::DeviceBus::kPci));
  Endpoints out;
  for (const auto& f : snap.pci) {
    if (f.class_code < 0) {
      LogDebug("topo: skipping PCI function without a class", {{"pci", f.address}});
      continue;
    }
    if (hostfacts::IsPciBridgeClass(f.class_code)) out.bridge_acs[f.address] = f.acs_ctrl;
    PciEndpoint ep;
    ep.address = f.address;
    ep.class_code = static_cast<uint32_t>(f.class_code);
    ep.vendor = f.vendor;
    auto kind = KindOfClass(ep.class_code, ep.vendor);
    if (!kind) continue;
    ep.kind = *kind;
    if (!PlaceInHierarchy(f.sysfs_path, &ep)) {
      LogDebug("topo: skipping PCI function outside /sys/devices/pci*", {{"pci", f.address}});
      continue;
    }
    ep.numa_node = f.numa_node;
    ep.cpus = f.local_cpulist;
    ep.link = LinkOf(f);
    if (ep.kind == DeviceKind::kNic) {
      ep.netdevs = f.netdevs;
      ep.rdma = f.rdma_devices;
      ep.physfn = f.physfn;
    }
    out.devices.push_back(std::move(ep));
  }
  std::stable_sort(out.devices.begin(), out.devices.end(),
                   [](const PciEndpoint& a, const PciEndpoint& b) {
                     if (a.kind != b.kind) return a.kind == DeviceKind::kGpu;
                     return a.address < b.address;
                   });
  for (const auto& r : snap.rdma) {
    if (!r.is_virtual) continue;
    VirtualRdmaEndpoint ep{r.name, r.netdev, ""};
    const hostfacts::Netdev* nd = r.netdev.empty() ? nullptr : snap.FindNetdev(r.netdev);
    if (nd != nullptr && IsBdf(nd->device)) ep.pci = nd->device;
    out.virtual_rdma.push_back(std::move(ep));
  }
  return out;
}

Result<Endpoints> ReadEndpoints(const Host& host) {
  return EndpointsOf(hostfacts::ReadHostSnapshot(host));
}

}  // namespace hcashare::topo
