// Which netdevs carry the host's default route: the node's own uplink, which an exclusive
// pool must never hand to a pod.
//
// Read from /proc/net/route and /proc/net/ipv6_route through the Host seam, so fixture
// trees can hold them; when the host root has neither (the DaemonSet mounts no /proc), from
// the daemon's own network namespace, which is the host's (hostNetwork). A netdev is an uplink
// when it carries a default route itself or through an upper device (a bond or team it is
// enslaved to, a VLAN or macvlan on top of it), found through sysfs `upper_*` links.
#pragma once

#include <set>
#include <string>

#include "common/host.h"

namespace hcashare::dp {

// The netdevs with an up IPv4 or IPv6 default route (never "lo", never reject routes).
// Missing or unreadable route files give an empty set.
std::set<std::string> DefaultRouteNetdevs(const Host& host);

// True when `netdev` or one of its upper devices (up to 4 levels) is in `default_route`.
bool CarriesDefaultRoute(const Host& host, const std::string& netdev,
                         const std::set<std::string>& default_route);

}  // namespace hcashare::dp
