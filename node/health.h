// HealthDebouncer: holds back flapping device health.
//
// A device's first health change is published at once; any further change of that
// device within `window` of the last published change is held, and published when the
// window has passed if it still stands (so a recovery is always re-published). A device
// that vanished (PciFunction::gone) is published Unhealthy at once.
// Not thread-safe: owned by the control loop.
#pragma once

#include <chrono>
#include <map>
#include <string>
#include <vector>

#include "node/discovery.h"

namespace hcashare::node {

class HealthDebouncer {
 public:
  using Clock = std::chrono::steady_clock;

  explicit HealthDebouncer(std::chrono::milliseconds window) : window_(window) {}

  // Rewrites the `healthy` flag of each function to the value to publish at `now`.
  // Returns the earliest time a held change is due (Clock::time_point::max() if none).
  Clock::time_point Apply(std::vector<PciFunction>* fns, Clock::time_point now);

 private:
  struct Entry {
    bool published = true;
    std::string reason;  // the reason published with it
    Clock::time_point changed_at = Clock::time_point::min();
  };

  const std::chrono::milliseconds window_;
  std::map<std::string, Entry> entries_;  // by PCI address
};

}  // namespace hcashare::node
