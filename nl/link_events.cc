#include "nl/link_events.h"

#include <linux/rtnetlink.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>

namespace hcashare {
namespace {

int IgnoreMessage(nl_msg*, void*) { return NL_OK; }

}  // namespace

Result<std::unique_ptr<LinkEvents>> LinkEvents::Open() {
  nl_sock* sock = nl_socket_alloc();
  if (sock == nullptr) return Status::Internal("nl_socket_alloc failed");
  nl_socket_disable_seq_check(sock);  // notifications carry no sequence numbers
  int err = nl_connect(sock, NETLINK_ROUTE);
  if (err >= 0) err = nl_socket_add_membership(sock, RTNLGRP_LINK);
  if (err >= 0) err = nl_socket_set_nonblocking(sock);
  if (err < 0) {
    nl_socket_free(sock);
    return Status::Unavailable(std::string("rtnetlink link events: ") + nl_geterror(err));
  }
  UniqueFd wake(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC));
  if (!wake.valid()) {
    nl_socket_free(sock);
    return ErrnoStatus(errno, "eventfd");
  }
  return std::unique_ptr<LinkEvents>(new LinkEvents(sock, std::move(wake)));
}

LinkEvents::~LinkEvents() { nl_socket_free(sock_); }

void LinkEvents::Wake() {
  uint64_t one = 1;
  ssize_t n = ::write(wake_.get(), &one, sizeof(one));
  (void)n;
}

Result<bool> LinkEvents::Wait(std::chrono::milliseconds timeout) {
  pollfd fds[2] = {{nl_socket_get_fd(sock_), POLLIN, 0}, {wake_.get(), POLLIN, 0}};
  int rc = ::poll(fds, 2, static_cast<int>(timeout.count()));
  if (rc < 0) return errno == EINTR ? Result<bool>(false) : ErrnoStatus(errno, "poll rtnetlink");
  if (fds[1].revents & POLLIN) {
    uint64_t v;
    ssize_t n = ::read(wake_.get(), &v, sizeof(v));
    (void)n;
    return false;
  }
  if (!(fds[0].revents & POLLIN)) return false;
  // Drain everything queued: any message (or an overrun) means "something changed".
  nl_socket_modify_cb(sock_, NL_CB_VALID, NL_CB_CUSTOM, IgnoreMessage, nullptr);
  for (int i = 0; i < 1024; ++i) {
    int err = nl_recvmsgs_default(sock_);
    if (err == -NLE_AGAIN || (err < 0 && err != -NLE_NOMEM && err != -NLE_MSG_OVERFLOW)) break;
  }
  return true;
}

}  // namespace hcashare
