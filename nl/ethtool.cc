#include "nl/ethtool.h"

#include <net/if.h>
#include <net/if_arp.h>

#include <linux/ethtool.h>
#include <linux/netlink.h>
#include <linux/sockios.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>

#include "common/unique_fd.h"

namespace hcashare {
namespace {

// A socket for netdev ioctls in the calling thread's namespace: AF_INET as ethtool(8)
// opens, AF_NETLINK where IPv4 is not built in.
Result<UniqueFd> IoctlSocket() {
  UniqueFd fd(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  if (!fd.valid()) fd.Reset(::socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC));
  if (!fd.valid()) return ErrnoStatus(errno, "cannot open a socket for ethtool");
  return fd;
}

// The ifindex `name` has now; 0 when it names no link.
int IndexOf(int sock, const std::string& name) {
  ifreq ifr{};
  std::strncpy(ifr.ifr_name, name.c_str(), IFNAMSIZ - 1);
  return ::ioctl(sock, SIOCGIFINDEX, &ifr) == 0 ? ifr.ifr_ifindex : 0;
}

Result<std::string> BusInfoOn(int sock, const std::string& name, int ifindex) {
  if (name.empty() || name.size() >= IFNAMSIZ) {
    return Status::InvalidArgument("bad netdev name " + name);
  }
  const Status gone =
      Status::NotFound("netdev " + name + " is no longer ifindex " + std::to_string(ifindex));
  if (IndexOf(sock, name) != ifindex) return gone;
  ethtool_drvinfo info{};
  info.cmd = ETHTOOL_GDRVINFO;
  ifreq ifr{};
  std::strncpy(ifr.ifr_name, name.c_str(), IFNAMSIZ - 1);
  ifr.ifr_data = reinterpret_cast<char*>(&info);
  if (::ioctl(sock, SIOCETHTOOL, &ifr) != 0) {
    if (errno == EOPNOTSUPP) return std::string();  // no driver behind it: virtual
    return ErrnoStatus(errno, "ethtool driver info of " + name);
  }
  if (IndexOf(sock, name) != ifindex) return gone;
  return std::string(info.bus_info, strnlen(info.bus_info, sizeof(info.bus_info)));
}

}  // namespace

Result<std::string> EthtoolBusInfo(const std::string& name, int ifindex) {
  ASSIGN_OR_RETURN(UniqueFd sock, IoctlSocket());
  return BusInfoOn(sock.get(), name, ifindex);
}

void FillBusInfo(std::vector<LinkState>* links) {
  auto sock = IoctlSocket();
  if (!sock.ok()) return;
  for (LinkState& link : *links) {
    // Virtual kinds (veth, macvlan, bridge, ...) have no bus; an IPoIB netdev of a VF
    // reports the kind "ipoib" and its HCA's bus address.
    const bool may_have_bus = link.kind.empty() || link.kind == "ipoib";
    if (!link.parent_dev.empty() || link.arp_type == ARPHRD_LOOPBACK || !may_have_bus) continue;
    link.bus_info = BusInfoOn(sock->get(), link.name, link.ifindex).value_or("");
  }
}

}  // namespace hcashare
