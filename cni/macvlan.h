// Shared-pool attachment: a macvlan on a pool HCA's netdev (`"mode": "macvlan"`), for pods
// of a shared resource of hcashare-device-plugin, where there is no VF to hand over.
#pragma once

#include <nlohmann/json.hpp>

#include "cni/attach.h"

namespace hcashare::cni {

// ADD in macvlan mode: creates the macvlan on `master` directly inside the pod's namespace
// under CNI_IFNAME, sets the MAC and MTU asked for, brings it up, then IPAM.
CniOr<nlohmann::json> AddMacvlan(const CniEnv& env, const NetConf& conf, const AttachContext& ctx);

}  // namespace hcashare::cni
