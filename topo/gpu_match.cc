#include "topo/gpu_match.h"

#include <algorithm>
#include <set>

#include "topo/endpoints.h"

namespace hcashare::topo {
namespace {

// The best (closest, then earliest) candidate for `gpu` among those not in `taken`.
std::optional<GpuMatch> BestFor(const PciDistances& distances, const PodGpu& gpu,
                                const std::vector<std::string>& candidates,
                                const std::set<std::string>& taken) {
  std::optional<GpuMatch> best;
  for (const auto& c : candidates) {
    if (taken.count(c)) continue;
    const std::optional<PathType> path = distances.Path(gpu.address, c);
    if (path && (!best || *path < best->path)) best = GpuMatch{c, gpu, *path};
  }
  return best;
}

}  // namespace

PodGpus ResolvePodGpus(const hostfacts::HostSnapshot& snap, const std::vector<std::string>& ids) {
  PodGpus out;
  std::set<std::string> seen;
  for (const auto& id : ids) {
    // Time-slicing and MPS replicas are "<uuid>::<n>": the same GPU.
    const std::string uuid = id.substr(0, id.find("::"));
    const hostfacts::NvidiaGpu* gpu = snap.FindGpuByUuid(uuid);
    if (gpu == nullptr) {
      out.unresolved.push_back(id);
      continue;
    }
    if (seen.insert(gpu->address).second) out.gpus.push_back({id, uuid, gpu->address});
  }
  std::sort(out.gpus.begin(), out.gpus.end(),
            [](const PodGpu& a, const PodGpu& b) { return a.address < b.address; });
  return out;
}

Result<PciDistances> PciDistances::Of(const hostfacts::HostSnapshot& snap) {
  ASSIGN_OR_RETURN(const Endpoints endpoints, EndpointsOf(snap));
  PciDistances d;
  d.graph_ = Graph::FromSnapshot(endpoints);
  FlattenSwitches(&d.graph_);
  return d;
}

std::optional<PathType> PciDistances::Path(const std::string& a, const std::string& b) const {
  if (graph_.Find(a) == nullptr || graph_.Find(b) == nullptr) return std::nullopt;
  return PathBetween(graph_, a, b);
}

std::optional<GpuMatch> NearestToGpus(const PciDistances& distances,
                                      const std::vector<PodGpu>& gpus,
                                      const std::vector<std::string>& candidates) {
  std::optional<GpuMatch> best;
  for (const auto& gpu : gpus) {
    std::optional<GpuMatch> m = BestFor(distances, gpu, candidates, {});
    if (!m) continue;
    const auto index = [&](const std::string& c) {
      return std::find(candidates.begin(), candidates.end(), c) - candidates.begin();
    };
    if (!best || m->path < best->path ||
        (m->path == best->path && index(m->device) < index(best->device))) {
      best = std::move(m);
    }
  }
  return best;
}

std::vector<GpuMatch> AssignRails(const PciDistances& distances, const std::vector<PodGpu>& gpus,
                                  const std::vector<std::string>& candidates) {
  std::vector<GpuMatch> rails;
  std::set<std::string> taken;
  for (const auto& gpu : gpus) {
    std::optional<GpuMatch> m = BestFor(distances, gpu, candidates, taken);
    if (!m) break;
    taken.insert(m->device);
    rails.push_back(std::move(*m));
  }
  return rails;
}

}  // namespace hcashare::topo
