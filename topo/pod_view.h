// `hcashare topo --pod NAMESPACE/NAME`: for a running pod, its GPUs, its RDMA devices and
// the PCIe path class between each pair. A view of the host snapshot and of the pod's
// kubelet device IDs (pod-resources); pure functions, thread-compatible.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "hostfacts/facts.h"
#include "topo/gpu_match.h"

namespace hcashare::topo {

// One device of the pod that is a PCI function or auxiliary device of the node.
struct PodDevice {
  std::string resource;
  std::string id;                         // the kubelet device ID
  std::string pci;                        // its PCI function (an SF's parent)
  std::vector<std::string> rdma_devices;  // sorted
  std::vector<std::string> netdevs;       // in the host namespace; sorted
};

// The pod's GPUs and devices, and the path class of every (GPU, device) pair.
struct PodTopo {
  std::string pod;     // "namespace/name"
  std::string source;  // where the device IDs came from ("v1 Get", ...)
  std::vector<PodGpu> gpus;
  std::vector<PodDevice> devices;  // by resource, then ID
  // Resources whose IDs name no device of the node (a shared pool's counters, MIG GPUs):
  // resource -> IDs.
  std::map<std::string, std::vector<std::string>> other;
  // paths[i][j]: between gpus[i] and devices[j]; "" when unknown.
  std::vector<std::vector<std::string>> paths;
};

// Builds the view. `by_resource` is the pod's device IDs by resource; the IDs of
// `gpu_resources` are GPU UUIDs (ResolvePodGpus).
PodTopo BuildPodTopo(const hostfacts::HostSnapshot& snap,
                     const std::map<std::string, std::vector<std::string>>& by_resource,
                     const std::vector<std::string>& gpu_resources);

// The table: the GPUs, the devices, and the matrix of path classes.
std::string FormatPodTopo(const PodTopo& view);
// {"pod", "source", "gpus": [{id, uuid, pci}], "devices": [{resource, id, pci, rdma,
// netdevs}], "other": {resource: [ids]}, "paths": [{gpu, device, path}]}.
nlohmann::ordered_json PodTopoToJson(const PodTopo& view);

}  // namespace hcashare::topo
