// The devices the kubelet assigned to a pod, for hcashare-cni: the kubelet pod-resources
// API over its unix socket with the upstream fallback chain, or the kubelet's checkpoint
// file when the socket is absent.
//
//   socket present -> v1 Get(namespace, name)
//     Get UNIMPLEMENTED (kubelet < 1.27), or UNKNOWN "... method disabled" (gate off)
//       -> v1 List, matched by namespace and name
//     List UNIMPLEMENTED / "unknown service v1.PodResourcesLister" (kubelet < 1.20)
//       -> v1alpha1 List, matched by namespace and name
//   socket absent -> <device-plugin dir>/kubelet_internal_checkpoint, by pod UID
//
// RESOURCE_EXHAUSTED (the kubelet's 100 QPS rate limit) is retried with exponential
// back-off. A pod the kubelet does not know is not an error: the result is empty.
#pragma once

#include <chrono>
#include <map>
#include <string>
#include <vector>

#include "common/status.h"
#include "interop/kubelet_claims.h"
#include "kubelet/device_checkpoint.h"

namespace hcashare::kubelet {

// The pod of a CNI invocation, from CNI_ARGS K8S_POD_NAMESPACE, K8S_POD_NAME, K8S_POD_UID.
struct PodRef {
  std::string ns;
  std::string name;
  std::string uid;  // needed for the checkpoint fallback only
};

// What LookupPodDevices found.
struct PodDevices {
  // Resource name -> device IDs, across all the pod's containers, de-duplicated, in
  // first-seen order. Resources without IDs are absent. Empty when the pod is unknown.
  DevicesByResource by_resource;
  // Which step answered: "v1 Get", "v1 List", "v1alpha1 List" or "checkpoint".
  std::string source;
};

struct PodResourcesOptions {
  // Kubelet root directory (--root-dir). The socket is <root>/pod-resources/kubelet.sock.
  std::string kubelet_root = "/var/lib/kubelet";
  // The kubelet's device-plugin directory, which does not follow --root-dir. The checkpoint
  // is <dir>/kubelet_internal_checkpoint.
  std::string device_plugin_dir = "/var/lib/kubelet/device-plugins";
  // Deadline of each gRPC call.
  std::chrono::milliseconds timeout{10000};
  // Largest response accepted (gRPC's default is 4 MiB; List on a busy node is larger).
  int max_receive_bytes = 16 << 20;
  // Attempts per call while the kubelet answers RESOURCE_EXHAUSTED (at least 1).
  int resource_exhausted_attempts = 5;
  // First back-off between such attempts; it doubles up to 1 s, with jitter (50-100%).
  std::chrono::milliseconds backoff_initial{50};
};

// <kubelet_root>/pod-resources/kubelet.sock
std::string PodResourcesSocketPath(const std::string& kubelet_root);
// <device_plugin_dir>/kubelet_internal_checkpoint
std::string KubeletCheckpointPath(const std::string& device_plugin_dir);

// The devices assigned to `pod` (see the chain above). Each lookup dials a fresh connection.
// Errors:
//  - gRPC path: empty namespace or name -> InvalidArgument; any failed call (deadline,
//    connection refused, RESOURCE_EXHAUSTED on every attempt, v1alpha1 not served) ->
//    Unavailable naming the socket and the method (CNI code 11, "try again later").
//  - checkpoint path: empty UID -> InvalidArgument; no checkpoint either -> NotFound naming
//    both paths; unreadable -> the errno Status; unparsable -> IoError naming the file.
// Thread-safe (no shared state).
Result<PodDevices> LookupPodDevices(const PodResourcesOptions& opts, const PodRef& pod);

// Every DRA claim containers of this node hold (v1 List's dynamic_resources), each once, in
// the order the kubelet lists them; with `driver` not empty, only the devices of that driver
// (and claims with at least one). Unavailable naming the socket when the socket is absent
// or the call fails (v1 not served included): the caller cannot tell which claims are held.
// A kubelet whose gate is off lists no claims at all; callers must not take an empty answer
// for "nothing is held" without another source. Thread-safe.
Result<std::vector<dra::KubeletClaim>> ListKubeletDraClaims(const PodResourcesOptions& opts,
                                                            const std::string& driver);

}  // namespace hcashare::kubelet
