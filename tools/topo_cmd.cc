// `hcashare topo`: sysfs -> snapshot -> report -> table, JSON or Graphviz.
#include <iostream>

#include "common/host.h"
#include "tools/commands.h"
#include "topo/format.h"
#include "topo/report.h"
#include "topo/snapshot.h"

namespace hcashare::cli {

int RunTopo(const TopoOptions& opts) {
  auto host = NewRootedHost(opts.host_root);
  auto snap = topo::ReadSnapshot(*host);
  if (!snap.ok()) {
    std::cerr << "hcashare topo: " << snap.status().message() << "\n";
    return 1;
  }
  const topo::TopoReport report = topo::BuildReport(*snap);
  const std::string format = opts.json ? "json" : opts.format;
  if (format == "json") {
    std::cout << topo::ToJson(report).dump(2) << "\n";
  } else if (format == "dot") {
    std::cout << topo::FormatDot(report);
  } else {
    std::cout << topo::FormatTable(report);
  }
  return 0;
}

}  // namespace hcashare::cli
