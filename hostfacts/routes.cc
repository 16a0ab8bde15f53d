#include "hostfacts/routes.h"

#include <cstdint>
#include <fstream>
#include <set>
#include <sstream>

#include "hostfacts/attrs.h"

namespace hcashare::hostfacts {
namespace {

constexpr uint64_t kRtfUp = 0x1;
constexpr uint64_t kRtfReject = 0x200;
// Enough for ~40,000 IPv4 routes; a full Internet table is not a node's.
constexpr size_t kMaxRouteBytes = 4 << 20;

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

// The whole file at the live path `path` (not under the host root), bounded.
Result<std::string> ReadLiveFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Status::NotFound(path);
  std::string text;
  text.resize(kMaxRouteBytes);
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<size_t>(in.gcount()));
  return text;
}

}  // namespace

std::vector<std::string> ReadDefaultRouteNetdevs(const Host& host) {
  Result<std::string> v4 = host.ReadFile("/proc/net/route");
  Result<std::string> v6 = host.ReadFile("/proc/net/ipv6_route");
  if (!v4.ok() && !v6.ok()) {
    // The host root has no /proc (the DaemonSet mounts only /sys and /dev under it): routes
    // belong to the network namespace the daemon runs in, the host's (hostNetwork).
    v4 = ReadLiveFile("/proc/self/net/route");
    v6 = ReadLiveFile("/proc/self/net/ipv6_route");
  }
  std::set<std::string> out;
  if (v4.ok()) AddIpv4(*v4, &out);
  if (v6.ok()) AddIpv6(*v6, &out);
  out.erase("lo");
  return {out.begin(), out.end()};
}

}  // namespace hcashare::hostfacts
