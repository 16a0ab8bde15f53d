// PluginState: the latest published view of one resource, shared between the discovery
// loop (writer) and the gRPC handlers (readers).
//
// Publishing never blocks on the kubelet: the writer swaps in an immutable snapshot, bumps
// a generation counter and tells the watchers (the open ListAndWatch streams), which send
// the newest snapshot once their previous write is done, so intermediate states may be
// skipped and the latest always wins. Thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <set>
#include <string>

#include "config/config.h"
#include "deviceplugin/allocation.h"
#include "deviceplugin/api/deviceplugin_v1beta1.pb.h"

namespace hcashare::dp {

// An immutable view of the resource at one generation.
struct Snapshot {
  config::ResourceConfig rc;
  node::PoolState pool;
  // The full device list, serialized once: the form it is sent in, and several times
  // smaller than thousands of live Device messages.
  std::string list_bytes;
  int devices = 0;          // devices in the list
  int healthy_devices = 0;  // of which Healthy
  uint64_t generation = 0;

  // Parses list_bytes (for tools and tests; streams send the bytes as they are).
  v1beta1::ListAndWatchResponse List() const;
};

// Told about every new generation. OnPublished runs on the publishing thread, possibly
// concurrently with the watcher's other methods, and must not block.
class StateWatcher {
 public:
  virtual ~StateWatcher() = default;
  // A new snapshot is current.
  virtual void OnPublished() = 0;
};

class PluginState {
 public:
  explicit PluginState(config::ResourceConfig rc);

  // Publishes `pool` (and `rc`, which may change on reload). REQUIRES: one writer thread.
  // When anything changed, the generation is bumped and every stream woken; otherwise
  // nothing is sent. Returns true when the content changed.
  bool Publish(const config::ResourceConfig& rc, node::PoolState pool);

  // The current snapshot (never null).
  std::shared_ptr<const Snapshot> Current() const;

  // Adds `w`, which is told about every later generation until RemoveWatcher(w) returns.
  void AddWatcher(StateWatcher* w) const;
  // After this returns, `w` is not called any more and may be destroyed.
  void RemoveWatcher(StateWatcher* w) const;

 private:
  mutable std::mutex mu_;
  std::shared_ptr<const Snapshot> current_;  // guarded by mu_
  // Held while watchers are told, so that RemoveWatcher waits for a running notification.
  mutable std::mutex watchers_mu_;
  mutable std::set<StateWatcher*> watchers_;  // guarded by watchers_mu_
};

}  // namespace hcashare::dp
