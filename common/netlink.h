// Link state through rtnetlink (libnl-route), behind a small interface so that callers
// can be tested with a double. Reflects the network namespace of the calling thread.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

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
};

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
