// Publishes each shared resource's pool description (interop/pool_info.h) for
// hcashare-cni's macvlan mode. Files are written when a pool changes and removed when the
// resource goes, only while still ours (common/owned_files.h); a stopping daemon leaves
// them to its successor.
// Not thread-safe: owned by the control loop.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "common/owned_files.h"
#include "config/config.h"
#include "interop/pool_info.h"
#include "node/pool.h"

namespace hcashare::daemon {

// The description of a shared pool: its HCAs and, when topology-aware, each ID's node.
PoolInfo BuildPoolInfo(const config::ResourceConfig& rc, const node::PoolState& pool);

class PoolInfoWriter {
 public:
  // The daemon of `kubelet_root` (its canonical path owns the files, see OwnedFiles).
  PoolInfoWriter(std::string dir, const std::string& kubelet_root);

  // Writes the description of `rc` (shared resources only; an exclusive one has none).
  // AlreadyExists when a foreign file holds its name.
  Status Write(const config::ResourceConfig& rc, const node::PoolState& pool);
  // Removes the description of `rc` if it is still ours.
  void Remove(const config::ResourceConfig& rc);
  // At start: removes the descriptions an earlier run of this daemon wrote for resources
  // that `resources` no longer has, or no longer has as shared pools.
  void Reclaim(const std::vector<config::ResourceConfig>& resources);
  // At shutdown: leaves the descriptions of `resources` for the successor.
  void HandOver(const std::vector<config::ResourceConfig>& resources);
  // Leaves the description of `rc` to the instance that took the resource over.
  void Disown(const config::ResourceConfig& rc);
  // The file layer (uninstall, foreign names).
  OwnedFiles& files() { return files_; }

 private:
  // The file names of the shared pools of `resources`.
  static std::set<std::string> NamesOf(const std::vector<config::ResourceConfig>& resources);

  OwnedFiles files_;
};

}  // namespace hcashare::daemon
