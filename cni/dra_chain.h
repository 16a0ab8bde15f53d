// "mode": "dra": hcashare-cni chained after the node's default network, so that a
// ResourceClaim alone gives a pod a working RDMA path. At the pod's ADD, every VF (or SF) of
// the pod's prepared claims of this node's DRA driver enters the pod exactly as a network
// attachment's VF does (CmdAdd: netdev moved, renamed and set up, RDMA device moved in
// exclusive mode, each step with its undo), named and sized as the claim's configuration
// says (dra/claim_config.h; default: the VF's host netdev name). Each becomes its own
// attachment in the state dir, owned by the invocation (DeviceOwner::chained_by), so DEL,
// CHECK, GC and `hcashare cni-gc` act on it as on any other.
//
// Devices that are not a VF with a netdev are left alone: a shared HCA (its RDMA device is
// shared in the pod through the CDI devices) and a DPDK VF. A device the pod already holds
// through a network (Multus ran first) is skipped; when Multus runs after this step, the
// network's ADD takes the device over (TakeOverFromDraStep): a pod never gets one twice.
#pragma once

#include <nlohmann/json.hpp>

#include "cni/attach.h"

namespace hcashare::cni {

// ADD: the pod's claim devices attached, prevResult (when given) with their interfaces
// appended. A failure undoes every device this invocation attached.
Result<nlohmann::json> CmdAddDraClaims(const CniEnv& env, const NetConf& conf,
                                       const AttachContext& ctx);
// DEL: every attachment the step made for (CNI_CONTAINERID, CNI_IFNAME) detached; all are
// tried, the first failure is returned (the state of each failed one is kept for a retry).
Status CmdDelDraClaims(const CniEnv& env, const NetConf& conf, const AttachContext& ctx);
// CHECK: CmdCheck of each attachment the step made for the invocation.
Status CmdCheckDraClaims(const CniEnv& env, const NetConf& conf, const AttachContext& ctx);

// True when `owner` is an attachment the DRA step made in `env`'s container under another
// interface name: a network of the pod may take its device over.
bool IsHandedOver(const DeviceOwner& owner, const CniEnv& env);
// Called by a network attachment's ADD (not the DRA step's) before it looks at `device`:
// when the DRA step of the same container holds it, that attachment is detached as DEL
// would, so that the device enters the pod once, under the network's name and settings.
Status TakeOverFromDraStep(const CniEnv& env, const NetConf& conf, const AttachContext& ctx,
                           const std::string& device);

}  // namespace hcashare::cni
