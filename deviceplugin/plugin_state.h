// PluginState: the latest published view of one resource, shared between the discovery
// loop (writer) and the gRPC handlers (readers).
//
// Publishing never blocks on the kubelet: the writer swaps in an immutable snapshot and
// bumps a generation counter; each ListAndWatch stream sends the newest snapshot when it
// wakes, so intermediate states may be skipped and the latest always wins.
// Thread-safe.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>

#include <google/protobuf/arena.h>

#include "config/config.h"
#include "deviceplugin/allocation.h"
#include "deviceplugin/api/deviceplugin_v1beta1.pb.h"

namespace hcashare::dp {

// An immutable view of the resource at one generation.
struct Snapshot {
  config::ResourceConfig rc;
  PoolState pool;
  // The full device list to send, allocated on `arena`: thousands of small messages in a
  // few blocks instead of one heap allocation each.
  std::unique_ptr<google::protobuf::Arena> arena;
  v1beta1::ListAndWatchResponse* list = nullptr;  // owned by `arena`
  uint64_t generation = 0;
};

class PluginState {
 public:
  explicit PluginState(config::ResourceConfig rc);

  // Publishes `pool` (and `rc`, which may change on reload). REQUIRES: one writer thread.
  // The generation is bumped,
  // and every stream woken, when anything changed or `force` is set. Returns true when
  // the content changed.
  bool Publish(const config::ResourceConfig& rc, PoolState pool, bool force);

  // The current snapshot (never null).
  std::shared_ptr<const Snapshot> Current() const;

  // Blocks until the generation differs from `seen`, `stop` becomes true, or `timeout`
  // passes; returns the current snapshot. Callers check `stop` and the generation.
  std::shared_ptr<const Snapshot> WaitNewer(uint64_t seen, const std::atomic<bool>& stop,
                                            std::chrono::milliseconds timeout) const;

  // Wakes every waiter (used when a stream must notice a stop flag).
  void WakeAll() const;

 private:
  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  std::shared_ptr<const Snapshot> current_;  // guarded by mu_
};

}  // namespace hcashare::dp
