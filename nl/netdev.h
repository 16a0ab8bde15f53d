// Changes to netdevs through rtnetlink (libnl-route), behind a small interface. Every call
// acts in the calling thread's network namespace (see common/netns.h).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/netns.h"
#include "common/status.h"
#include "nl/netlink.h"

namespace hcashare {

// Changes applied together with a move into another namespace. Unset fields stay.
struct LinkChanges {
  std::optional<std::string> name;  // the name in the target namespace
  std::optional<std::string> mac;
  std::optional<uint32_t> mtu;
  std::optional<bool> up;
};

class NetdevOps {
 public:
  virtual ~NetdevOps() = default;
  // The link `name`. NotFound when there is none.
  virtual Result<LinkState> Get(const std::string& name) = 0;
  // Moves `name` into `target` (it keeps its name there).
  virtual Status MoveToNetns(const std::string& name, const Netns& target) = 0;
  // Moves the link with `ifindex` into `target` and applies `changes` there, in one
  // RTM_NEWLINK: the interface never carries its new name in the source namespace, and
  // when its current name is taken in the target the kernel gives it the new one
  // directly. The kernel applies the move first; if a later change fails the interface
  // stays moved. By ifindex, not name: a name can change under us, an ifindex cannot.
  virtual Status MoveAndChange(int ifindex, const Netns& target, const LinkChanges& changes) = 0;
  // Every link of the namespace with its identity attributes (see DumpLinks), and, for
  // links without a parent device, ethtool's bus address (LinkState::bus_info).
  virtual Result<std::vector<LinkState>> List() = 0;
  // Renames `name`; the link must be down.
  virtual Status Rename(const std::string& name, const std::string& new_name) = 0;
  // Sets the link-layer address ("aa:bb:cc:dd:ee:ff").
  virtual Status SetMac(const std::string& name, const std::string& mac) = 0;
  virtual Status SetMtu(const std::string& name, uint32_t mtu) = 0;
  // Sets or clears IFF_UP.
  virtual Status SetUp(const std::string& name, bool up) = 0;
  // Creates a macvlan (bridge mode) named `name` on `master` (in the calling thread's
  // namespace), directly inside `target`.
  virtual Status CreateMacvlan(const std::string& master, const std::string& name,
                               const Netns& target) = 0;
  // Creates an IPoIB child `name` (partition key `pkey`) of `parent` directly inside
  // `target` (see nl/ipoib.h).
  virtual Status CreateIpoibChild(const std::string& parent, const std::string& name, uint16_t pkey,
                                  const Netns& target) = 0;
  // Deletes link `name`. NotFound when there is none.
  virtual Status Delete(const std::string& name) = 0;
  // The addresses of `name` as CIDRs ("10.1.0.5/24"), in kernel order.
  virtual Result<std::vector<std::string>> ListAddresses(const std::string& name) = 0;
  // Adds `cidr` ("10.1.0.5/24", "fd00::5/64") to `name`.
  virtual Status AddAddress(const std::string& name, const std::string& cidr) = 0;
  // Adds a route to `dst` (a CIDR) out of `name`, via `gateway` when it is not empty.
  virtual Status AddRoute(const std::string& name, const std::string& dst,
                          const std::string& gateway) = 0;
};

// The libnl implementation; each call opens its own rtnetlink socket.
std::unique_ptr<NetdevOps> NewNetlinkNetdevOps();

}  // namespace hcashare
