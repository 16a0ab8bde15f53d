// DumpLinks: one RTM_GETLINK dump parsed with libnl's message API, for the identity
// attributes its link objects do not carry (IFLA_PERM_ADDRESS, IFLA_PARENT_DEV_*).
#include <linux/if_link.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <netlink/attr.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>
#include <netlink/route/link.h>

#include <cstdio>
#include <cstring>

#include "nl/netlink.h"
#include "nl/nl_util.h"

namespace hcashare {
namespace {

std::string MacString(const nlattr* a) {
  if (a == nullptr) return "";
  const auto* b = static_cast<const unsigned char*>(nla_data(a));
  const int len = nla_len(a);
  std::string out;
  bool all_zero = true;
  for (int i = 0; i < len; ++i) {
    char hex[4];
    std::snprintf(hex, sizeof(hex), i == 0 ? "%02x" : ":%02x", b[i]);
    out += hex;
    all_zero = all_zero && b[i] == 0;
  }
  return all_zero ? "" : out;
}

std::string StringAttr(const nlattr* a) {
  if (a == nullptr || nla_len(a) <= 0) return "";
  const char* s = static_cast<const char*>(nla_data(a));
  return std::string(s, strnlen(s, static_cast<size_t>(nla_len(a))));
}

int OnLink(nl_msg* msg, void* arg) {
  auto* out = static_cast<std::vector<LinkState>*>(arg);
  nlmsghdr* hdr = nlmsg_hdr(msg);
  if (hdr->nlmsg_type != RTM_NEWLINK) return NL_SKIP;
  nlattr* tb[IFLA_MAX + 1] = {};
  if (nlmsg_parse(hdr, sizeof(ifinfomsg), tb, IFLA_MAX, nullptr) < 0) return NL_SKIP;
  const auto* ifi = static_cast<const ifinfomsg*>(nlmsg_data(hdr));
  LinkState st;
  st.ifindex = ifi->ifi_index;
  st.admin_up = (ifi->ifi_flags & IFF_UP) != 0;
  st.arp_type = ifi->ifi_type;
  st.name = StringAttr(tb[IFLA_IFNAME]);
  st.mac = MacString(tb[IFLA_ADDRESS]);
  st.perm_mac = MacString(tb[IFLA_PERM_ADDRESS]);
  if (tb[IFLA_MTU]) st.mtu = nla_get_u32(tb[IFLA_MTU]);
  if (tb[IFLA_LINK]) st.link_ifindex = static_cast<int>(nla_get_u32(tb[IFLA_LINK]));
  st.oper_state = tb[IFLA_OPERSTATE] ? OperStateName(nla_get_u8(tb[IFLA_OPERSTATE])) : "unknown";
  st.parent_bus = StringAttr(tb[IFLA_PARENT_DEV_BUS_NAME]);
  st.parent_dev = StringAttr(tb[IFLA_PARENT_DEV_NAME]);
  if (tb[IFLA_LINKINFO]) {
    nlattr* info[IFLA_INFO_MAX + 1] = {};
    if (nla_parse_nested(info, IFLA_INFO_MAX, tb[IFLA_LINKINFO], nullptr) == 0) {
      st.kind = StringAttr(info[IFLA_INFO_KIND]);
    }
  }
  out->push_back(std::move(st));
  return NL_OK;
}

// One dump attempt into `links`: 0, or a negative libnl error (-NLE_DUMP_INTR when the
// links changed while it ran). `context` names the failing step.
int DumpOnce(nl_sock* sock, std::vector<LinkState>* links, const char** context) {
  links->clear();
  *context = "link dump callback";
  int err = nl_socket_modify_cb(sock, NL_CB_VALID, NL_CB_CUSTOM, OnLink, links);
  if (err < 0) return err;
  ifinfomsg req{};
  req.ifi_family = AF_UNSPEC;
  *context = "link dump request";
  err = nl_send_simple(sock, RTM_GETLINK, NLM_F_DUMP, &req, sizeof(req));
  if (err < 0) return err;
  *context = "link dump";
  return nl_recvmsgs_default(sock);
}

}  // namespace

Result<std::vector<LinkState>> DumpLinks() {
  // A dump interrupted by a concurrent change (another pod's interface moving) is
  // inconsistent, not failed: take it again, on a fresh socket.
  constexpr int kAttempts = 20;
  std::vector<LinkState> links;
  for (int attempt = 1;; ++attempt) {
    ASSIGN_OR_RETURN(NlSock sock, ConnectRoute());
    const char* context = "";
    const int err = DumpOnce(sock.get(), &links, &context);
    if (err >= 0) return links;
    if (err != -NLE_DUMP_INTR || attempt == kAttempts) return NlStatus(err, context);
  }
}

}  // namespace hcashare
