#include "nl/ipoib.h"

#include <linux/if_link.h>
#include <linux/rtnetlink.h>
#include <netlink/msg.h>
#include <sys/socket.h>

#include <cstring>

#include "nl/nl_util.h"

namespace hcashare {
namespace {

using NlMsg = std::unique_ptr<nl_msg, NlObjectPut<nl_msg, nlmsg_free>>;

// The same request as an nl_msg (owned), or null when it cannot be built.
NlMsg BuildMessage(const std::string& name, uint32_t parent, uint16_t pkey, uint32_t netns_fd) {
  NlMsg msg(nlmsg_alloc_simple(RTM_NEWLINK, NLM_F_REQUEST | NLM_F_CREATE | NLM_F_EXCL | NLM_F_ACK));
  if (!msg) return nullptr;
  ifinfomsg ifi{};
  ifi.ifi_family = AF_UNSPEC;
  if (nlmsg_append(msg.get(), &ifi, sizeof(ifi), NLMSG_ALIGNTO) < 0) return nullptr;
  if (nla_put_string(msg.get(), IFLA_IFNAME, name.c_str()) < 0 ||
      nla_put_u32(msg.get(), IFLA_LINK, parent) < 0 ||
      nla_put_u32(msg.get(), IFLA_NET_NS_FD, netns_fd) < 0) {
    return nullptr;
  }
  nlattr* info = nla_nest_start(msg.get(), IFLA_LINKINFO);
  if (info == nullptr || nla_put_string(msg.get(), IFLA_INFO_KIND, "ipoib") < 0) return nullptr;
  nlattr* data = nla_nest_start(msg.get(), IFLA_INFO_DATA);
  if (data == nullptr || nla_put_u16(msg.get(), IFLA_IPOIB_PKEY, pkey) < 0 ||
      nla_put_u16(msg.get(), IFLA_IPOIB_MODE, 0 /* datagram */) < 0) {
    return nullptr;
  }
  nla_nest_end(msg.get(), data);
  nla_nest_end(msg.get(), info);
  return msg;
}

}  // namespace

std::vector<uint8_t> BuildIpoibChildRequest(const std::string& name, uint32_t parent, uint16_t pkey,
                                            uint32_t netns_fd) {
  NlMsg msg = BuildMessage(name, parent, pkey, netns_fd);
  if (!msg) return {};
  const nlmsghdr* hdr = nlmsg_hdr(msg.get());
  const auto* bytes = reinterpret_cast<const uint8_t*>(hdr);
  return std::vector<uint8_t>(bytes, bytes + hdr->nlmsg_len);
}

Status CreateIpoibChild(const std::string& parent, const std::string& name, uint16_t pkey,
                        const Netns& target) {
  ASSIGN_OR_RETURN(NlSock sock, ConnectRoute());
  ASSIGN_OR_RETURN(NlLink lower, GetKernelLink(sock.get(), parent));
  NlMsg msg = BuildMessage(name, static_cast<uint32_t>(rtnl_link_get_ifindex(lower.get())), pkey,
                           static_cast<uint32_t>(target.fd()));
  if (!msg) return Status::Internal("cannot build the IPoIB child request");
  int err = nl_send_auto(sock.get(), msg.get());
  if (err >= 0) err = nl_wait_for_ack(sock.get());
  if (err < 0) return NlStatus(err, "create IPoIB child " + name + " of " + parent);
  return Status::Ok();
}

}  // namespace hcashare
