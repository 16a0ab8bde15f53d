#include "deviceplugin/host_uplink.h"

#include <cstdint>
#include <sstream>
#include <vector>

#include "common/sysfs_attr.h"

namespace hcashare::dp {
namespace {

constexpr uint64_t kRtfUp = 0x1;
constexpr uint64_t kRtfReject = 0x200;
constexpr int kMaxUpperDepth = 4;

// The whitespace-separated fields of `line`.
std::vector<std::string> Fields(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> out;
  for (std::string f; in >> f;) out.push_back(f);
  return out;
}

bool AllZero(const std::string& hex) { return hex.find_first_not_of('0') == std::string::npos; }

uint64_t Hex(const std::string& s) { return ParseSysfsInt(s, 16).value_or(0); }

// IPv4: "Iface Destination Gateway Flags RefCnt Use Metric Mask ..." after a header line.
void AddIpv4(const std::string& text, std::set<std::string>* out) {
  std::istringstream in(text);
  std::string line;
  std::getline(in, line);  // the header
  while (std::getline(in, line)) {
    const auto f = Fields(line);
    if (f.size() < 8) continue;
    const uint64_t flags = Hex(f[3]);
    if (AllZero(f[1]) && AllZero(f[7]) && (flags & kRtfUp) && !(flags & kRtfReject)) {
      out->insert(f[0]);
    }
  }
}

// IPv6: "dest dest_len src src_len next_hop metric refcnt use flags iface", no header.
void AddIpv6(const std::string& text, std::set<std::string>* out) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    const auto f = Fields(line);
    if (f.size() < 10) continue;
    const uint64_t flags = Hex(f[8]);
    if (AllZero(f[0]) && AllZero(f[1]) && (flags & kRtfUp) && !(flags & kRtfReject) &&
        f[9] != "lo") {
      out->insert(f[9]);
    }
  }
}

bool Carries(const Host& host, const std::string& netdev, const std::set<std::string>& routes,
             int depth) {
  if (routes.count(netdev)) return true;
  if (depth >= kMaxUpperDepth) return false;
  for (const auto& entry : host.ListDir("/sys/class/net/" + netdev).value_or({})) {
    if (entry.rfind("upper_", 0) == 0 && Carries(host, entry.substr(6), routes, depth + 1)) {
      return true;
    }
  }
  return false;
}

}  // namespace

std::set<std::string> DefaultRouteNetdevs(const Host& host) {
  std::set<std::string> out;
  if (auto v4 = host.ReadFile("/proc/net/route"); v4.ok()) AddIpv4(*v4, &out);
  if (auto v6 = host.ReadFile("/proc/net/ipv6_route"); v6.ok()) AddIpv6(*v6, &out);
  out.erase("lo");
  return out;
}

bool CarriesDefaultRoute(const Host& host, const std::string& netdev,
                         const std::set<std::string>& default_route) {
  return !default_route.empty() && Carries(host, netdev, default_route, 0);
}

}  // namespace hcashare::dp
