// `hcashare topo`: host snapshot (live or a file) -> endpoints -> report -> table, JSON or
// Graphviz; or the snapshot -> an NCCL topology file.
#include <iostream>

#include "tools/commands.h"
#include "tools/snapshot_source.h"
#include "topo/endpoints.h"
#include "topo/format.h"
#include "topo/nccl_xml.h"
#include "topo/report.h"

namespace hcashare::cli {

int RunTopo(const TopoOptions& opts) {
  auto facts = SnapshotFor(opts.host_root, opts.snapshot);
  if (!facts.ok()) {
    std::cerr << "hcashare topo: " << facts.status().message() << "\n";
    return 1;
  }
  auto snap = topo::EndpointsOf(*facts);
  if (!snap.ok()) {
    std::cerr << "hcashare topo: " << snap.status().message() << "\n";
    return 1;
  }
  const std::string format = opts.json ? "json" : opts.format;
  if (format == "nccl-xml") {
    auto xml = topo::FormatNcclXml(*facts);
    if (!xml.ok()) {
      std::cerr << "hcashare topo: " << xml.status().message() << "\n";
      return 1;
    }
    std::cout << *xml;
    return 0;
  }
  const topo::TopoReport report = topo::BuildReport(*snap);
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
