#include "testing/fake_uevent_source.h"

#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <utility>

namespace hcashare::fake {

FakeUeventSource::FakeUeventSource() : event_fd_(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) {}

void FakeUeventSource::Inject(Uevent ev) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    queue_.push_back(std::move(ev));
    if (event_fd_.valid()) SignalEventFd(event_fd_.get());
  }
  cv_.notify_all();
}

void FakeUeventSource::Wake() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    woken_ = true;
  }
  cv_.notify_all();
}

Result<std::vector<Uevent>> FakeUeventSource::Wait(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  auto ready = [this] { return !queue_.empty() || woken_; };
  if (timeout.count() < 0) {
    cv_.wait(lock, ready);
  } else {
    cv_.wait_for(lock, std::min(timeout, kMaxUeventWait), ready);
  }
  woken_ = false;
  std::vector<Uevent> events(std::make_move_iterator(queue_.begin()),
                             std::make_move_iterator(queue_.end()));
  queue_.clear();
  if (!events.empty() && event_fd_.valid()) DrainEventFd(event_fd_.get());
  return events;
}

}  // namespace hcashare::fake
