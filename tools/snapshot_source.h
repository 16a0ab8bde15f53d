// Where a CLI command's host snapshot comes from: the live node (under --host-root) or a
// file written by `hcashare snapshot` (--snapshot FILE), so topo, discover and
// validate --against work the same on a laptop as on the node.
#pragma once

#include <string>

#include "common/host.h"
#include "common/status.h"
#include "hostfacts/facts.h"
#include "hostfacts/reader.h"
#include "nl/rdma_netlink.h"

namespace hcashare::cli {

// Reads the node through `host` with `opts`, and its RDMA netns mode through `rdma`.
hostfacts::HostSnapshot ReadNodeSnapshot(const Host& host, RdmaSystem& rdma,
                                         const hostfacts::ReadOptions& opts = {});

// Loads `snapshot_file` when it is not "", else reads the node under `host_root` with
// `opts`, and the RDMA netns mode through RDMA netlink. Errors name the file.
Result<hostfacts::HostSnapshot> SnapshotFor(const std::string& host_root,
                                            const std::string& snapshot_file,
                                            const hostfacts::ReadOptions& opts = {});

}  // namespace hcashare::cli
