// FakeUeventSource: a UeventSource double for the daemon tests and benchmarks.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <vector>

#include "common/status.h"
#include "common/uevent.h"
#include "common/unique_fd.h"

namespace hcashare::fake {

// A test double: Inject() queues events and wakes Wait(). fd() is an eventfd that is
// readable while injected events are queued (-1 if eventfd failed).
class FakeUeventSource final : public UeventSource {
 public:
  FakeUeventSource();
  // Queues `ev` for the next Wait(). Thread-safe.
  void Inject(Uevent ev);
  Result<std::vector<Uevent>> Wait(std::chrono::milliseconds timeout) override;
  void Wake() override;
  int fd() const override { return event_fd_.get(); }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Uevent> queue_;  // guarded by mu_
  bool woken_ = false;        // guarded by mu_
  UniqueFd event_fd_;
};

}  // namespace hcashare::fake
