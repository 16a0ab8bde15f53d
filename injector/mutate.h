// The injector's decision for one pod: which extended resources its Multus network
// attachments need, in which container, and the smallest RFC 6902 JSON Patch that adds them.
//
// Each attachment in k8s.v1.cni.cncf.io/networks whose NetworkAttachmentDefinition (NAD)
// carries k8s.v1.cni.cncf.io/resourceName asks for one unit of that resource, so naming one
// NAD twice asks for 2. The units go to one container per attachment:
//   1. the container the pod's annotation hcashare.io/resource-container names, else
//   2. the one the NAD's annotation of the same key names, else
//   3. the first container that already asks for the resource (so a reinvocation after
//      another webhook put a sidecar first finds the units where they are, and never asks
//      twice or moves them to the sidecar), else
//   4. the pod's first container (spec.containers[0]), as the SR-IOV injector does.
// Only spec.containers are chosen. Init containers never are, implicitly or by name: an
// init container runs before the pod's networks are in use and the kubelet hands its
// devices on to the app containers, so asking there would reserve nothing for the
// attachment; naming one is refused (ephemeral containers likewise).
//
// For each (container, resource) the container ends with request == limit == max(existing
// request, existing limit, count): a value already large enough is kept, a smaller one is
// raised, nothing is lowered. Kubernetes refuses an extended resource whose request and limit
// differ, so a pod written with limit 3 and request 1 would fail validation as written;
// raising both to 3 admits it with what the limit asked for (the device plugin hands out
// devices by that amount). Existing quantities must be whole numbers (a clear refusal
// otherwise).
//
// An attachment whose NAD says hcashare.io/resource-api: dra asks for nothing: its device
// comes from one of the pod's ResourceClaims. A pod with such a network and no
// spec.resourceClaims is admitted with a warning (the attachment would find no device).
//
// The patch is empty when the pod already has everything, so admitting a mutated pod again
// changes nothing.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/status.h"

namespace hcashare::injector {

// The NAD annotation naming the resource each attachment needs.
inline constexpr char kResourceNameAnnotation[] = "k8s.v1.cni.cncf.io/resourceName";
// The pod (or NAD) annotation naming the container that gets the resources.
inline constexpr char kResourceContainerAnnotation[] = "hcashare.io/resource-container";
// The NAD annotation saying through which API its resource is allocated: "devicePlugin" (the
// default: an extended resource the injector requests) or "dra" (a ResourceClaim the pod
// carries; Multus's DRA path matches the claim's device to the NAD by resourceName, so the
// injector requests nothing).
inline constexpr char kResourceApiAnnotation[] = "hcashare.io/resource-api";
// Every NAD annotation NadInfoFromObject reads (what a NAD cache must keep).
inline constexpr const char* kNadAnnotationsRead[] = {
    kResourceNameAnnotation, kResourceContainerAnnotation, kResourceApiAnnotation};
// Longer than any valid value of those annotations (an extended resource name is at most
// 317 bytes): a longer one is cut at read to a marker that fails validation and says so,
// so that a tenant's NAD cannot fill the cache with it.
inline constexpr size_t kMaxNadAnnotationValueBytes = 512;
// `value` itself when it is at most kMaxNadAnnotationValueBytes, else the marker
// "<cut: N bytes>".
std::string CutNadAnnotationValue(std::string value);
// The annotation Multus writes with each attachment's status (and device-info).
inline constexpr char kNetworkStatusAnnotation[] = "k8s.v1.cni.cncf.io/network-status";
// The downward-API volume (MutateOptions::downward_api_volume): its name, where it is
// mounted (the SR-IOV injector's names) and its one file, the network-status annotation.
inline constexpr char kPodNetInfoVolume[] = "podnetinfo";
inline constexpr char kPodNetInfoMountPath[] = "/etc/podnetinfo";
inline constexpr char kPodNetInfoFile[] = "network-status";

// What the injector needs of one NAD.
struct NadInfo {
  std::string resource_name;                // its resourceName annotation; "" adds nothing
  std::optional<std::string> container;     // its resource-container annotation, if any
  std::optional<std::string> resource_api;  // its resource-api annotation, if any
};

// Reads the NAD info from a NetworkAttachmentDefinition object's metadata.annotations
// (missing or non-string annotations read as absent).
NadInfo NadInfoFromObject(const nlohmann::json& nad);

// Finds NADs for Mutate. Called at most once per distinct NAD of a pod, on the caller's
// thread.
class NadLookup {
 public:
  virtual ~NadLookup() = default;
  // The NAD `ns`/`name`: NotFound when it does not exist, another code when it could not be
  // read (Mutate then refuses the pod, whatever MutateOptions say).
  virtual Result<NadInfo> Find(const std::string& ns, const std::string& name) = 0;
  // The same, answered by `deadline` (a lookup that must ask the API server waits no longer;
  // Unavailable then). The default ignores the deadline (lookups that never wait).
  virtual Result<NadInfo> FindBy(const std::string& ns, const std::string& name,
                                 std::chrono::steady_clock::time_point deadline) {
    (void)deadline;
    return Find(ns, name);
  }
  // The answer when it needs no wait (a cache hit), else nullopt (FindBy would have to ask
  // the API server). The default: every lookup is quick.
  virtual std::optional<Result<NadInfo>> FindQuick(const std::string& ns, const std::string& name) {
    return Find(ns, name);
  }
};

// How Mutate treats problems and what it adds besides resources.
struct MutateOptions {
  // false: instead of refusing the pod, a missing NAD gets a warning and no resource (the
  // networks that exist still get theirs), and a malformed networks annotation a warning and
  // no change at all.
  bool refuse_missing = true;
  // true: when the pod needs at least one network resource, add (once) the downward-API
  // volume kPodNetInfoVolume exposing the network-status annotation as file
  // kPodNetInfoFile, mounted read-only at kPodNetInfoMountPath in the chosen containers.
  bool downward_api_volume = false;
  // When the review must be answered: a lookup still needed after it refuses the pod (503,
  // "try again") rather than let the API server's call time out; lookups are given what is
  // left (NadLookup::FindBy).
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
};

// Mutate's answer.
struct MutateResult {
  bool allowed = true;
  // Why the pod was refused, naming the network (ns/name) and what to fix; for an admitted
  // pod a short note for logs ("" when resources were added).
  std::string message;
  nlohmann::json patch = nlohmann::json::array();  // RFC 6902 operations; [] for none
  std::vector<std::string> warnings;               // for the admission response
  // The HTTP code to report with a refusal: 400 for the pod's or a NAD's fault (including a
  // missing NAD), 503 when a NAD could not be read.
  int denial_code = 400;
};

// Decides for `pod` (a v1 Pod object) whose namespace is metadata.namespace, else
// `namespace_hint`. Never throws; a pod whose shape is wrong where the injector has to
// patch it (containers not an array, resources not an object, ...) is refused.
MutateResult Mutate(const nlohmann::json& pod, const std::string& namespace_hint, NadLookup& nads,
                    const MutateOptions& options = {});

// `token` escaped as one RFC 6901 JSON Pointer reference token ('~' -> "~0", '/' -> "~1").
std::string EscapeJsonPointer(const std::string& token);

}  // namespace hcashare::injector
