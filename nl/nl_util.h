// Small RAII wrappers and helpers for libnl (route) objects. Internal to nl/.
#pragma once

#include <netlink/addr.h>
#include <netlink/netlink.h>
#include <netlink/route/link.h>

#include <memory>
#include <string>

#include "common/status.h"

namespace hcashare {

// Deleter for a libnl object released with `Put`.
template <typename T, void (*Put)(T*)>
struct NlObjectPut {
  void operator()(T* p) const {
    if (p != nullptr) Put(p);
  }
};

using NlSock = std::unique_ptr<nl_sock, NlObjectPut<nl_sock, nl_socket_free>>;
using NlLink = std::unique_ptr<rtnl_link, NlObjectPut<rtnl_link, rtnl_link_put>>;
using NlAddr = std::unique_ptr<nl_addr, NlObjectPut<nl_addr, nl_addr_put>>;

// A connected NETLINK_ROUTE socket. Unavailable when rtnetlink cannot be reached.
Result<NlSock> ConnectRoute();
// The kernel's current view of link `name`. NotFound when there is none, IoError (or the
// NlStatus mapping) for other failures.
Result<NlLink> GetKernelLink(nl_sock* sock, const std::string& name);
// Parses an address ("aa:bb:..", "10.0.0.1/24", "fd00::1") of `family` (AF_UNSPEC: any).
Result<NlAddr> ParseNlAddr(const std::string& text, int family);
// The kernel's IF_OPER_* `state` as a lower-case name ("up", "down", "lowerlayerdown", ...).
std::string OperStateName(uint8_t state);
// A Status for libnl error `err` (negative NLE_*): "context: message".
Status NlStatus(int err, const std::string& context);

}  // namespace hcashare
