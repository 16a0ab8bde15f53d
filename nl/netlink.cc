#include "nl/netlink.h"

#include <net/if.h>
#include <netlink/netlink.h>
#include <netlink/route/link.h>

#include "nl/nl_util.h"

namespace hcashare {
namespace {

class NetlinkLinkProvider final : public LinkProvider {
 public:
  Result<LinkState> GetLink(const std::string& name) override {
    ASSIGN_OR_RETURN(NlSock sock, ConnectRoute());
    ASSIGN_OR_RETURN(NlLink link, GetKernelLink(sock.get(), name));
    LinkState st;
    st.name = name;
    st.ifindex = rtnl_link_get_ifindex(link.get());
    st.admin_up = (rtnl_link_get_flags(link.get()) & IFF_UP) != 0;
    st.oper_state = OperStateName(rtnl_link_get_operstate(link.get()));
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
