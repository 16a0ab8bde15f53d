#include "common/netlink.h"

#include <net/if.h>
#include <netlink/netlink.h>
#include <netlink/route/link.h>

#include <cerrno>
#include <memory>

namespace hcashare {
namespace {

struct NlSockDeleter {
  void operator()(nl_sock* s) const { nl_socket_free(s); }
};
struct LinkDeleter {
  void operator()(rtnl_link* l) const { rtnl_link_put(l); }
};

class NetlinkLinkProvider final : public LinkProvider {
 public:
  Result<LinkState> GetLink(const std::string& name) override {
    std::unique_ptr<nl_sock, NlSockDeleter> sock(nl_socket_alloc());
    if (!sock) return Status::Internal("nl_socket_alloc failed");
    int err = nl_connect(sock.get(), NETLINK_ROUTE);
    if (err < 0) return Status::Unavailable(std::string("rtnetlink connect: ") + nl_geterror(err));
    rtnl_link* raw = nullptr;
    err = rtnl_link_get_kernel(sock.get(), 0, name.c_str(), &raw);
    std::unique_ptr<rtnl_link, LinkDeleter> link(raw);
    if (err < 0) {
      if (err == -NLE_OBJ_NOTFOUND || err == -NLE_NODEV) {
        return Status::NotFound("link " + name + " not found");
      }
      return Status::IoError("get link " + name + ": " + nl_geterror(err));
    }
    LinkState st;
    st.name = name;
    st.ifindex = rtnl_link_get_ifindex(link.get());
    st.admin_up = (rtnl_link_get_flags(link.get()) & IFF_UP) != 0;
    char buf[64];
    st.oper_state = rtnl_link_operstate2str(rtnl_link_get_operstate(link.get()), buf, sizeof(buf));
    for (auto& c : st.oper_state)
      c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    st.mtu = rtnl_link_get_mtu(link.get());
    st.arp_type = rtnl_link_get_arptype(link.get());
    if (nl_addr* a = rtnl_link_get_addr(link.get()); a != nullptr && nl_addr_get_len(a) > 0) {
      char abuf[128];
      st.mac = nl_addr2str(a, abuf, sizeof(abuf));
    }
    return st;
  }
};

}  // namespace

std::unique_ptr<LinkProvider> NewNetlinkLinkProvider() {
  return std::make_unique<NetlinkLinkProvider>();
}

}  // namespace hcashare
