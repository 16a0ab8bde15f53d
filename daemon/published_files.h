// PublishedFiles: the files the control loop publishes for other components, each
// resource's CDI spec (with --use-cdi) and each shared pool's description (with a
// pool-info directory), through their whole life: reclaimed from an earlier run at start,
// rewritten when a pool changes, handed to the successor at shutdown (a rollout has no
// moment without them), and removed only by an uninstall (Uninstall) or when their
// resource goes.
//
// A foreign file at one of our names (OwnedFiles) is left alone: the failure is logged
// once with what to do, counted in hcashare_foreign_files{dir}, and a CDI spec that cannot
// be written marks the pool's CDI unavailable (Allocate then says why).
// Not thread-safe: owned by the control loop.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/status.h"
#include "config/config.h"
#include "daemon/pool_info_writer.h"
#include "deviceplugin/cdi.h"
#include "deviceplugin/dp_metrics.h"
#include "node/pool.h"

namespace hcashare::daemon {

// Where the files go. An empty directory publishes none of that kind.
struct PublishedDirs {
  std::string kubelet_root;  // the daemon's --kubelet-root-dir (any spelling)
  std::string cdi_spec_dir;  // CDI specs: written with --use-cdi only
  bool use_cdi = false;
  std::string pool_info_dir;  // pool descriptions
};

class PublishedFiles {
 public:
  // `metrics` (may be null) must outlive this object.
  PublishedFiles(const PublishedDirs& dirs, dp::DpMetrics* metrics);

  // At start: removes what earlier runs of this daemon left for resources `resources` no
  // longer has (every CDI spec, when CDI is off now) and owns the rest again.
  void Reclaim(const std::vector<config::ResourceConfig>& resources);
  // Writes the files of `rc` for `*pool`; failures are logged when they start and end.
  // Sets pool->cdi_unavailable while a foreign file holds the CDI spec's name.
  void Write(const config::ResourceConfig& rc, node::PoolState* pool);
  // Removes the files of `rc` (a resource that went) if still ours.
  void Remove(const config::ResourceConfig& rc);
  // Leaves the files of `rc` to the instance that took the resource over.
  void Disown(const config::ResourceConfig& rc);
  // At shutdown: leaves the files of `resources` for the next instance and removes the
  // rest of ours.
  void HandOver(const std::vector<config::ResourceConfig>& resources);

  // Uninstall: removes every file the daemons of `dirs.kubelet_root` published in both
  // directories (CDI's whether or not use_cdi is set), and their ledgers; foreign files
  // stay. FailedPrecondition while such a daemon still runs. Returns the removed paths.
  static Result<std::vector<std::string>> Uninstall(const PublishedDirs& dirs);

 private:
  // Logs `st` of the `what` of `rc` when it differs from the last one, and the recovery.
  void Report(const std::string& what, const config::ResourceConfig& rc, const Status& st);
  // Sets hcashare_foreign_files for both directories.
  void CountForeign();

  dp::DpMetrics* const metrics_;
  std::unique_ptr<dp::CdiSpecWriter> cdi_;     // with use_cdi
  std::unique_ptr<PoolInfoWriter> pool_info_;  // with a pool-info directory
  std::string cdi_off_dir_;                    // without use_cdi: reclaimed at start only
  std::string kubelet_root_;
  std::map<std::string, std::string> failing_;  // "<what> <resource>" -> last error logged
};

}  // namespace hcashare::daemon
