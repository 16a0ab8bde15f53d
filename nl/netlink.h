// Link state through rtnetlink (libnl-route), behind a small interface so that callers
// can be tested with a double. Reflects the network namespace of the calling thread.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/status.h"

namespace hcashare {

// What the kernel reports about one netdev.
struct LinkState {
  std::string name;
  int ifindex = 0;
  bool admin_up = false;   // IFF_UP
  std::string oper_state;  // "up", "down", "unknown", "lowerlayerdown", ...
  uint32_t mtu = 0;
  std::string mac;        // "aa:bb:cc:dd:ee:ff", "" when the link has none
  uint32_t arp_type = 0;  // ARPHRD_* (1 ether, 32 infiniband)
  // Filled by DumpLinks only:
  std::string perm_mac;    // IFLA_PERM_ADDRESS ("" when the driver reports none)
  std::string parent_bus;  // IFLA_PARENT_DEV_BUS_NAME ("pci", "auxiliary"; "" for virtual)
  std::string parent_dev;  // IFLA_PARENT_DEV_NAME (a PCI address for a VF's netdev)
  std::string kind;        // IFLA_INFO_KIND ("veth", "macvlan", "ipoib"; "" for physical)
  int link_ifindex = 0;    // IFLA_LINK: the lower device (a macvlan's master), 0 for none
  // Filled by NetdevOps::List only, for links without parent_dev (nl/ethtool.h): ethtool's
  // bus address ("0000:5e:00.2"), "" for virtual links or when the query failed.
  std::string bus_info;
};

// Every link of the calling thread's network namespace, in one RTM_GETLINK dump, with the
// identity attributes libnl does not parse (permanent MAC, parent device, kind).
Result<std::vector<LinkState>> DumpLinks();

class LinkProvider {
 public:
  virtual ~LinkProvider() = default;
  // Returns the state of netdev `name`. NotFound when no such link exists.
  virtual Result<LinkState> GetLink(const std::string& name) = 0;
};

// The libnl-route implementation. Each call opens and closes its own socket, so it is
// thread-safe and never caches state across namespaces.
std::unique_ptr<LinkProvider> NewNetlinkLinkProvider();

}  // namespace hcashare
