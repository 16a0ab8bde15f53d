#include "hostfacts/uplink.h"

#include <algorithm>

namespace hcashare::hostfacts {
namespace {

constexpr int kMaxUpperDepth = 4;

bool Carries(const HostSnapshot& snap, const std::string& netdev, int depth) {
  const auto& routes = snap.default_route_netdevs;
  if (std::find(routes.begin(), routes.end(), netdev) != routes.end()) return true;
  const Netdev* nd = snap.FindNetdev(netdev);
  if (nd == nullptr || depth >= kMaxUpperDepth) return false;
  return std::any_of(nd->uppers.begin(), nd->uppers.end(),
                     [&](const std::string& u) { return Carries(snap, u, depth + 1); });
}

}  // namespace

bool CarriesDefaultRoute(const HostSnapshot& snap, const std::string& netdev) {
  return !snap.default_route_netdevs.empty() && Carries(snap, netdev, 0);
}

}  // namespace hcashare::hostfacts
