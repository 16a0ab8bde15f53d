// Node-side reconciliation for `hcashare cni-gc`: releases what the runtime can no longer
// release itself — attachments whose pod network namespace is gone (e.g. after a node
// reboot or a runtime crash) and attachments whose ADD never finished (a crashed ADD
// leaves a VF renamed or configured, with a state file but no result).
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

}  // namespace hcashare::cni
