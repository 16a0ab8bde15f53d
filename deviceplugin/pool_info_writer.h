// Publishes each shared resource's pool description (interop/pool_info.h) for
// hcashare-cni's macvlan mode. Files are written when a pool changes and removed when the
// resource goes or the daemon stops, only while still ours (common/owned_files.h).
// Not thread-safe: owned by the control loop.
#pragma once

#include <string>

#include "common/owned_files.h"
#include "config/config.h"
#include "deviceplugin/pool.h"
#include "interop/pool_info.h"

namespace hcashare::dp {

// The description of a shared pool: its HCAs and, when topology-aware, each ID's node.
PoolInfo BuildPoolInfo(const config::ResourceConfig& rc, const PoolState& pool);

class PoolInfoWriter {
 public:
  // `owner` names this daemon across restarts (its kubelet root; see OwnedFiles).
  PoolInfoWriter(std::string dir, std::string owner) : files_(std::move(dir), std::move(owner)) {}

  // Writes the description of `rc` (shared resources only; an exclusive one has none).
  Status Write(const config::ResourceConfig& rc, const PoolState& pool);
  // Removes the description of `rc` if it is still ours.
  void Remove(const config::ResourceConfig& rc);
  // Removes every description still ours (shutdown).
  void RemoveAll() { files_.RemoveAll(); }
  // At start: removes the descriptions an earlier run of this daemon wrote for resources
  // that `resources` no longer has, or no longer has as shared pools.
  void Reclaim(const std::vector<config::ResourceConfig>& resources);
  // Leaves the description of `rc` to the instance that took the resource over.
  void Disown(const config::ResourceConfig& rc);

 private:
  OwnedFiles files_;
};

}  // namespace hcashare::dp
