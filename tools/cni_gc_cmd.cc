// `hcashare cni-gc`: hcashare-cni's node-side reconciliation, by hand or from a node
// start-up hook (see cni/recover.h).
#include <iostream>
#include <memory>

#include <nlohmann/json.hpp>

#include "cni/node_config.h"
#include "cni/recover.h"
#include "common/host.h"
#include "json/dump.h"
#include "nl/netdev.h"
#include "nl/rdma_netlink.h"
#include "nl/sriov.h"
#include "tools/commands.h"

namespace hcashare::cli {

int RunCniGc(const CniGcOptions& flags) {
  auto node = cni::LoadNodeSettings(cni::ProcessEnvironment());
  if (!node.ok()) {
    std::cerr << "hcashare cni-gc: " << node.status().message() << ": " << node.status().details()
              << "\n";
    return 2;
  }
  CniGcOptions opts = flags;
  if (opts.state_dir.empty()) opts.state_dir = node->state_dir;
  if (opts.host_root.empty()) opts.host_root = node->host_root;
  node->state_dir = opts.state_dir;
  node->host_root = opts.host_root;
  std::unique_ptr<Host> host = NewRootedHost(opts.host_root);
  std::unique_ptr<NetdevOps> netdev = NewNetlinkNetdevOps();
  std::unique_ptr<VfOps> vf = NewNetlinkVfOps();
  std::unique_ptr<RdmaSystem> rdma = NewRdmaNetlink();
  cni::StateStore store(opts.state_dir);
  std::unique_ptr<cni::VfDriver> vf_driver = cni::NewSysfsVfDriver(*host);
  cni::AttachContext ctx{*host, *netdev, *vf, *rdma, store, nullptr};
  ctx.vf_driver = vf_driver.get();
  const std::vector<cni::RecoveryItem> items =
      cni::RecoverAttachments(ctx, *node, opts.cni_path, !opts.dry_run);
  int failures = 0;
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const auto& item : items) {
    failures += !item.error.empty();
    if (opts.json) {
      out.push_back({{"containerID", item.container_id},
                     {"ifname", item.ifname},
                     {"device", item.device},
                     {"action", item.reason.empty() ? "keep"
                                : opts.dry_run      ? "would release"
                                                    : "release"},
                     {"reason", item.reason},
                     {"error", item.error}});
      continue;
    }
    std::cout << (item.reason.empty() ? "keep     "
                  : opts.dry_run      ? "stale    "
                                      : "released ")
              << item.container_id << "/" << item.ifname << " (" << item.device << ")";
    if (!item.reason.empty()) std::cout << ": " << item.reason;
    if (!item.error.empty()) std::cout << "; FAILED: " << item.error;
    std::cout << "\n";
  }
  // After the attachments: their check of a running ADD takes (and releases) its mark.
  for (const cni::StaleLock& lock : cni::RemoveStaleAddMarks(store, !opts.dry_run)) {
    failures += !lock.error.empty();
    const char* action = opts.dry_run ? "would remove" : "remove";
    if (opts.json) {
      out.push_back({{"lockFile", lock.path},
                     {"action", action},
                     {"reason", "nobody holds it (its ADD was killed)"},
                     {"error", lock.error}});
      continue;
    }
    std::cout << (opts.dry_run ? "stale    " : "removed  ") << "lock file " << lock.path;
    if (!lock.error.empty()) std::cout << "; FAILED: " << lock.error;
    std::cout << "\n";
  }
  if (opts.json) {
    std::cout << DumpJson(out, 2) << "\n";
  } else if (items.empty()) {
    std::cout << "no attachments in " << opts.state_dir << "\n";
  }
  return failures == 0 ? 0 : 1;
}

}  // namespace hcashare::cli
