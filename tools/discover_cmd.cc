// `hcashare discover --config FILE`: the daemon's discovery, pools and Allocate, explained.
#include <iostream>

#include "common/host.h"
#include "common/rdma_netlink.h"
#include "config/config.h"
#include "tools/commands.h"
#include "tools/discover_report.h"

namespace hcashare::cli {

int RunDiscover(const DiscoverOptions& opts) {
  const config::ParseOutcome parsed = config::LoadConfigFile(opts.config);
  if (!parsed.ok()) {
    std::cerr << opts.config << ": INVALID\n" << config::FormatIssues(parsed);
    return 2;
  }
  auto host = NewRootedHost(opts.host_root);
  auto rdma = NewRdmaNetlink();
  const DiscoverReport report = BuildDiscoverReport(*parsed.config, *host, *rdma, opts.use_cdi);
  if (opts.json) {
    std::cout << DiscoverJson(report).dump(2) << "\n";
  } else {
    std::cout << FormatDiscoverText(report);
  }
  return 0;
}

}  // namespace hcashare::cli
