// DRA devices of a pod, as hcashare-cni sees them: pod-resources v1 names them by driver,
// pool and device (kubelet/podresources_devices.h keeps them under "dra:<driver>"); the DRA
// driver's checkpoint (interop/dra_checkpoint.h) says which PCI address and resource each of ours
// is. ResolveDraDevices turns the pod's devices of our driver into the same form as the
// device plugin's, resource -> addresses, so that the device choice and the allocation
// check treat both alike. No API-server access: the kubelet and the node's files only.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "interop/dra_checkpoint.h"
#include "kubelet/device_checkpoint.h"

namespace hcashare::cni {

// A pod's devices by resource, as the kubelet's client reads them (kubelet/).
using kubelet::DevicesByResource;

// One prepared DRA device, from the driver's checkpoint.
struct DraDeviceInfo {
  std::string address;   // the PCI address (or device ID) the CNI attaches
  std::string resource;  // the config's "<prefix>/<name>", e.g. "rdma/hca_vfs"
};

// (pool, device) -> what the driver prepared; nullopt when it prepared no such device.
using DraDeviceResolver =
    std::function<std::optional<DraDeviceInfo>(const std::string& pool, const std::string& device)>;

// Replaces `granted`'s DRA entries: those of `driver` become their addresses under their
// resources (appended after any device-plugin IDs of the same resource, de-duplicated);
// other drivers' entries are dropped (not ours to attach). Returns the devices of `driver`
// the resolver did not know, as "<pool>/<device>", for the caller to report.
std::vector<std::string> ResolveDraDevices(const std::string& driver,
                                           const DraDeviceResolver& resolve,
                                           DevicesByResource* granted);

// The pod's devices of `driver` in `granted` resolved through the driver's checkpoint at
// `checkpoint_path` (interop/dra_checkpoint.h; read only when the pod holds one). Devices it does
// not know are logged and left out; an unreadable checkpoint is an error naming it.
Status ResolveDraDevicesFromCheckpoint(const std::string& driver,
                                       const std::string& checkpoint_path,
                                       DevicesByResource* granted);

// A prepared device of the pod, and its claim.
struct PodClaimDevice {
  std::string claim_uid;
  std::string claim_namespace;
  std::string claim_name;
  dra::PreparedDevice device;
};

// The prepared devices (from `checkpoint`) that pod-resources lists for a pod of namespace
// `pod_namespace` under `driver` ("<pool>/<device>" in `granted`'s DraResourceKey entry),
// each PCI address once, in the kubelet's order; only claims of that namespace are looked
// in. Devices the checkpoint does not name are logged and left out.
std::vector<PodClaimDevice> PodDraDevices(const std::string& driver,
                                          const dra::Checkpoint& checkpoint,
                                          const std::string& pod_namespace,
                                          const DevicesByResource& granted);

// Whether `checkpoint` holds any claim of namespace `ns`: without one, a pod of `ns` has no
// prepared device of the driver, and pod-resources need not be asked.
bool HasClaimsIn(const dra::Checkpoint& checkpoint, const std::string& ns);

}  // namespace hcashare::cni
