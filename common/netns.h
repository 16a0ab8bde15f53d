// Network namespace handles: open, create, enter and leave, RAII-style.
//
// Switching is per thread (setns), so a NetnsGuard must be created and destroyed on the
// same thread. The paths used here are this process's own (/proc/thread-self) or ones the
// caller names (a pod's netns path); they are not host state, so they do not go through
// the Host seam.
#pragma once

#include <cstdint>
#include <string>

#include "common/status.h"
#include "common/unique_fd.h"

namespace hcashare {

class Netns {
 public:
  Netns() = default;

  // Opens the namespace at `path` (e.g. /var/run/netns/x or /proc/<pid>/ns/net).
  // NotFound when the path is gone; InvalidArgument when it is not a network namespace.
  static Result<Netns> Open(const std::string& path);
  // The calling thread's current namespace.
  static Result<Netns> Current();

  int fd() const { return fd_.get(); }
  bool valid() const { return fd_.valid(); }
  // True when both handles name the same namespace (same nsfs inode).
  bool SameAs(const Netns& other) const;
  // The namespace's nsfs inode number: its identity while it exists (0 on error).
  uint64_t Inode() const;

 private:
  explicit Netns(UniqueFd fd) : fd_(std::move(fd)) {}
  UniqueFd fd_;
};

// Puts the calling thread into a namespace until destruction, then back into the one it
// was in. Check ok() after construction.
class NetnsGuard {
 public:
  explicit NetnsGuard(const Netns& target);
  ~NetnsGuard();
  NetnsGuard(const NetnsGuard&) = delete;
  NetnsGuard& operator=(const NetnsGuard&) = delete;

  // OK when the thread entered `target`.
  const Status& status() const { return status_; }

 private:
  Netns original_;
  Status status_;
  bool entered_ = false;
};

// True when `path` is a network namespace file (an nsfs inode of type CLONE_NEWNET).
bool IsNetnsPath(const std::string& path);

}  // namespace hcashare
