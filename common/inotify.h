// InotifyWatcher: watches directories with inotify and can be woken from another thread.
//
// One thread calls Wait(); any thread may call Wake(). AddWatch/RemoveWatch are
// thread-safe with respect to Wait (the kernel serialises them).
#pragma once

#include <sys/inotify.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/status.h"
#include "common/unique_fd.h"

namespace hcashare {

// One event read from the kernel.
struct InotifyEvent {
  int wd = -1;        // watch descriptor it belongs to
  uint32_t mask = 0;  // IN_* bits
  std::string name;   // entry name inside the watched directory ("" for the dir itself)
};

class InotifyWatcher {
 public:
  // Creates the inotify and wake-up descriptors. IoError if the kernel refuses.
  static Result<std::unique_ptr<InotifyWatcher>> Create();

  InotifyWatcher(const InotifyWatcher&) = delete;
  InotifyWatcher& operator=(const InotifyWatcher&) = delete;

  // Watches the on-disk path `path` for `mask`. Returns the watch descriptor.
  // NotFound if the path does not exist.
  Result<int> AddWatch(const std::string& path, uint32_t mask);
  // Stops watching `wd`. Ignores descriptors the kernel already dropped.
  void RemoveWatch(int wd);

  // Blocks until events arrive, Wake() is called, or `timeout` passes. Returns the events
  // read (empty on timeout or wake-up).
  Result<std::vector<InotifyEvent>> Wait(std::chrono::milliseconds timeout);
  // Makes a pending or the next Wait() return promptly. Async-signal-safe.
  void Wake();

 private:
  InotifyWatcher(UniqueFd inotify_fd, UniqueFd wake_fd)
      : inotify_fd_(std::move(inotify_fd)), wake_fd_(std::move(wake_fd)) {}

  UniqueFd inotify_fd_;
  UniqueFd wake_fd_;  // eventfd
};

}  // namespace hcashare
