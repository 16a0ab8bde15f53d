// Which netdevs carry the host's default route: the node's own uplink, which neither an
// exclusive pool nor hcashare-cni may ever hand to a pod. A view of the host snapshot: the routes
// are read by hostfacts/routes.h, the `upper_*` links by hostfacts/reader.h.
#pragma once

#include <string>

#include "hostfacts/facts.h"

namespace hcashare::hostfacts {

// True when `netdev` has an up default route in `snap`, itself or through an upper device
// (a bond or team it is enslaved to, a VLAN or macvlan on top of it; up to 4 levels).
bool CarriesDefaultRoute(const HostSnapshot& snap, const std::string& netdev);

}  // namespace hcashare::hostfacts
