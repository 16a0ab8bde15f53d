#include "tools/snapshot_source.h"

#include "hostfacts/snapshot_json.h"

namespace hcashare::cli {

hostfacts::HostSnapshot ReadNodeSnapshot(const Host& host, RdmaSystem& rdma,
                                         const hostfacts::ReadOptions& opts) {
  hostfacts::HostSnapshot snap = hostfacts::ReadHostSnapshot(host, opts);
  auto mode = rdma.GetNetnsMode();
  if (mode.ok()) {
    snap.rdma_netns_mode = RdmaNetnsModeName(*mode);
  } else {
    snap.rdma_netns_error = mode.status().message();
  }
  return snap;
}

Result<hostfacts::HostSnapshot> SnapshotFor(const std::string& host_root,
                                            const std::string& snapshot_file,
                                            const hostfacts::ReadOptions& opts) {
  if (!snapshot_file.empty()) return hostfacts::LoadSnapshotFile(snapshot_file);
  auto host = NewRootedHost(host_root);
  return ReadNodeSnapshot(*host, *NewRdmaNetlink(), opts);
}

}  // namespace hcashare::cli
