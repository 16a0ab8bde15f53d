// Shared-pool attachment: a child link of a pool HCA's netdev — a macvlan (`"mode":
// "macvlan"`, Ethernet/RoCE) or an IPoIB child (`"mode": "ipoib"`, InfiniBand) — for pods
// of a shared resource of hcashare-device-plugin, where there is no VF to hand over.
#pragma once

#include <nlohmann/json.hpp>

#include "cni/attach.h"

namespace hcashare::cni {

// ADD in macvlan/ipoib mode: creates the child link of the parent netdev directly in the pod's
// namespace under CNI_IFNAME, sets the MAC and MTU asked for, brings it up, then IPAM. The
// parent is `master`, or a healthy HCA of the `resourceName` pool that the device plugin
// describes (interop/pool_info.h), preferring the NUMA node of the pod's granted IDs.
// The parent netdev for a child link in pool `resource` (see AddChildLink).
Result<std::string> ChoosePoolNetdev(const NetConf& conf, const AttachContext& ctx,
                                     const std::string& resource);

Result<nlohmann::json> AddChildLink(const CniEnv& env, const NetConf& conf,
                                    const AttachContext& ctx);

}  // namespace hcashare::cni
