// `hcashare discover --config FILE`: the daemon's discovery, pools and Allocate, explained.
#include <iostream>

#include "config/config.h"
#include "tools/commands.h"
#include "tools/discover_report.h"
#include "tools/snapshot_source.h"

namespace hcashare::cli {

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
  const DiscoverReport report = BuildDiscoverReport(*parsed.config, *snap, opts.use_cdi);
  if (opts.json) {
    std::cout << DiscoverJson(report).dump(2) << "\n";
  } else {
    std::cout << FormatDiscoverText(report);
  }
  return 0;
}

}  // namespace hcashare::cli
