// Node-side reconciliation for `hcashare cni-gc`: releases what the runtime can no longer
// release itself — attachments whose pod network namespace is gone (e.g. after a node
// reboot or a runtime crash) and attachments whose ADD never finished (a crashed ADD
// leaves a VF renamed or configured, with a state file but no result) — and removes the
// lock files of ADD marks that killed ADDs left behind.
//
// Lock files: only the ADD marks (locks/add-<container>-<ifname>.lock, one per ADD ever
// killed) are collected, with the protocol of common/lock_file.h (removed only while
// cni-gc holds the lock and the path still names that inode; MarkAddRunning re-checks the
// same after its flock). The per-device locks (locks/<device>.lock) are not: there is one
// per device, reused by every ADD and DEL of it, so they cannot pile up, and
// StateStore::Lock (which waits for the lock) need not re-check.
#pragma once

#include <string>
#include <vector>

#include "cni/attach.h"

namespace hcashare::cni {

// One attachment looked at.
struct RecoveryItem {
  std::string container_id;
  std::string ifname;
  std::string device;
  std::string reason;  // why it was released ("" when kept)
  std::string error;   // why releasing it failed ("" on success)
};

// Looks at every attachment in ctx.store; with `apply`, releases the stale ones as DEL
// would (interface and RDMA device back to the host, PF-side settings reset, IPAM
// released with each attachment's own configuration, marker and state removed).
// `cni_path` is where IPAM plugins are found.
// Each attachment's recorded configuration is read on a node with settings `node`.
std::vector<RecoveryItem> RecoverAttachments(const AttachContext& ctx, const NodeSettings& node,
                                             const std::string& cni_path, bool apply);

// One ADD mark's lock file that nobody holds.
struct StaleLock {
  std::string path;
  std::string error;  // why removing it failed ("" on success)
};

// The lock files of ADD marks nobody holds (their ADD was killed); with `apply`, removed.
// A held one (its ADD is running) is left alone and not listed.
std::vector<StaleLock> RemoveStaleAddMarks(const StateStore& store, bool apply);

}  // namespace hcashare::cni
