#include "topo/acs.h"

#include "hostfacts/facts.h"

namespace hcashare::topo {

const char* AcsStateName(AcsState state) {
  switch (state) {
    case AcsState::kOff:
      return "off";
    case AcsState::kRedirect:
      return "redirect";
    case AcsState::kUnknown:
      return "unknown";
    default:
      return "n/a";
  }
}

bool AcsRedirects(int acs_ctrl) { return acs_ctrl >= 0 && (acs_ctrl & kAcsRedirectBits) != 0; }

std::optional<std::vector<std::string>> BridgesBetween(const PciEndpoint& a, const PciEndpoint& b) {
  if (a.root_complex != b.root_complex) return std::nullopt;
  size_t common = 0;
  while (common < a.bridges.size() && common < b.bridges.size() &&
         a.bridges[common] == b.bridges[common]) {
    ++common;
  }
  if (common == 0) return std::nullopt;
  std::vector<std::string> out(a.bridges.begin() + static_cast<long>(common), a.bridges.end());
  out.insert(out.end(), b.bridges.begin() + static_cast<long>(common), b.bridges.end());
  return out;
}

AcsPath AcsBetween(const Endpoints& eps, const PciEndpoint& gpu, const PciEndpoint& nic) {
  AcsPath p;
  p.gpu = gpu.address;
  p.nic = nic.address;
  p.nic_name = nic.rdma.empty() ? "" : nic.rdma.front();
  auto bridges = BridgesBetween(gpu, nic);
  if (!bridges) return p;
  p.bridges = std::move(*bridges);
  for (const auto& b : p.bridges) {
    auto it = eps.bridge_acs.find(b);
    const int ctrl = it == eps.bridge_acs.end() ? hostfacts::kAcsUnread : it->second;
    if (AcsRedirects(ctrl)) p.redirecting.push_back(b);
    if (ctrl == hostfacts::kAcsUnread) p.unreadable.push_back(b);
  }
  p.state = !p.redirecting.empty()  ? AcsState::kRedirect
            : !p.unreadable.empty() ? AcsState::kUnknown
                                    : AcsState::kOff;
  return p;
}

std::vector<AcsPath> AcsPaths(const Endpoints& eps) {
  std::vector<AcsPath> out;
  for (const auto& gpu : eps.devices) {
    if (gpu.kind != DeviceKind::kGpu) continue;
    for (const auto& nic : eps.devices) {
      if (nic.kind != DeviceKind::kNic || nic.rdma.empty()) continue;
      AcsPath p = AcsBetween(eps, gpu, nic);
      if (p.state != AcsState::kNotApplicable) out.push_back(std::move(p));
    }
  }
  return out;
}

}  // namespace hcashare::topo
