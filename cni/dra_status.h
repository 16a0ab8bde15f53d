// The network data of a DRA device hcashare-cni attached, for its claim's status: written
// to the DRA driver's network status directory (interop/dra_network_status.h), which the
// driver applies to status.devices[].networkData (dra/claim_status.h). The file's path is
// recorded in the attachment's state before the file is written, so DEL removes it (cni/
// detach.cc). A failure is logged only: the status informs, the attachment works without it.
#pragma once

#include <nlohmann/json.hpp>

#include "cni/attach.h"
#include "cni/result.h"

namespace hcashare::cni {

// Records `cd` as attached as env.ifname, with that interface's hardware address and the
// addresses `result` gives it.
void RecordDraNetworkStatus(const CniEnv& env, const NetConf& conf, const AttachContext& ctx,
                            const PodClaimDevice& cd, const CniResult& result);

// After a network's ADD (`result`, its output): when the attachment's device is one of the
// pod's DRA devices (a Multus network given a claim's device), records it as above; nothing
// for any other device (a pod whose namespace holds no prepared claim costs one read of the
// driver's checkpoint).
void RecordDraNetworkStatusOfAttachment(const CniEnv& env, const NetConf& conf,
                                        const AttachContext& ctx, const nlohmann::json& result);

}  // namespace hcashare::cni
