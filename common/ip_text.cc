#include "common/ip_text.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <string>

namespace hcashare {
namespace {

// The family of a bare address, or std::nullopt.
std::optional<int> AddressFamily(std::string_view s) {
  if (s.empty() || s.size() > INET6_ADDRSTRLEN) return std::nullopt;
  const std::string text(s);
  unsigned char buf[sizeof(struct in6_addr)];
  if (inet_pton(AF_INET, text.c_str(), buf) == 1) return 4;
  if (inet_pton(AF_INET6, text.c_str(), buf) == 1) return 6;
  return std::nullopt;
}

}  // namespace

bool IsIpAddress(std::string_view s) { return AddressFamily(s).has_value(); }

std::optional<int> CidrFamily(std::string_view s) {
  const size_t slash = s.find('/');
  if (slash == std::string_view::npos) return std::nullopt;
  const auto family = AddressFamily(s.substr(0, slash));
  const std::string_view prefix = s.substr(slash + 1);
  if (!family || prefix.empty() || prefix.size() > 3) return std::nullopt;
  for (char c : prefix) {
    if (c < '0' || c > '9') return std::nullopt;
  }
  const int bits = std::stoi(std::string(prefix));
  if (bits > (*family == 4 ? 32 : 128)) return std::nullopt;
  return family;
}

}  // namespace hcashare
