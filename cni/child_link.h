// Shared-pool attachment: a child link of a pool HCA's netdev — a macvlan (`"mode":
// "macvlan"`, Ethernet/RoCE) or an IPoIB child (`"mode": "ipoib"`, InfiniBand) — for pods
// of a shared resource of hcashare-device-plugin, where there is no VF to hand over.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "cni/attach.h"
#include "topo/gpu_match.h"

namespace hcashare::cni {

// ADD in macvlan/ipoib mode: creates the child link of the parent netdev directly in the pod's
// namespace under CNI_IFNAME, sets the MAC and MTU asked for, brings it up, then IPAM. The
// parent is `master`, or a healthy HCA of the `resourceName` pool that the device plugin
// describes (interop/pool_info.h): the one nearest the pod's GPUs by PCIe path class when
// the pod has GPUs (cni/gpu_affinity.h), then on the NUMA node of its granted IDs.
// The parent netdev for a child link in pool `resource`, and the GPU it was chosen for.
struct PoolChoice {
  std::string netdev;
  std::optional<topo::GpuMatch> gpu;
};
// Picks the parent in pool `resource` (see AddChildLink).
Result<PoolChoice> ChoosePoolNetdev(const NetConf& conf, const AttachContext& ctx,
                                    const std::string& resource);

Result<nlohmann::json> AddChildLink(const CniEnv& env, const NetConf& conf,
                                    const AttachContext& ctx);

}  // namespace hcashare::cni
