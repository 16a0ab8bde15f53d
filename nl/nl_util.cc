#include "nl/nl_util.h"

#include <cctype>

namespace hcashare {

Result<NlSock> ConnectRoute() {
  NlSock sock(nl_socket_alloc());
  if (!sock) return Status::Internal("nl_socket_alloc failed");
  int err = nl_connect(sock.get(), NETLINK_ROUTE);
  if (err < 0) return Status::Unavailable(std::string("rtnetlink connect: ") + nl_geterror(err));
  return sock;
}

Result<NlLink> GetKernelLink(nl_sock* sock, const std::string& name) {
  rtnl_link* raw = nullptr;
  int err = rtnl_link_get_kernel(sock, 0, name.c_str(), &raw);
  NlLink link(raw);
  if (err < 0) return NlStatus(err, "link " + name);
  return link;
}

Result<NlAddr> ParseNlAddr(const std::string& text, int family) {
  nl_addr* raw = nullptr;
  int err = nl_addr_parse(text.c_str(), family, &raw);
  NlAddr addr(raw);
  if (err < 0) return Status::InvalidArgument("bad address \"" + text + "\": " + nl_geterror(err));
  return addr;
}

std::string OperStateName(uint8_t state) {
  char buf[64];
  std::string out = rtnl_link_operstate2str(state, buf, sizeof(buf));
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

Status NlStatus(int err, const std::string& context) {
  const std::string message = context + ": " + nl_geterror(err);
  switch (-err) {
    case NLE_OBJ_NOTFOUND:
    case NLE_NODEV:
      return Status::NotFound(message);
    case NLE_EXIST:
      return Status::AlreadyExists(message);
    case NLE_PERM:
      return Status::PermissionDenied(message);
    case NLE_INVAL:
    case NLE_RANGE:
      return Status::InvalidArgument(message);
    case NLE_BUSY:
    case NLE_AGAIN:
      return Status::Unavailable(message);
    case NLE_OPNOTSUPP:
      return Status::Unimplemented(message);
    default:
      return Status::IoError(message);
  }
}

}  // namespace hcashare
