// HealthSource: the health of the driver's devices as the kubelet's health stream reports it
// (v1alpha1.DRAResourceHealth/NodeWatchResources). The owner publishes the full list
// whenever the host model changes; every open stream then sends it (the newest only, when
// several lists come during one write). Thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
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
  int64_t last_updated_unix = 0;  // seconds
  int64_t timeout_seconds = 0;    // 0: the kubelet's default
  std::string message;            // why; cut to kMaxHealthMessage characters when sent
};

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

  // Replaces the full list and tells every subscriber.
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

  std::mutex subs_mu_;  // held while callbacks run; never taken under data_mu_
  uint64_t next_id_ = 1;
  std::map<uint64_t, std::function<void()>> subs_;  // guarded by subs_mu_
};

}  // namespace hcashare::dra
