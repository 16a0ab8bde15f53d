// The CNI verbs for one attachment: ADD (device lookup, PF-side VF settings, moving the
// netdev and the RDMA device into the pod, IPAM, the Multus device-info file), DEL (the
// reverse, best effort and idempotent) and CHECK (the attachment is as ADD left it).
// ADD is in attach.cc, DEL in detach.cc, CHECK in check.cc.
//
// ADD saves the attachment's state before its first change, then does its steps, each
// with an undo action; any failure undoes every step done so far, in reverse. DEL
// restores what the state records; a failure keeps the state so a retry can complete.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cni/dra_devices.h"
#include "cni/env.h"
#include "cni/netconf.h"
#include "cni/state.h"
#include "cni/vf_driver.h"
#include "common/host.h"
#include "common/status.h"
#include "nl/netdev.h"
#include "nl/rdma_netlink.h"
#include "nl/sriov.h"

namespace hcashare::cni {

// Resource name -> device IDs assigned to the pod, and where that came from.
struct PodDeviceMap {
  std::map<std::string, std::vector<std::string>> by_resource;
  std::string source;
};
// Looks up the pod's devices (the kubelet pod-resources API in the binary).
using PodDeviceLookup = std::function<Result<PodDeviceMap>()>;

// What the verbs act through. Everything must outlive the call.
struct AttachContext {
  const Host& host;   // sysfs, under hostRoot
  NetdevOps& netdev;  // netdev changes (in whichever namespace the thread is in)
  VfOps& vf;          // PF-side VF settings
  RdmaSystem& rdma;   // RDMA netns mode and RDMA device moves
  const StateStore& store;
  PodDeviceLookup pod_devices;  // used when the config has no deviceID
  // The pod's devices in the kubelet's checkpoint alone: the allocation check's first,
  // cheap look (no gRPC connection per ADD); unset, or a device it does not show, sends the
  // check to pod_devices.
  PodDeviceLookup checkpoint_devices = nullptr;
  std::chrono::milliseconds lock_wait{5000};
  VfDriver* vf_driver = nullptr;  // rebinds a VF to apply its GUIDs; none: "guid" fails
  // The pod's prepared devices of this node's DRA driver (pod-resources and the driver's
  // checkpoint), for "mode": "dra". Unset: that mode fails.
  std::function<Result<std::vector<PodClaimDevice>>()> pod_dra_devices = nullptr;
  // Non-empty while the DRA step attaches a device: its invocation's CNI_IFNAME, recorded
  // in the attachment's owner (DeviceOwner::chained_by).
  std::string chained_by{};
};

// ADD: returns the result JSON in the config's cniVersion.
Result<nlohmann::json> CmdAdd(const CniEnv& env, const NetConf& conf, const AttachContext& ctx);
// DEL: OK on success.
Status CmdDel(const CniEnv& env, const NetConf& conf, const AttachContext& ctx);
// DEL of the recorded attachment `state` on behalf of `env` (GC, the DRA step, a take-over):
// its container, interface and namespace from the record, its own configuration read back
// from the record (`conf`, the caller's, when that cannot be read).
Status CmdDelRecorded(const CniEnv& env, const NetConf& conf, const AttachContext& ctx,
                      const AttachmentState& state);
// DEL when the configuration no longer validates (`invalid`, code 7: a NAD or list edited
// after ADD, a stricter plugin after an upgrade, a changed node file): every attachment
// recorded for env's (CNI_CONTAINERID, CNI_IFNAME), the DRA step's included, is undone with
// the configuration ADD recorded for it, as sriov-cni's DEL reads its cache, so that the
// pod's teardown does not fail for good. With none recorded there is nothing to undo: OK.
Status CmdDelWithInvalidConf(const CniEnv& env, const NodeSettings& node, const Status& invalid,
                             const AttachContext& ctx);
// CHECK: the interface is in the pod with its name, MAC and MTU; prevResult's addresses
// of it are configured; the PF-side settings still match the configuration; the RDMA
// device is in the pod. Each mismatch is a precise error.
Status CmdCheck(const CniEnv& env, const NetConf& conf, const AttachContext& ctx);

// Marks the ADD of `env` as running (StateStore::MarkAddRunning) until the result dies:
// taken once ADD has checked everything and before its first state write.
Result<AddRunning> MarkRunning(const CniEnv& env, const AttachContext& ctx);

// Picks the device for this attachment among `candidates` (the pod's devices of one
// resource): the one this attachment already holds, else the first without a live owner.
// Busy (code 101) when every candidate is held by another attachment.
Result<std::string> ChooseDevice(const std::vector<std::string>& candidates, const CniEnv& env,
                                 const StateStore& store, const std::string& resource);

}  // namespace hcashare::cni
