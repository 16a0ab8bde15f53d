#include "node/health.h"

#include <set>

#include "common/log.h"

namespace hcashare::node {

HealthDebouncer::Clock::time_point HealthDebouncer::Apply(std::vector<PciFunction>* fns,
                                                          Clock::time_point now) {
  auto next = Clock::time_point::max();
  std::set<std::string> seen;
  for (auto& fn : *fns) {
    seen.insert(fn.address);
    auto [it, inserted] = entries_.try_emplace(fn.address);
    Entry& e = it->second;
    if (inserted) {
      // A device seen for the first time is published as it is.
      e.published = fn.healthy;
      e.reason = fn.health_reason;
      continue;
    }
    if (fn.healthy != e.published) {
      // The first change, and a device that vanished (it cannot flap), go out at once.
      const bool first_change = e.changed_at == Clock::time_point::min();
      const auto due = first_change || fn.gone ? now : e.changed_at + window_;
      if (now >= due) {
        LogInfo(fn.healthy ? "device healthy again" : "device unhealthy",
                {{"pci", fn.address}, {"reason", fn.health_reason}});
        e.published = fn.healthy;
        e.reason = fn.health_reason;
        e.changed_at = now;
      } else {
        next = std::min(next, due);
      }
    }
    fn.healthy = e.published;
    fn.health_reason = e.reason;
  }
  for (auto it = entries_.begin(); it != entries_.end();) {
    it = seen.count(it->first) ? std::next(it) : entries_.erase(it);
  }
  return next;
}

}  // namespace hcashare::node
