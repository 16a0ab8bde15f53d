#include "cni/gpu_affinity.h"

#include <algorithm>

#include "common/log.h"
#include "common/strings.h"
#include "hostfacts/reader.h"

namespace hcashare::cni {

std::optional<PodGpuView> ReadPodGpus(const NetConf& conf, const AttachContext& ctx,
                                      const PodDeviceMap& granted) {
  std::vector<std::string> ids;
  for (const auto& resource : conf.gpu_resources) {
    auto it = granted.by_resource.find(resource);
    if (it != granted.by_resource.end())
      ids.insert(ids.end(), it->second.begin(), it->second.end());
  }
  if (ids.empty()) return std::nullopt;
  const hostfacts::HostSnapshot snap = hostfacts::ReadHostSnapshot(ctx.host);
  topo::PodGpus gpus = topo::ResolvePodGpus(snap, ids);
  if (!gpus.unresolved.empty()) {
    LogInfo("some of the pod's GPU IDs name no GPU of this node (MIG devices are not placed)",
            {{"ids", Join(gpus.unresolved)}, {"nvidia_gpus", snap.nvidia_gpus.size()}});
  }
  if (gpus.gpus.empty()) return std::nullopt;
  auto distances = topo::PciDistances::Of(snap);
  if (!distances.ok()) {
    LogWarn("cannot place the pod's GPUs", {{"error", distances.status().message()}});
    return std::nullopt;
  }
  return PodGpuView{std::move(gpus), std::move(distances).value()};
}

std::optional<size_t> InterfaceOrdinal(const std::string& ifname) {
  const size_t digits = ifname.find_last_not_of("0123456789") + 1;
  // Interface names are at most 15 characters, so the number fits.
  if (digits == ifname.size() || ifname.size() - digits > 9) return std::nullopt;
  const size_t n = std::stoul(ifname.substr(digits));
  if (n == 0) return std::nullopt;
  return n - 1;
}

nlohmann::json DescribeGpuMatch(const topo::GpuMatch& match) {
  return {{"gpu", match.gpu.uuid},
          {"gpuPci", match.gpu.address},
          {"path", topo::PathTypeName(match.path)}};
}

}  // namespace hcashare::cni
