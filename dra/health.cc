#include "dra/health.h"

namespace hcashare::dra {

HealthSource::HealthSource() {
  current_.devices = std::make_shared<const std::vector<DeviceHealthEntry>>();
}

void HealthSource::Publish(std::vector<DeviceHealthEntry> devices) {
  {
    std::lock_guard<std::mutex> lock(data_mu_);
    current_.generation++;
    current_.devices = std::make_shared<const std::vector<DeviceHealthEntry>>(std::move(devices));
  }
  std::lock_guard<std::mutex> lock(subs_mu_);
  for (auto& [id, fn] : subs_) fn();
}

HealthSource::Snapshot HealthSource::Current() const {
  std::lock_guard<std::mutex> lock(data_mu_);
  return current_;
}

uint64_t HealthSource::Subscribe(std::function<void()> on_change) {
  std::lock_guard<std::mutex> lock(subs_mu_);
  const uint64_t id = next_id_++;
  subs_.emplace(id, std::move(on_change));
  return id;
}

void HealthSource::Unsubscribe(uint64_t id) {
  std::lock_guard<std::mutex> lock(subs_mu_);
  subs_.erase(id);
}

}  // namespace hcashare::dra
