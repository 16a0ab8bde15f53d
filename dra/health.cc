#include "dra/health.h"

namespace hcashare::dra {

bool DeviceHealthEntry::operator==(const DeviceHealthEntry& o) const {
  return pool == o.pool && device == o.device && health == o.health &&
         timeout_seconds == o.timeout_seconds && message == o.message;
}

HealthSource::HealthSource() {
  current_.devices = std::make_shared<const std::vector<DeviceHealthEntry>>();
}

HealthSource::~HealthSource() {
  {
    std::lock_guard<std::mutex> lock(beat_mu_);
    stopping_ = true;
  }
  beat_cv_.notify_all();
  if (beat_.joinable()) beat_.join();
}

void HealthSource::StartKeepAlive(std::chrono::milliseconds interval) {
  if (beat_.joinable() || interval.count() <= 0) return;
  beat_ = std::thread([this, interval] {
    std::unique_lock<std::mutex> lock(beat_mu_);
    while (!beat_cv_.wait_for(lock, interval, [this] { return stopping_; })) {
      lock.unlock();
      {
        std::lock_guard<std::mutex> data(data_mu_);
        current_.generation++;
      }
      Notify();
      lock.lock();
    }
  });
}

void HealthSource::Publish(std::vector<DeviceHealthEntry> devices) {
  {
    std::lock_guard<std::mutex> lock(data_mu_);
    if (current_.generation > 0 && *current_.devices == devices) return;
    current_.generation++;
    current_.devices = std::make_shared<const std::vector<DeviceHealthEntry>>(std::move(devices));
  }
  Notify();
}

void HealthSource::Notify() {
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
