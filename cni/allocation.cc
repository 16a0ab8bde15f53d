#include "cni/allocation.h"

#include "cni/error.h"
#include "cni/steps.h"
#include "cni/syntax.h"
#include "common/log.h"
#include "common/strings.h"

namespace hcashare::cni {
namespace {

// Whether the kubelet's device ID `id` names `device` (IDs are normalised as deviceID is).
bool SameDevice(const std::string& id, const std::string& device) {
  const std::optional<DeviceName> name = ParseDeviceName(id);
  return name && name->value == device;
}

// The pod's devices, for checking `what` against them; errors as CheckAllocatedToPod's.
Result<PodDeviceMap> AllocatedDevices(const CniEnv& env, const NetConf& conf,
                                      const AttachContext& ctx, const std::string& what) {
  const std::string node_file =
      conf.node.source.empty() ? std::string(kDefaultNodeConfigPath) : conf.node.source;
  if (env.PodNamespace().empty() || env.PodName().empty()) {
    return CniStatus(kErrInvalidEnv, "cannot check that " + what + " is the pod's",
                     "CNI_ARGS has no K8S_POD_NAMESPACE and K8S_POD_NAME, so the kubelet "
                     "cannot be asked which devices it allocated to the pod; outside "
                     "Kubernetes set \"checkAllocation\": false in " +
                         node_file);
  }
  if (!ctx.pod_devices) return CniStatus(kErrInternal, "no pod-resources lookup configured");
  auto granted = ctx.pod_devices();
  if (!granted.ok()) {
    return Summarize(granted.status(),
                     "cannot check that " + what + " is allocated to pod " + PodKey(env));
  }
  return granted;
}

// What the pod holds, for messages: "res: id,id; res2: id (looked up through ...)".
std::string Held(const PodDeviceMap& granted) {
  std::vector<std::string> held;
  for (const auto& [resource, ids] : granted.by_resource)
    held.push_back(resource + ": " + Join(ids));
  return (held.empty() ? std::string("no devices") : Join(held, "; ")) + " (looked up through " +
         granted.source + ")";
}

}  // namespace

Status CheckAllocatedToPod(const CniEnv& env, const NetConf& conf, const AttachContext& ctx,
                           const std::string& device) {
  if (!conf.node.check_allocation) {
    LogDebug("allocation check off (checkAllocation: false)", {{"device", device}});
    return Status::Ok();
  }
  ASSIGN_OR_RETURN(const PodDeviceMap granted,
                   AllocatedDevices(env, conf, ctx, "device " + device));
  for (const auto& [resource, ids] : granted.by_resource) {
    for (const auto& id : ids) {
      if (SameDevice(id, device)) return Status::Ok();
    }
  }
  return CniStatus(kErrInvalidNetConf,
                   "device " + device + " is not allocated to pod " + PodKey(env),
                   "the kubelet allocated it " + Held(granted) +
                       ". A network may only attach a device the kubelet gave this pod: "
                       "request the device's resource in the pod and put the "
                       "k8s.v1.cni.cncf.io/resourceName annotation on the "
                       "NetworkAttachmentDefinition, so that Multus passes the allocated "
                       "deviceID (or set resourceName in the network configuration)");
}

Status CheckResourceAllocatedToPod(const CniEnv& env, const NetConf& conf, const AttachContext& ctx,
                                   const std::string& resource) {
  if (!conf.node.check_allocation) return Status::Ok();
  ASSIGN_OR_RETURN(const PodDeviceMap granted,
                   AllocatedDevices(env, conf, ctx, "resource " + resource));
  if (auto it = granted.by_resource.find(resource);
      it != granted.by_resource.end() && !it->second.empty()) {
    return Status::Ok();
  }
  return CniStatus(kErrInvalidNetConf, "pod " + PodKey(env) + " holds no devices of " + resource,
                   "the kubelet allocated it " + Held(granted) +
                       ". A child link of a shared pool's HCA is for pods that request the "
                       "pool's resource: add it to the pod's resources (e.g. " +
                       resource + ": 1)");
}

Status RejectHostUplink(const VfDevice& vf) {
  if (!vf.host_uplink) return Status::Ok();
  return CniStatus(kErrInvalidNetConf,
                   "device " + vf.id + " is the node's uplink and is never attached",
                   "its netdev " + vf.netdev +
                       " carries the host's default route (itself or through a bond, VLAN or "
                       "macvlan); moving it into a pod would cut the node off. Nothing was "
                       "changed");
}

}  // namespace hcashare::cni
