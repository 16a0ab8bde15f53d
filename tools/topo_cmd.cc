// `hcashare topo`: host snapshot (live or a file) -> endpoints -> report -> table, JSON or
// Graphviz; or the snapshot -> an NCCL topology file.
#include <iostream>

#include "common/host.h"
#include "kubelet/podresources.h"

#include "json/dump.h"
#include "tools/commands.h"
#include "tools/snapshot_source.h"
#include "topo/endpoints.h"
#include "topo/format.h"
#include "topo/nccl_xml.h"
#include "topo/pod_view.h"
#include "topo/report.h"

namespace hcashare::cli {
namespace {

// `topo --pod`: the pod's devices from the kubelet, placed on the snapshot.
int RunTopoPod(const TopoOptions& opts, const hostfacts::HostSnapshot& facts) {
  const size_t slash = opts.pod.find('/');
  if (slash == std::string::npos || slash == 0 || slash + 1 == opts.pod.size()) {
    std::cerr << "hcashare topo: --pod must be NAMESPACE/NAME, got \"" << opts.pod << "\"\n";
    return 1;
  }
  kubelet::PodResourcesOptions pr;
  pr.kubelet_root =
      opts.kubelet_root.empty() ? JoinPath(opts.host_root, "/var/lib/kubelet") : opts.kubelet_root;
  auto found =
      kubelet::LookupPodDevices(pr, {opts.pod.substr(0, slash), opts.pod.substr(slash + 1), ""});
  if (!found.ok()) {
    std::cerr << "hcashare topo: cannot ask the kubelet for pod " << opts.pod << ": "
              << found.status().message() << "\n";
    return 1;
  }
  if (found->by_resource.empty()) {
    std::cerr << "hcashare topo: the kubelet at " << pr.kubelet_root << " lists no devices for pod "
              << opts.pod << " (is it running on this node?)\n";
    return 1;
  }
  const std::vector<std::string> gpu_resources =
      opts.gpu_resources.empty() ? std::vector<std::string>{"nvidia.com/gpu"} : opts.gpu_resources;
  topo::PodTopo view = topo::BuildPodTopo(facts, found->by_resource, gpu_resources);
  view.pod = opts.pod;
  view.source = found->source;
  if (opts.json || opts.format == "json") {
    std::cout << DumpJson(topo::PodTopoToJson(view), 2) << "\n";
  } else {
    std::cout << topo::FormatPodTopo(view);
  }
  return 0;
}

}  // namespace

int RunTopo(const TopoOptions& opts) {
  auto facts = SnapshotFor(opts.host_root, opts.snapshot);
  if (!facts.ok()) {
    std::cerr << "hcashare topo: " << facts.status().message() << "\n";
    return 1;
  }
  if (!opts.pod.empty()) {
    if (opts.format != "table" && opts.format != "json") {
      std::cerr << "hcashare topo: --pod shows a table or --json, not --format " << opts.format
                << "\n";
      return 1;
    }
    return RunTopoPod(opts, *facts);
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
    std::cout << DumpJson(topo::ToJson(report), 2) << "\n";
  } else if (format == "dot") {
    std::cout << topo::FormatDot(report);
  } else {
    std::cout << topo::FormatTable(report);
  }
  return 0;
}

}  // namespace hcashare::cli
