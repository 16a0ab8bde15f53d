#include "testing/restart_storm.h"

#include <random>
#include <set>
#include <thread>

namespace hcashare::fake {
namespace {

using Clock = std::chrono::steady_clock;

// IDs of the full list that `v` lacks or lists as not Healthy.
int MissingDevices(const ResourceView& v, size_t devices) {
  std::set<std::string> healthy;
  for (const auto& d : v.devices) {
    if (d.health() == "Healthy") healthy.insert(d.id());
  }
  int missing = 0;
  for (size_t i = 0; i < devices; ++i) missing += healthy.count(std::to_string(i)) ? 0 : 1;
  return missing + static_cast<int>(v.devices.size() > devices ? v.devices.size() - devices : 0);
}

std::string Describe(const ResourceView& v) {
  return "registrations=" + std::to_string(v.registrations) +
         " connected=" + std::to_string(v.connected) +
         " lists=" + std::to_string(v.lists_received) +
         " devices=" + std::to_string(v.devices.size());
}

double Ms(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

}  // namespace

StormResult RunRestartStorm(FakeKubelet& kubelet, const StormOptions& opts) {
  StormResult out;
  std::mt19937 rng(opts.seed);
  std::uniform_int_distribution<long> pause(opts.min_pause.count(), opts.max_pause.count());
  for (int i = 0; i < opts.restarts; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(pause(rng)));
    const ResourceView before = kubelet.View(opts.resource);
    const auto t0 = Clock::now();
    Status st = kubelet.Restart();
    out.restart_call_ms.push_back(Ms(Clock::now() - t0));
    if (!st.ok()) {
      ++out.failed;
      if (out.first_failure.empty()) out.first_failure = "restart: " + st.ToString();
      if (opts.stop_on_failure) break;
      continue;
    }
    if (opts.overlapping && i + 1 < opts.restarts) continue;
    // A list counts only when it arrived on a registration made after this restart.
    ResourceView done;
    const bool ok = kubelet.WaitFor(
        opts.resource,
        [&](const ResourceView& v) {
          done = v;
          return v.registrations > before.registrations && v.connected &&
                 v.lists_received > before.lists_received && v.last_list_at >= t0 &&
                 MissingDevices(v, opts.devices) == 0;
        },
        opts.timeout);
    if (ok) {
      out.reregister_ms.push_back(Ms(done.last_list_at - t0));
      continue;
    }
    ++out.failed;
    out.lost_devices += MissingDevices(done, opts.devices);
    if (out.first_failure.empty()) {
      out.first_failure = "restart " + std::to_string(i) + " not re-registered within " +
                          std::to_string(opts.timeout.count()) + " ms: " + Describe(done);
    }
    if (opts.stop_on_failure) break;
  }
  return out;
}

}  // namespace hcashare::fake
