// The ethtool driver info of a netdev (ETHTOOL_GDRVINFO): its bus address, the identity of
// a VF's netdev on kernels that report no parent device over rtnetlink (before Linux 5.15,
// e.g. RHEL 8's 4.18). Acts in the calling thread's network namespace.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"
#include "nl/netlink.h"

namespace hcashare {

// The bus address ("0000:5e:00.2", "mlx5_core.sf.2") ethtool reports for the netdev
// `name`, which must have ifindex `ifindex` before and after the query (a rename in
// between cannot lend it another link's address). "" when the driver reports none
// (virtual links: veth, macvlan). NotFound when `name` is gone or names another ifindex.
Result<std::string> EthtoolBusInfo(const std::string& name, int ifindex);

// Sets bus_info of each link of `links` that has no parent device and may have a bus (no
// kind, or "ipoib"; loopback aside) to EthtoolBusInfo; left "" where that fails.
void FillBusInfo(std::vector<LinkState>* links);

}  // namespace hcashare
