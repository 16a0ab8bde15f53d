// Steps and helpers shared by the CNI verbs (attach.cc, detach.cc, check.cc): namespace
// switching, PF-side setting groups, moving the netdev and the RDMA device back to the
// host, and applying IPAM results.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "cni/attach.h"
#include "cni/result.h"
#include "cni/undo.h"
#include "cni/vf.h"
#include "common/netns.h"

namespace hcashare::cni {

// Runs `fn` with the calling thread inside `ns`.
Status InNetns(const Netns& ns, const std::function<Status()>& fn);

// "namespace/name" of the pod ("" outside Kubernetes).
std::string PodKey(const CniEnv& env);

// One group of PF-side settings applied (and undone) together.
struct PfGroup {
  const char* name;  // "mac", "vlan", "spoofchk", "trust", "link_state", "rate", "guid"
  VfSettings wanted;
};
// The groups the configuration asks for, in the order they are applied. `mac` and `guid`
// are the selected MAC (SelectMac) and GUID (SelectGuid), if any; a GUID sets both the
// node and the port GUID, as ib-sriov-cni does.
std::vector<PfGroup> PfGroups(const NetConf& conf, const std::optional<std::string>& mac,
                              const std::optional<std::string>& guid);
// The all-ones GUID: what a VF's GUID is restored to when it had none (all zero), as
// ib-sriov-cni does (mlx5 takes it as "unset").
inline constexpr const char* kUnsetGuid = "ff:ff:ff:ff:ff:ff:ff:ff";
// The fields of `current` that `wanted` sets (what must be restored later).
VfSettings OriginalOf(const VfSettings& current, const VfSettings& wanted);
// Restores the PF-side settings recorded in `state` (all groups, one request).
Status RestorePf(const AttachmentState& state, VfOps& ops);

// An error (code 7, nothing changed) when a GUID cannot be given to `vf`: a scalable
// function, or a PF that is not InfiniBand (the kernel refuses with EOPNOTSUPP).
Status CheckGuidApplies(const VfDevice& vf, const AttachContext& ctx);
// The netdev names of `device` (an auxiliary device when `is_sf`), waiting up to `wait` for
// one to appear; empty when none did.
std::vector<std::string> WaitForDeviceNetdevs(const Host& host, const std::string& device,
                                              bool is_sf, std::chrono::milliseconds wait);

// Adds the IPAM addresses and routes to `ifname` (in the current namespace); a route
// without gw goes via the gateway of an address of the same family.
Status ApplyIpam(NetdevOps& netdev, const std::string& ifname, const CniResult& ipam);

// After the pod's namespace is gone: the kernel returns a physical netdev (a VF) to the
// host namespace under its pod name, down, asynchronously. Waits up to `wait` for the
// device's sysfs net/ entry, then gives the netdev back its host name, MAC and MTU.
// OK when there is nothing to restore (a veth-backed test VF died with the namespace).
Status RestoreReturnedNetdev(const AttachmentState& state, const Host& host, NetdevOps& netdev,
                             std::chrono::milliseconds wait);

// Moves the attachment's interface (found by identity, cni/link_identity.h, never by
// name) from the pod back to the host in one request, with its host name, MAC, MTU and
// admin state. NotFound when it is not in the pod.
Status ReturnToHost(const AttachmentState& state, const Netns& pod, const Netns& host,
                    NetdevOps& netdev);

// True when the attachment's netdev is in the calling thread's (host) namespace: its
// parent device or bus address is the attachment's, or it has its host name and host MAC.
Result<bool> BackOnHost(const AttachmentState& state, NetdevOps& netdev);

// An error (code 4, naming the interface that holds it) when CNI_IFNAME is already taken
// in the pod's namespace: ADD then changes nothing.
Status CheckIfnameFree(const CniEnv& env, const Netns& pod, NetdevOps& netdev);

// The last steps of every ADD: IPAM (applied to CNI_IFNAME inside `pod` when
// `apply_ipam`), prevResult chaining, the result in the configuration's version, the final
// state save, and committing `undo`. `result` holds our interface.
Result<nlohmann::json> FinishAdd(const CniEnv& env, const NetConf& conf, const AttachContext& ctx,
                                 const Netns& pod, bool apply_ipam, AttachmentState* state,
                                 CniResult result, UndoStack* undo);

// Removes the file at `path`; absent is fine.
Status RemoveIfExists(const std::string& path);

// Moves the attachment's RDMA device from the pod back to the host. OK when it is not in
// the pod (already back).
Status ReturnRdmaToHost(const AttachmentState& state, const Netns& pod, const Netns& host,
                        RdmaSystem& rdma);

// Which RDMA device to move into the pod ("" for none), per the `rdma` setting, the
// device's RDMA devices and the RDMA netns mode. Errors: `move` without an exclusive
// mode or without an RDMA device; more than one RDMA device.
Result<std::string> PlanRdmaMove(RdmaMode mode, const VfDevice& vf, RdmaSystem& rdma);

}  // namespace hcashare::cni
