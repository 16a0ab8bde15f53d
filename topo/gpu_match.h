// GPU-aware device choice: which of a pod's RDMA devices is nearest each of its GPUs.
//
// A view of the host snapshot for the CNI and `hcashare topo --pod`: the kubelet device IDs
// of a pod's GPU resources (the NVIDIA device plugin advertises GPU UUIDs) are mapped to PCI
// addresses through /proc/driver/nvidia/gpus/*/information (HostSnapshot::nvidia_gpus), and
// candidate devices (HCAs, VFs) are ranked by their path class to those GPUs on the
// flattened PCIe tree (topo/paths.h). Pure functions over the snapshot; thread-compatible.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "hostfacts/facts.h"
#include "topo/graph.h"
#include "topo/paths.h"

namespace hcashare::topo {

// One GPU of a pod.
struct PodGpu {
  std::string id;       // the kubelet device ID ("GPU-8c3d…", "GPU-8c3d…::1" for a replica)
  std::string uuid;     // the ID without a replica suffix
  std::string address;  // its PCI address
};

// The GPUs among `ids` (device IDs of GPU resources), by PCI address (the order of
// CUDA_DEVICE_ORDER=PCI_BUS_ID), one per GPU; the IDs that name no GPU of `snap` (a MIG
// device, an unknown UUID, a node without the NVIDIA driver's procfs) in `unresolved`.
struct PodGpus {
  std::vector<PodGpu> gpus;
  std::vector<std::string> unresolved;
};
PodGpus ResolvePodGpus(const hostfacts::HostSnapshot& snap, const std::vector<std::string>& ids);

// A candidate device matched to a GPU.
struct GpuMatch {
  std::string device;  // the candidate's PCI address
  PodGpu gpu;          // the GPU it is nearest to
  PathType path = PathType::kSys;
};

// The flattened PCIe tree of a snapshot, for path classes between its functions.
class PciDistances {
 public:
  // Builds the tree from a full read of the node (hostfacts::ReadOptions::all_functions).
  // NotFound when the snapshot could not list the PCI functions.
  static Result<PciDistances> Of(const hostfacts::HostSnapshot& snap);
  // The path class between PCI functions `a` and `b`; nullopt when either is not a GPU or
  // NIC of the tree (unknown class or sysfs path).
  std::optional<PathType> Path(const std::string& a, const std::string& b) const;

 private:
  Graph graph_;
};

// The candidate nearest to any of `gpus`: the closest path class, then the lower candidate
// index (the caller's preference order); nullopt when no candidate has a known path to a
// GPU.
std::optional<GpuMatch> NearestToGpus(const PciDistances& distances,
                                      const std::vector<PodGpu>& gpus,
                                      const std::vector<std::string>& candidates);

// One candidate per GPU, in GPU order: for each GPU the nearest candidate not given to an
// earlier one (ties: the lower candidate index). Shorter than `gpus` when the candidates
// run out or have no known path.
std::vector<GpuMatch> AssignRails(const PciDistances& distances, const std::vector<PodGpu>& gpus,
                                  const std::vector<std::string>& candidates);

}  // namespace hcashare::topo
