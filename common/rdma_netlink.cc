#include "common/rdma_netlink.h"

#include <linux/netlink.h>
#include <netlink/attr.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>
#include <rdma/rdma_netlink.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <vector>

namespace hcashare {

const char* RdmaNetnsModeName(RdmaNetnsMode mode) {
  return mode == RdmaNetnsMode::kExclusive ? "exclusive" : "shared";
}

Result<RdmaNetnsMode> ParseSysGetAttributes(const uint8_t* data, size_t len) {
  // Walk the attributes by hand (nla_ok/nla_next), so a malformed reply can never read
  // past `len`.
  const auto* nla = reinterpret_cast<const nlattr*>(data);
  int rem = static_cast<int>(len);
  for (; rem >= static_cast<int>(sizeof(nlattr));) {
    if (nla->nla_len < sizeof(nlattr) || nla->nla_len > rem) {
      return Status::InvalidArgument("malformed RDMA netlink attribute");
    }
    if ((nla->nla_type & NLA_TYPE_MASK) == RDMA_NLDEV_SYS_ATTR_NETNS_MODE) {
      if (nla->nla_len < NLA_HDRLEN + 1) {
        return Status::InvalidArgument("RDMA netns mode attribute too short");
      }
      uint8_t v = *(reinterpret_cast<const uint8_t*>(nla) + NLA_HDRLEN);
      if (v > 1)
        return Status::InvalidArgument("RDMA netns mode out of range: " + std::to_string(v));
      return v == 1 ? RdmaNetnsMode::kShared : RdmaNetnsMode::kExclusive;
    }
    int step = NLA_ALIGN(nla->nla_len);
    rem -= step;
    nla = reinterpret_cast<const nlattr*>(reinterpret_cast<const uint8_t*>(nla) + step);
  }
  return Status::InvalidArgument("RDMA netns mode attribute missing from reply");
}

namespace {

struct NlSockDeleter {
  void operator()(nl_sock* s) const { nl_socket_free(s); }
};
struct NlMsgDeleter {
  void operator()(nl_msg* m) const { nlmsg_free(m); }
};

struct ReplyState {
  bool got = false;
  Result<RdmaNetnsMode> mode = Status::InvalidArgument("no reply");
};

int OnValid(nl_msg* msg, void* arg) {
  auto* st = static_cast<ReplyState*>(arg);
  nlmsghdr* hdr = nlmsg_hdr(msg);
  st->got = true;
  st->mode = ParseSysGetAttributes(static_cast<const uint8_t*>(nlmsg_data(hdr)),
                                   static_cast<size_t>(nlmsg_datalen(hdr)));
  return NL_OK;
}

class RdmaNetlink final : public RdmaSystem {
 public:
  Result<RdmaNetnsMode> GetNetnsMode() override {
    std::unique_ptr<nl_sock, NlSockDeleter> sock(nl_socket_alloc());
    if (!sock) return Status::Internal("nl_socket_alloc failed");
    int err = nl_connect(sock.get(), NETLINK_RDMA);
    if (err < 0) {
      return Status::Unavailable(std::string("RDMA netlink not available: ") + nl_geterror(err));
    }
    std::unique_ptr<nl_msg, NlMsgDeleter> msg(nlmsg_alloc_simple(
        RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_SYS_GET), NLM_F_REQUEST | NLM_F_ACK));
    if (!msg) return Status::Internal("nlmsg_alloc failed");
    err = nl_send_auto(sock.get(), msg.get());
    if (err < 0) return Status::IoError(std::string("RDMA netlink send: ") + nl_geterror(err));
    ReplyState state;
    nl_socket_modify_cb(sock.get(), NL_CB_VALID, NL_CB_CUSTOM, OnValid, &state);
    err = nl_recvmsgs_default(sock.get());
    if (err < 0) {
      // Kernels without the SYS_GET command answer EOPNOTSUPP/EINVAL: too old to have
      // an exclusive mode at all.
      if (err == -NLE_OPNOTSUPP || err == -NLE_INVAL) {
        return Status::Unavailable(std::string("RDMA netns mode not supported by kernel: ") +
                                   nl_geterror(err));
      }
      return Status::IoError(std::string("RDMA netlink receive: ") + nl_geterror(err));
    }
    if (!state.got) return Status::IoError("RDMA netlink: no reply to SYS_GET");
    return state.mode;
  }
};

}  // namespace

std::unique_ptr<RdmaSystem> NewRdmaNetlink() { return std::make_unique<RdmaNetlink>(); }

}  // namespace hcashare
