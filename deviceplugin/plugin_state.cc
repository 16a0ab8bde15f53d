#include "deviceplugin/plugin_state.h"

#include <google/protobuf/arena.h>

namespace hcashare::dp {
namespace {

std::shared_ptr<const Snapshot> MakeSnapshot(const config::ResourceConfig& rc, node::PoolState pool,
                                             uint64_t generation) {
  auto s = std::make_shared<Snapshot>();
  s->rc = rc;
  {
    // Built on a short-lived arena (a few blocks instead of thousands of allocations),
    // serialized, and dropped.
    google::protobuf::ArenaOptions options;
    options.start_block_size = 4096;
    options.max_block_size = 64 * 1024;
    google::protobuf::Arena arena(options);
    auto* list = google::protobuf::Arena::CreateMessage<v1beta1::ListAndWatchResponse>(&arena);
    AppendDeviceList(rc, pool, list);
    s->devices = list->devices_size();
    for (const auto& d : list->devices()) s->healthy_devices += d.health() == kHealthy;
    list->SerializeToString(&s->list_bytes);
  }
  s->pool = std::move(pool);
  s->generation = generation;
  return s;
}

}  // namespace

v1beta1::ListAndWatchResponse Snapshot::List() const {
  v1beta1::ListAndWatchResponse list;
  list.ParseFromString(list_bytes);
  return list;
}

PluginState::PluginState(config::ResourceConfig rc)
    : current_(MakeSnapshot(rc, node::PoolState{}, 1)) {}

bool PluginState::Publish(const config::ResourceConfig& rc, node::PoolState pool) {
  std::shared_ptr<const Snapshot> cur = Current();
  const bool changed = !(cur->rc == rc) || cur->pool != pool;
  if (!changed) return false;
  // Build outside the lock: a large device list must not stall Allocate.
  auto next = MakeSnapshot(rc, std::move(pool), cur->generation + 1);
  {
    std::lock_guard<std::mutex> lock(mu_);
    current_ = std::move(next);
  }
  std::lock_guard<std::mutex> lock(watchers_mu_);
  for (StateWatcher* w : watchers_) w->OnPublished();
  return changed;
}

std::shared_ptr<const Snapshot> PluginState::Current() const {
  std::lock_guard<std::mutex> lock(mu_);
  return current_;
}

void PluginState::AddWatcher(StateWatcher* w) const {
  std::lock_guard<std::mutex> lock(watchers_mu_);
  watchers_.insert(w);
}

void PluginState::RemoveWatcher(StateWatcher* w) const {
  std::lock_guard<std::mutex> lock(watchers_mu_);
  watchers_.erase(w);
}

}  // namespace hcashare::dp
