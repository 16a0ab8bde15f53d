// Reader for the kubelet's device-manager checkpoint
// (/var/lib/kubelet/device-plugins/kubelet_internal_checkpoint, in the device-plugin directory,
// which does not follow the kubelet's --root-dir), the last-resort source of a
// pod's devices when the pod-resources socket is absent. The format is internal to the
// kubelet and unsupported upstream, so the reader is lenient: unknown keys are ignored and
// the checksum is not verified.
//
//   {"Data": {"PodDeviceEntries": [{"PodUID": "...", "ContainerName": "...",
//             "ResourceName": "vendor/res", "DeviceIDs": {"0": ["a"], "-1": ["b"]},
//             "AllocResp": "<base64>"}], "RegisteredDevices": {...}}, "Checksum": N}
//
// DeviceIDs is an object keyed by NUMA node since Kubernetes 1.20 ("-1": no topology) and a
// flat array of IDs before. Both are accepted.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "common/status.h"

namespace hcashare::kubelet {

// Resource name -> device IDs.
using DevicesByResource = std::map<std::string, std::vector<std::string>>;

// The devices of the pod with UID `pod_uid` in the checkpoint text `json_text`, grouped by
// resource across all its containers. IDs keep their first-seen order (entries in file
// order; within an entry the NUMA buckets in numeric key order) and are de-duplicated (a
// device on several NUMA nodes is listed in each bucket). A pod without entries gives an
// empty map. Errors: empty `pod_uid` -> InvalidArgument naming K8S_POD_UID; text that is
// not JSON, or whose Data / PodDeviceEntries / the pod's entries have the wrong shape ->
// InvalidArgument.
Result<DevicesByResource> ParseCheckpointDevices(const std::string& json_text,
                                                 const std::string& pod_uid);

// The largest checkpoint read. The kubelet writes every registered device ID of the node
// and every pod's allocation into it: 400,000 shared IDs of hcashare alone take ~5 MB.
inline constexpr size_t kMaxCheckpointBytes = 16 << 20;

// ParseCheckpointDevices on the file at `path`, read as common/safe_file.h reads (a
// regular file, not a symlink, at most kMaxCheckpointBytes). A file that cannot be read ->
// the reader's Status (NotFound when absent); a file that does not parse -> IoError. Both
// messages name `path`.
Result<DevicesByResource> ReadCheckpointDevices(const std::string& path,
                                                const std::string& pod_uid);

}  // namespace hcashare::kubelet
