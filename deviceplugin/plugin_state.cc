#include "deviceplugin/plugin_state.h"

namespace hcashare::dp {
namespace {

std::shared_ptr<const Snapshot> MakeSnapshot(const config::ResourceConfig& rc, PoolState pool,
                                             uint64_t generation) {
  auto s = std::make_shared<Snapshot>();
  s->rc = rc;
  google::protobuf::ArenaOptions options;
  options.start_block_size = 4096;
  options.max_block_size = 64 * 1024;
  s->arena = std::make_unique<google::protobuf::Arena>(options);
  s->list = google::protobuf::Arena::CreateMessage<v1beta1::ListAndWatchResponse>(s->arena.get());
  AppendDeviceList(rc, pool, s->list);
  s->pool = std::move(pool);
  s->generation = generation;
  return s;
}

}  // namespace

PluginState::PluginState(config::ResourceConfig rc) : current_(MakeSnapshot(rc, PoolState{}, 1)) {}

bool PluginState::Publish(const config::ResourceConfig& rc, PoolState pool, bool force) {
  std::shared_ptr<const Snapshot> cur = Current();
  const bool changed = !(cur->rc == rc) || cur->pool != pool;
  if (!changed && !force) return false;
  // Build outside the lock: a large device list must not stall Allocate.
  auto next = MakeSnapshot(rc, std::move(pool), cur->generation + 1);
  {
    std::lock_guard<std::mutex> lock(mu_);
    current_ = std::move(next);
  }
  cv_.notify_all();
  return changed;
}

std::shared_ptr<const Snapshot> PluginState::Current() const {
  std::lock_guard<std::mutex> lock(mu_);
  return current_;
}

std::shared_ptr<const Snapshot> PluginState::WaitNewer(uint64_t seen, const std::atomic<bool>& stop,
                                                       std::chrono::milliseconds timeout) const {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait_for(lock, timeout, [&] { return stop.load() || current_->generation != seen; });
  return current_;
}

void PluginState::WakeAll() const {
  std::lock_guard<std::mutex> lock(mu_);
  cv_.notify_all();
}

}  // namespace hcashare::dp
