#include "topo/report.h"

#include <algorithm>
#include <tuple>

#include "common/strings.h"

namespace hcashare::topo {
namespace {

std::vector<NamedDevice> NameDevices(const Endpoints& snap) {
  std::vector<NamedDevice> out;
  int gpus = 0;
  int nics = 0;
  for (const auto& d : snap.devices) {
    std::string name;
    if (d.kind == DeviceKind::kGpu) {
      name = "GPU" + std::to_string(gpus++);
    } else {
      name = !d.rdma.empty()      ? d.rdma.front()
             : !d.netdevs.empty() ? d.netdevs.front()
                                  : "NIC" + std::to_string(nics);
      ++nics;
    }
    out.push_back({d, name});
  }
  return out;
}

// The best RDMA NIC of `gpu` among `devices`, by (path class, other NUMA node, is a VF,
// address), with ACS on the path to it.
NicChoice BestNic(const Endpoints& eps, const TopoReport& r, const NamedDevice& gpu) {
  NicChoice best;
  best.gpu = gpu.device.address;
  auto key = [&](const NamedDevice& nic) {
    return std::make_tuple(r.matrix.at(gpu.device.address).at(nic.device.address),
                           nic.device.numa_node != gpu.device.numa_node, !nic.device.physfn.empty(),
                           nic.device.address);
  };
  const NamedDevice* pick = nullptr;
  for (const auto& d : r.devices) {
    if (d.device.kind != DeviceKind::kNic || d.device.rdma.empty()) continue;
    if (pick == nullptr || key(d) < key(*pick)) pick = &d;
  }
  if (pick != nullptr) {
    best.nic = pick->device.address;
    best.nic_name = pick->device.rdma.front();
    best.path = r.matrix.at(gpu.device.address).at(pick->device.address);
    best.acs = AcsBetween(eps, gpu.device, pick->device).state;
  }
  return best;
}

}  // namespace

const char* GpuDirectVerdict(PathType path) {
  if (path <= PathType::kPxb) return "good";
  if (path <= PathType::kNode) return "degraded";
  return "poor";
}

TopoReport BuildReport(const Endpoints& snap) {
  TopoReport r;
  r.graph = Graph::FromSnapshot(snap);
  FlattenSwitches(&r.graph);
  r.devices = NameDevices(snap);
  r.virtual_rdma = snap.virtual_rdma;
  for (const auto& a : r.devices) {
    for (const auto& b : r.devices) {
      r.matrix[a.device.address][b.device.address] =
          PathBetween(r.graph, a.device.address, b.device.address);
    }
  }
  std::vector<std::string> hcas;
  for (const auto& d : r.devices) {
    if (d.device.kind != DeviceKind::kGpu) continue;
    NicChoice c = BestNic(snap, r, d);
    if (!c.nic.empty() && std::find(hcas.begin(), hcas.end(), c.nic_name) == hcas.end()) {
      hcas.push_back(c.nic_name);
    }
    r.best_nics.push_back(std::move(c));
  }
  if (!hcas.empty()) r.nccl_ib_hca = "=" + Join(hcas);
  r.acs_paths = AcsPaths(snap);
  return r;
}

}  // namespace hcashare::topo
