#include "nl/netdev.h"

#include <linux/rtnetlink.h>
#include <net/if.h>
#include <netlink/cache.h>
#include <netlink/netlink.h>
#include <netlink/route/addr.h>
#include <netlink/route/link.h>
#include <netlink/route/link/macvlan.h>
#include <netlink/route/route.h>
#include <sys/socket.h>

#include "nl/ethtool.h"
#include "nl/ipoib.h"
#include "nl/nl_util.h"

namespace hcashare {
namespace {

class NetlinkNetdevOps final : public NetdevOps {
 public:
  Result<LinkState> Get(const std::string& name) override { return links_->GetLink(name); }

  Status MoveToNetns(const std::string& name, const Netns& target) override {
    return Change(name, "move to another netns",
                  [&](rtnl_link* c) { rtnl_link_set_ns_fd(c, target.fd()); });
  }
  Status MoveAndChange(int ifindex, const Netns& target, const LinkChanges& changes) override {
    NlAddr mac;
    if (changes.mac) {
      ASSIGN_OR_RETURN(mac, ParseNlAddr(*changes.mac, AF_LLC));
    }
    ASSIGN_OR_RETURN(NlSock sock, ConnectRoute());
    NlLink link(rtnl_link_alloc());
    rtnl_link_set_ifindex(link.get(), ifindex);
    const std::string what = "move link " + std::to_string(ifindex) + " to another netns" +
                             (changes.name ? " as " + *changes.name : "");
    return Apply(sock.get(), link.get(), what, [&](rtnl_link* c) {
      rtnl_link_set_ns_fd(c, target.fd());
      if (changes.name) rtnl_link_set_name(c, changes.name->c_str());
      if (mac) rtnl_link_set_addr(c, mac.get());
      if (changes.mtu) rtnl_link_set_mtu(c, *changes.mtu);
      if (changes.up && *changes.up) rtnl_link_set_flags(c, IFF_UP);
      if (changes.up && !*changes.up) rtnl_link_unset_flags(c, IFF_UP);
    });
  }
  Result<std::vector<LinkState>> List() override {
    ASSIGN_OR_RETURN(std::vector<LinkState> links, DumpLinks());
    FillBusInfo(&links);
    return links;
  }
  Status Rename(const std::string& name, const std::string& new_name) override {
    return Change(name, "rename to " + new_name,
                  [&](rtnl_link* c) { rtnl_link_set_name(c, new_name.c_str()); });
  }
  Status SetMac(const std::string& name, const std::string& mac) override {
    ASSIGN_OR_RETURN(NlAddr addr, ParseNlAddr(mac, AF_LLC));
    return Change(name, "set MAC " + mac, [&](rtnl_link* c) { rtnl_link_set_addr(c, addr.get()); });
  }
  Status SetMtu(const std::string& name, uint32_t mtu) override {
    return Change(name, "set MTU " + std::to_string(mtu),
                  [&](rtnl_link* c) { rtnl_link_set_mtu(c, mtu); });
  }
  Status SetUp(const std::string& name, bool up) override {
    return Change(name, up ? "set up" : "set down", [&](rtnl_link* c) {
      if (up) {
        rtnl_link_set_flags(c, IFF_UP);
      } else {
        rtnl_link_unset_flags(c, IFF_UP);
      }
    });
  }
  Status CreateMacvlan(const std::string& master, const std::string& name,
                       const Netns& target) override {
    ASSIGN_OR_RETURN(NlSock sock, ConnectRoute());
    ASSIGN_OR_RETURN(NlLink lower, GetKernelLink(sock.get(), master));
    NlLink link(rtnl_link_macvlan_alloc());
    if (!link) return Status::Internal("rtnl_link_macvlan_alloc failed");
    rtnl_link_set_link(link.get(), rtnl_link_get_ifindex(lower.get()));
    rtnl_link_set_name(link.get(), name.c_str());
    rtnl_link_macvlan_set_mode(link.get(), rtnl_link_macvlan_str2mode("bridge"));
    rtnl_link_set_ns_fd(link.get(), target.fd());
    int err = rtnl_link_add(sock.get(), link.get(), NLM_F_CREATE | NLM_F_EXCL);
    if (err < 0) return NlStatus(err, "create macvlan " + name + " on " + master);
    return Status::Ok();
  }
  Status CreateIpoibChild(const std::string& parent, const std::string& name, uint16_t pkey,
                          const Netns& target) override {
    return hcashare::CreateIpoibChild(parent, name, pkey, target);
  }
  Status Delete(const std::string& name) override {
    ASSIGN_OR_RETURN(NlSock sock, ConnectRoute());
    ASSIGN_OR_RETURN(NlLink link, GetKernelLink(sock.get(), name));
    int err = rtnl_link_delete(sock.get(), link.get());
    if (err < 0) return NlStatus(err, "delete " + name);
    return Status::Ok();
  }
  Result<std::vector<std::string>> ListAddresses(const std::string& name) override {
    ASSIGN_OR_RETURN(NlSock sock, ConnectRoute());
    ASSIGN_OR_RETURN(NlLink link, GetKernelLink(sock.get(), name));
    nl_cache* raw = nullptr;
    int err = rtnl_addr_alloc_cache(sock.get(), &raw);
    std::unique_ptr<nl_cache, NlObjectPut<nl_cache, nl_cache_free>> cache(raw);
    if (err < 0) return NlStatus(err, "list addresses");
    std::vector<std::string> out;
    const int ifindex = rtnl_link_get_ifindex(link.get());
    for (nl_object* o = nl_cache_get_first(cache.get()); o != nullptr; o = nl_cache_get_next(o)) {
      auto* addr = reinterpret_cast<rtnl_addr*>(o);
      if (rtnl_addr_get_ifindex(addr) != ifindex) continue;
      char buf[128];
      out.push_back(nl_addr2str(rtnl_addr_get_local(addr), buf, sizeof(buf)));
    }
    return out;
  }
  Status AddAddress(const std::string& name, const std::string& cidr) override {
    ASSIGN_OR_RETURN(NlSock sock, ConnectRoute());
    ASSIGN_OR_RETURN(NlLink link, GetKernelLink(sock.get(), name));
    ASSIGN_OR_RETURN(NlAddr local, ParseNlAddr(cidr, AF_UNSPEC));
    std::unique_ptr<rtnl_addr, NlObjectPut<rtnl_addr, rtnl_addr_put>> addr(rtnl_addr_alloc());
    rtnl_addr_set_ifindex(addr.get(), rtnl_link_get_ifindex(link.get()));
    rtnl_addr_set_local(addr.get(), local.get());
    int err = rtnl_addr_add(sock.get(), addr.get(), 0);
    if (err < 0) return NlStatus(err, "add address " + cidr + " to " + name);
    return Status::Ok();
  }
  Status AddRoute(const std::string& name, const std::string& dst,
                  const std::string& gateway) override {
    ASSIGN_OR_RETURN(NlSock sock, ConnectRoute());
    ASSIGN_OR_RETURN(NlLink link, GetKernelLink(sock.get(), name));
    ASSIGN_OR_RETURN(NlAddr to, ParseNlAddr(dst, AF_UNSPEC));
    std::unique_ptr<rtnl_route, NlObjectPut<rtnl_route, rtnl_route_put>> route(rtnl_route_alloc());
    rtnl_route_set_family(route.get(), nl_addr_get_family(to.get()));
    rtnl_route_set_dst(route.get(), to.get());
    rtnl_route_set_table(route.get(), RT_TABLE_MAIN);
    rtnl_route_set_protocol(route.get(), RTPROT_BOOT);
    rtnl_route_set_scope(route.get(), gateway.empty() ? RT_SCOPE_LINK : RT_SCOPE_UNIVERSE);
    rtnl_nexthop* nh = rtnl_route_nh_alloc();  // owned by the route once added
    rtnl_route_nh_set_ifindex(nh, rtnl_link_get_ifindex(link.get()));
    NlAddr gw;
    if (!gateway.empty()) {
      ASSIGN_OR_RETURN(gw, ParseNlAddr(gateway, nl_addr_get_family(to.get())));
      rtnl_route_nh_set_gateway(nh, gw.get());
    }
    rtnl_route_add_nexthop(route.get(), nh);
    int err = rtnl_route_add(sock.get(), route.get(), NLM_F_EXCL);
    if (err < 0) {
      return NlStatus(
          err, "add route " + dst + (gateway.empty() ? "" : " via " + gateway) + " dev " + name);
    }
    return Status::Ok();
  }

 private:
  // Changes link `name` (looked up by name once, then by its ifindex).
  template <typename Fn>
  Status Change(const std::string& name, const std::string& what, Fn&& fill) {
    ASSIGN_OR_RETURN(NlSock sock, ConnectRoute());
    ASSIGN_OR_RETURN(NlLink link, GetKernelLink(sock.get(), name));
    return Apply(sock.get(), link.get(), name + ": " + what, fill);
  }
  // Sends the changes `fill` makes to `orig` (only its ifindex and flags matter) in one
  // RTM_NEWLINK.
  template <typename Fn>
  static Status Apply(nl_sock* sock, rtnl_link* orig, const std::string& what, Fn&& fill) {
    NlLink changes(rtnl_link_alloc());
    fill(changes.get());
    int err = rtnl_link_change(sock, orig, changes.get(), 0);
    if (err < 0) return NlStatus(err, what);
    return Status::Ok();
  }

  std::unique_ptr<LinkProvider> links_ = NewNetlinkLinkProvider();
};

}  // namespace

std::unique_ptr<NetdevOps> NewNetlinkNetdevOps() { return std::make_unique<NetlinkNetdevOps>(); }

}  // namespace hcashare
