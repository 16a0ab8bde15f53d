// Which netdevs carry the host's default route (the node's own uplink).
//
// Read from /proc/net/route and /proc/net/ipv6_route through the Host seam, so fixture
// trees can hold them; when the host root has neither (the DaemonSet mounts no /proc), from
// the process's own network namespace, which is the host's (hostNetwork).
#pragma once

#include <string>
#include <vector>

#include "common/host.h"

namespace hcashare::hostfacts {

// The netdevs with an up IPv4 or IPv6 default route (never "lo", never reject routes),
// sorted. Missing or unreadable route files give none.
std::vector<std::string> ReadDefaultRouteNetdevs(const Host& host);

}  // namespace hcashare::hostfacts
