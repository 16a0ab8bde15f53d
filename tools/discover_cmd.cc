// `hcashare discover --config FILE`: the daemon's discovery, pools and Allocate, explained;
// with --dra, the ResourceSlices of the DRA driver instead.
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <iostream>

#include "config/config.h"
#include "dra/devices.h"
#include "dra/render.h"
#include "dra/slices.h"
#include "json/dump.h"
#include "node/discovery.h"
#include "tools/commands.h"
#include "tools/discover_report.h"
#include "tools/snapshot_source.h"

namespace hcashare::cli {
namespace {

// --node-name, else $NODE_NAME (as the DaemonSet sets it), else the host name.
std::string NodeName(const std::string& given) {
  if (!given.empty()) return given;
  const char* env = std::getenv("NODE_NAME");
  if (env != nullptr && *env != '\0') return env;
  char host[HOST_NAME_MAX + 1] = {};
  if (gethostname(host, sizeof(host) - 1) != 0) return "";
  return host;
}

// The DRA driver's ResourceSlices for `config` on `snap`, as JSON on stdout; refusals on
// stderr.
int PrintDraSlices(const config::PluginConfig& config, const hostfacts::HostSnapshot& snap,
                   const std::string& node_name) {
  if (node_name.empty()) {
    std::cerr << "hcashare discover: no node name: pass --node-name or set NODE_NAME\n";
    return 1;
  }
  if (!config.HasDra()) {
    std::cerr << "note: no resource of the config has \"api\": \"dra\"; the pool is empty\n";
  }
  const dra::DraInventory inv = dra::SelectDraDevices(config, node::Discover(snap), snap);
  for (const auto& r : inv.refused) {
    std::cerr << "not offered: " << r.address << " (" << r.resource << "): " << r.reason << "\n";
  }
  const dra::PoolContent pool =
      dra::RenderPool(inv, config.dra_driver, node_name, dra::RenderOptionsOf(config));
  const dra::SliceHeader header{dra::ApiVersion::kV1, "", 1};
  std::cout << DumpJson(nlohmann::json(dra::SliceObjects(pool, header)), 2) << "\n";
  return 0;
}

}  // namespace

int RunDiscover(const DiscoverOptions& opts) {
  const config::ParseOutcome parsed = config::LoadConfigFile(opts.config);
  if (!parsed.ok()) {
    std::cerr << opts.config << ": INVALID\n" << config::FormatIssues(parsed);
    return 2;
  }
  auto snap = SnapshotFor(opts.host_root, opts.snapshot);
  if (!snap.ok()) {
    std::cerr << "hcashare discover: " << snap.status().message() << "\n";
    return 1;
  }
  if (opts.dra) return PrintDraSlices(*parsed.config, *snap, NodeName(opts.node_name));
  const DiscoverReport report = BuildDiscoverReport(*parsed.config, *snap, opts.use_cdi);
  if (opts.json) {
    std::cout << DumpJson(DiscoverJson(report), 2) << "\n";
  } else {
    std::cout << FormatDiscoverText(report);
  }
  return 0;
}

}  // namespace hcashare::cli
