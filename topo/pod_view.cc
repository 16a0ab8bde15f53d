#include "topo/pod_view.h"

#include <algorithm>
#include <sstream>
#include <tuple>

#include "common/strings.h"

namespace hcashare::topo {

PodTopo BuildPodTopo(const hostfacts::HostSnapshot& snap,
                     const std::map<std::string, std::vector<std::string>>& by_resource,
                     const std::vector<std::string>& gpu_resources) {
  PodTopo view;
  for (const auto& [resource, ids] : by_resource) {
    const bool gpu =
        std::find(gpu_resources.begin(), gpu_resources.end(), resource) != gpu_resources.end();
    if (gpu) {
      PodGpus found = ResolvePodGpus(snap, ids);
      view.gpus.insert(view.gpus.end(), found.gpus.begin(), found.gpus.end());
      if (!found.unresolved.empty()) view.other[resource] = found.unresolved;
      continue;
    }
    for (const auto& id : ids) {
      PodDevice d{resource, id, "", {}, {}};
      if (const hostfacts::PciFunction* f = snap.FindPci(id)) {
        d.pci = f->address;
        d.rdma_devices = f->rdma_devices;
        d.netdevs = f->netdevs;
      } else if (const hostfacts::AuxDevice* a = snap.FindAux(id)) {
        d.pci = a->parent;
        d.rdma_devices = a->rdma_devices;
        d.netdevs = a->netdevs;
      } else {
        view.other[resource].push_back(id);
        continue;
      }
      view.devices.push_back(std::move(d));
    }
  }
  std::sort(view.devices.begin(), view.devices.end(), [](const PodDevice& a, const PodDevice& b) {
    return std::tie(a.resource, a.id) < std::tie(b.resource, b.id);
  });
  // A GPU may be in several GPU resources (a whole-GPU and a time-sliced one): once.
  std::stable_sort(view.gpus.begin(), view.gpus.end(),
                   [](const PodGpu& a, const PodGpu& b) { return a.address < b.address; });
  view.gpus.erase(
      std::unique(view.gpus.begin(), view.gpus.end(),
                  [](const PodGpu& a, const PodGpu& b) { return a.address == b.address; }),
      view.gpus.end());
  auto distances = PciDistances::Of(snap);
  for (const auto& g : view.gpus) {
    std::vector<std::string> row;
    for (const auto& d : view.devices) {
      std::optional<PathType> path;
      if (distances.ok()) path = distances->Path(g.address, d.pci);
      row.push_back(path ? PathTypeName(*path) : "");
    }
    view.paths.push_back(std::move(row));
  }
  return view;
}

std::string FormatPodTopo(const PodTopo& view) {
  std::ostringstream out;
  out << "Pod " << view.pod << " (device IDs from " << view.source << ")\n\nGPUs:\n";
  if (view.gpus.empty()) out << "  none\n";
  for (size_t i = 0; i < view.gpus.size(); ++i) {
    out << "  GPU" << i << "  " << view.gpus[i].address << "  " << view.gpus[i].id << "\n";
  }
  out << "\nRDMA devices:\n";
  if (view.devices.empty()) out << "  none\n";
  for (size_t j = 0; j < view.devices.size(); ++j) {
    const PodDevice& d = view.devices[j];
    out << "  DEV" << j << "  " << d.pci << "  "
        << (d.rdma_devices.empty() ? "-" : Join(d.rdma_devices)) << "  "
        << (d.netdevs.empty() ? "-" : Join(d.netdevs)) << "  (" << d.resource
        << (d.id == d.pci ? "" : ", ID " + d.id) << ")\n";
  }
  for (const auto& [resource, ids] : view.other) {
    out << "  " << resource << ": " << Join(ids)
        << " (not a device of this node: a shared pool's share, or a MIG GPU)\n";
  }
  if (!view.gpus.empty() && !view.devices.empty()) {
    out << "\n       ";
    for (size_t j = 0; j < view.devices.size(); ++j) out << "  DEV" << j;
    out << "\n";
    for (size_t i = 0; i < view.gpus.size(); ++i) {
      out << "  GPU" << i;
      for (const auto& p : view.paths[i]) {
        const std::string cell = p.empty() ? "?" : p;
        out << std::string(6 - std::min<size_t>(cell.size(), 5), ' ') << cell;
      }
      out << "\n";
    }
    out << "\nLegend: PIX/PXB = GPUDirect RDMA at full speed; PHB/NODE = through the host "
           "bridge; SYS = across NUMA nodes\n";
  }
  return out.str();
}

nlohmann::ordered_json PodTopoToJson(const PodTopo& view) {
  nlohmann::ordered_json j;
  j["pod"] = view.pod;
  j["source"] = view.source;
  j["gpus"] = nlohmann::ordered_json::array();
  for (const auto& g : view.gpus) {
    j["gpus"].push_back({{"id", g.id}, {"uuid", g.uuid}, {"pci", g.address}});
  }
  j["devices"] = nlohmann::ordered_json::array();
  for (const auto& d : view.devices) {
    j["devices"].push_back({{"resource", d.resource},
                            {"id", d.id},
                            {"pci", d.pci},
                            {"rdma", d.rdma_devices},
                            {"netdevs", d.netdevs}});
  }
  j["other"] = view.other;
  j["paths"] = nlohmann::ordered_json::array();
  for (size_t i = 0; i < view.gpus.size(); ++i) {
    for (size_t k = 0; k < view.devices.size(); ++k) {
      j["paths"].push_back(
          {{"gpu", view.gpus[i].address},
           {"device", view.devices[k].pci},
           {"path", view.paths[i][k].empty() ? nlohmann::ordered_json(nullptr)
                                             : nlohmann::ordered_json(view.paths[i][k])}});
    }
  }
  return j;
}

}  // namespace hcashare::topo
