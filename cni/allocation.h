// Whether a pod may have a device: the kubelet must have allocated it to the pod, and it
// must not be the node's own uplink. A network configuration is a NetworkAttachmentDefinition
// that a tenant may write, and its `deviceID` (or the one Multus injects from it) could name
// any VF of the node: another pod's, or one the host uses.
#pragma once

#include <string>

#include "cni/attach.h"
#include "cni/vf.h"

namespace hcashare::cni {

// OK when the kubelet allocated `device` to the pod of `env` (any resource; pod-resources,
// else the checkpoint, through ctx.pod_devices), or when the node turned the check off
// (conf.node.check_allocation). Errors: not allocated -> code 7 naming the pod, the device
// and what the pod holds; no pod in CNI_ARGS -> code 4; the lookup failed -> its error
// (code 11 when the kubelet cannot be asked).
Status CheckAllocatedToPod(const CniEnv& env, const NetConf& conf, const AttachContext& ctx,
                           const std::string& device);

// OK when the kubelet allocated the pod at least one device of `resource` (a shared pool's
// IDs), or when the node turned the check off; errors as CheckAllocatedToPod's.
Status CheckResourceAllocatedToPod(const CniEnv& env, const NetConf& conf, const AttachContext& ctx,
                                   const std::string& resource);

// An error (code 7) when `vf` is the node's uplink (VfDevice::host_uplink); always, as in
// the device plugin.
Status RejectHostUplink(const VfDevice& vf);

}  // namespace hcashare::cni
