// IP addresses as text, the one check for every reader of them (the CNI's results and IPAM,
// the DRA claim configuration, the test API server's status validation).
#pragma once

#include <optional>
#include <string_view>

namespace hcashare {

// An IPv4 or IPv6 address (no prefix).
bool IsIpAddress(std::string_view s);

// The IP version, 4 or 6, of an address with a prefix length ("10.1.2.3/24",
// "fd00::5/64"); std::nullopt when `s` is not one.
std::optional<int> CidrFamily(std::string_view s);

}  // namespace hcashare
