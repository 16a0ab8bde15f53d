// GPU-aware device choice in hcashare-cni (issue 17): the kubelet aligns devices only by
// NUMA node, but at CNI time the pod's whole allocation is known, GPUs included. When the
// pod has GPUs, the node is read once in full and its devices are ranked by their PCIe
// path class to those GPUs (topo/gpu_match.h). A preference only: without GPUs, or when
// they cannot be placed, the choice is what it was without it, and ADD never fails for it.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cni/attach.h"
#include "cni/netconf.h"
#include "topo/gpu_match.h"

namespace hcashare::cni {

// The pod's GPUs and the PCIe distances of the node.
struct PodGpuView {
  topo::PodGpus gpus;  // never empty
  topo::PciDistances distances;
};

// The view for the pod whose devices are `granted`; std::nullopt, with nothing read, when
// `granted` holds no ID of a conf.gpu_resources resource, and (logged) when none of them
// is a GPU of this node or the node's PCI functions cannot be listed.
std::optional<PodGpuView> ReadPodGpus(const NetConf& conf, const AttachContext& ctx,
                                      const PodDeviceMap& granted);

// The interface's ordinal among a pod's Multus attachments: "net1" -> 0, "net2" -> 1;
// std::nullopt for a name without a positive trailing number.
std::optional<size_t> InterfaceOrdinal(const std::string& ifname);

// What the CNI result and the log say about a match: {"gpu": UUID, "gpuPci": address,
// "path": "PIX"}.
nlohmann::json DescribeGpuMatch(const topo::GpuMatch& match);

}  // namespace hcashare::cni
