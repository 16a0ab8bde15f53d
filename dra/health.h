// HealthSource: the health of the driver's devices as the kubelet's health stream reports it
// (v1alpha1.DRAResourceHealth/NodeWatchResources). The owner publishes the full list with
// every view of the host; open streams send it when it differs from the last (the newest
// only, when several lists come during one write), and again at each keep-alive beat, so
// the kubelet, which turns a device Unknown when it hears nothing of it for its timeout
// (30 s unless the entry says otherwise), keeps it whatever the poll interval. Each message
// is stamped with the time it is sent. Thread-safe.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace hcashare::dra {

// A device's health, as the API reports it.
enum class DeviceHealthStatus { kUnknown = 0, kHealthy = 1, kUnhealthy = 2 };

// One device's entry in the list.
struct DeviceHealthEntry {
  std::string pool;
  std::string device;
  DeviceHealthStatus health = DeviceHealthStatus::kUnknown;
  int64_t timeout_seconds = 0;  // 0: the kubelet's default (30 s)
  std::string message;          // why; cut to kMaxHealthMessage characters when sent

  bool operator==(const DeviceHealthEntry& o) const;
};

// How often open streams resend an unchanged list: well under the kubelet's 30 s.
inline constexpr std::chrono::seconds kHealthKeepAlive{10};

// The longest message the API takes.
inline constexpr size_t kMaxHealthMessage = 1024;

class HealthSource {
 public:
  // A list with its generation (0: nothing published yet, an empty list).
  struct Snapshot {
    uint64_t generation = 0;
    std::shared_ptr<const std::vector<DeviceHealthEntry>> devices;
  };

  HealthSource();
  // Stops the keep-alive beat.
  ~HealthSource();
  HealthSource(const HealthSource&) = delete;
  HealthSource& operator=(const HealthSource&) = delete;

  // Starts a beat every `interval` (a new generation of the same list); once, before any
  // stream opens.
  void StartKeepAlive(std::chrono::milliseconds interval);

  // Replaces the full list and tells every subscriber, unless it equals the current one.
  void Publish(std::vector<DeviceHealthEntry> devices);
  // The current list.
  Snapshot Current() const;

  // Calls `on_change` (quick, non-blocking; it may call Current()) after every Publish until
  // Unsubscribe(id) has returned. Returns the id.
  uint64_t Subscribe(std::function<void()> on_change);
  // Stops the callbacks of `id`; a running one has finished when this returns.
  void Unsubscribe(uint64_t id);

 private:
  mutable std::mutex data_mu_;
  Snapshot current_;  // guarded by data_mu_

  // Tells every subscriber.
  void Notify();

  std::mutex subs_mu_;  // held while callbacks run; never taken under data_mu_
  uint64_t next_id_ = 1;
  std::map<uint64_t, std::function<void()>> subs_;  // guarded by subs_mu_

  std::mutex beat_mu_;
  std::condition_variable beat_cv_;
  bool stopping_ = false;  // guarded by beat_mu_
  std::thread beat_;
};

}  // namespace hcashare::dra
