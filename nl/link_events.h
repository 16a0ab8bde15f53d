// Rtnetlink link notifications (RTNLGRP_LINK, through libnl): a netdev appearing, going,
// or changing state (carrier, up/down). Events belong to the network namespace the source
// was opened in. One thread calls Wait(); any thread may call Wake().
#pragma once

#include <chrono>
#include <memory>

#include <netlink/socket.h>

#include "common/status.h"
#include "common/unique_fd.h"

namespace hcashare {

class LinkEvents {
 public:
  // Subscribes to link notifications. Unavailable when netlink refuses.
  static Result<std::unique_ptr<LinkEvents>> Open();
  ~LinkEvents();
  LinkEvents(const LinkEvents&) = delete;
  LinkEvents& operator=(const LinkEvents&) = delete;

  // Blocks until link messages arrive (true: they are consumed), Wake() or `timeout`
  // (false).
  Result<bool> Wait(std::chrono::milliseconds timeout);
  // Makes a pending or the next Wait() return false promptly. Thread-safe.
  void Wake();

 private:
  LinkEvents(nl_sock* sock, UniqueFd wake) : sock_(sock), wake_(std::move(wake)) {}
  nl_sock* sock_;  // owned; freed in the destructor
  UniqueFd wake_;  // eventfd
};

}  // namespace hcashare
