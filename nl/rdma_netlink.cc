#include "nl/rdma_netlink.h"

#include <linux/netlink.h>
#include <netlink/attr.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>
#include <rdma/rdma_netlink.h>
#include <sys/stat.h>

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

Result<RdmaDeviceRef> ParseDevGetAttributes(const uint8_t* data, size_t len) {
  const auto* nla = reinterpret_cast<const nlattr*>(data);
  int rem = static_cast<int>(len);
  bool have_index = false;
  RdmaDeviceRef ref;
  for (; rem >= static_cast<int>(sizeof(nlattr));) {
    if (nla->nla_len < sizeof(nlattr) || nla->nla_len > rem) {
      return Status::InvalidArgument("malformed RDMA netlink attribute");
    }
    const auto* payload = reinterpret_cast<const uint8_t*>(nla) + NLA_HDRLEN;
    const size_t payload_len = nla->nla_len - NLA_HDRLEN;
    switch (nla->nla_type & NLA_TYPE_MASK) {
      case RDMA_NLDEV_ATTR_DEV_INDEX:
        if (payload_len < sizeof(uint32_t)) {
          return Status::InvalidArgument("RDMA device index attribute too short");
        }
        std::memcpy(&ref.index, payload, sizeof(uint32_t));
        have_index = true;
        break;
      case RDMA_NLDEV_ATTR_DEV_NAME:
        ref.name.assign(reinterpret_cast<const char*>(payload),
                        strnlen(reinterpret_cast<const char*>(payload), payload_len));
        break;
      default:
        break;
    }
    int step = NLA_ALIGN(nla->nla_len);
    rem -= step;
    nla = reinterpret_cast<const nlattr*>(reinterpret_cast<const uint8_t*>(nla) + step);
  }
  if (!have_index || ref.name.empty()) {
    return Status::InvalidArgument("RDMA device reply without index or name");
  }
  return ref;
}

std::vector<uint8_t> BuildSetNetnsAttributes(uint32_t index, uint32_t netns_fd) {
  std::vector<uint8_t> out;
  auto put_u32 = [&](uint16_t type, uint32_t value) {
    nlattr hdr{};
    hdr.nla_len = static_cast<uint16_t>(NLA_HDRLEN + sizeof(uint32_t));
    hdr.nla_type = type;
    const auto* h = reinterpret_cast<const uint8_t*>(&hdr);
    out.insert(out.end(), h, h + sizeof(hdr));
    const auto* v = reinterpret_cast<const uint8_t*>(&value);
    out.insert(out.end(), v, v + sizeof(value));
  };
  put_u32(RDMA_NLDEV_ATTR_DEV_INDEX, index);
  put_u32(RDMA_NLDEV_NET_NS_FD, netns_fd);
  return out;
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

int OnDevice(nl_msg* msg, void* arg) {
  auto* out = static_cast<std::vector<Result<RdmaDeviceRef>>*>(arg);
  nlmsghdr* hdr = nlmsg_hdr(msg);
  out->push_back(ParseDevGetAttributes(static_cast<const uint8_t*>(nlmsg_data(hdr)),
                                       static_cast<size_t>(nlmsg_datalen(hdr))));
  return NL_OK;
}

Result<std::unique_ptr<nl_sock, NlSockDeleter>> ConnectRdma() {
  std::unique_ptr<nl_sock, NlSockDeleter> sock(nl_socket_alloc());
  if (!sock) return Status::Internal("nl_socket_alloc failed");
  int err = nl_connect(sock.get(), NETLINK_RDMA);
  if (err < 0) {
    return Status::Unavailable(std::string("RDMA netlink not available: ") + nl_geterror(err));
  }
  return sock;
}

class RdmaNetlink final : public RdmaSystem {
 public:
  Result<std::vector<RdmaDeviceRef>> ListDevices() override {
    ASSIGN_OR_RETURN(auto sock, ConnectRdma());
    std::unique_ptr<nl_msg, NlMsgDeleter> msg(
        nlmsg_alloc_simple(RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_GET),
                           NLM_F_REQUEST | NLM_F_ACK | NLM_F_DUMP));
    if (!msg) return Status::Internal("nlmsg_alloc failed");
    int err = nl_send_auto(sock.get(), msg.get());
    if (err < 0) return Status::IoError(std::string("RDMA netlink send: ") + nl_geterror(err));
    std::vector<Result<RdmaDeviceRef>> replies;
    nl_socket_modify_cb(sock.get(), NL_CB_VALID, NL_CB_CUSTOM, OnDevice, &replies);
    err = nl_recvmsgs_default(sock.get());
    if (err < 0) return Status::IoError(std::string("RDMA netlink receive: ") + nl_geterror(err));
    std::vector<RdmaDeviceRef> out;
    for (auto& r : replies) {
      if (!r.ok()) return r.status();
      out.push_back(std::move(r).value());
    }
    return out;
  }

  Status MoveToNetns(const std::string& name, int netns_fd) override {
    ASSIGN_OR_RETURN(std::vector<RdmaDeviceRef> devices, ListDevices());
    const RdmaDeviceRef* found = nullptr;
    for (const auto& d : devices) {
      if (d.name == name) found = &d;
    }
    if (found == nullptr) return Status::NotFound("RDMA device " + name + " not visible here");
    ASSIGN_OR_RETURN(auto sock, ConnectRdma());
    std::unique_ptr<nl_msg, NlMsgDeleter> msg(nlmsg_alloc_simple(
        RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_SET), NLM_F_REQUEST | NLM_F_ACK));
    if (!msg) return Status::Internal("nlmsg_alloc failed");
    const std::vector<uint8_t> attrs =
        BuildSetNetnsAttributes(found->index, static_cast<uint32_t>(netns_fd));
    void* tail = nlmsg_reserve(msg.get(), attrs.size(), NLMSG_ALIGNTO);
    if (tail == nullptr) return Status::Internal("nlmsg_reserve failed");
    std::memcpy(tail, attrs.data(), attrs.size());
    int err = nl_send_auto(sock.get(), msg.get());
    if (err < 0) return Status::IoError(std::string("RDMA netlink send: ") + nl_geterror(err));
    err = nl_wait_for_ack(sock.get());
    if (err == -NLE_OPNOTSUPP) {
      // ib_core refuses drivers that cannot disassociate user contexts.
      return Status::FailedPrecondition(
          "RDMA device " + name +
          " cannot change network namespace: its driver does not support it (Operation not "
          "supported; Soft-RoCE rxe devices never can)");
    }
    if (err < 0) {
      return Status::FailedPrecondition("move RDMA device " + name +
                                        " to another netns: " + nl_geterror(err));
    }
    return Status::Ok();
  }

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
