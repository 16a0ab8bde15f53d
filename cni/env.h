// The CNI_* environment of one invocation, read from a map (the binary passes its
// environment, ProcessEnvironment(); nothing else here reads it) and validated for its verb.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cni/verb.h"
#include "common/status.h"

namespace hcashare::cni {

// Well-known CNI_ARGS keys (Multus and the kubelet's runtime set them).
inline constexpr std::string_view kArgIgnoreUnknown = "IgnoreUnknown";
inline constexpr std::string_view kArgPodNamespace = "K8S_POD_NAMESPACE";
inline constexpr std::string_view kArgPodName = "K8S_POD_NAME";
inline constexpr std::string_view kArgPodUid = "K8S_POD_UID";
inline constexpr std::string_view kArgPodInfraContainerId = "K8S_POD_INFRA_CONTAINER_ID";
inline constexpr std::string_view kArgMac = "MAC";    // sriov-cni: a MAC for the interface
inline constexpr std::string_view kArgGuid = "guid";  // ib-sriov-cni: an InfiniBand VF's GUID

// Name -> value, as in environ.
using EnvMap = std::map<std::string, std::string>;

// This process's environment (environ) as a map.
EnvMap ProcessEnvironment();

// The non-empty entries of a colon-separated directory list such as CNI_PATH.
std::vector<std::string> SplitPathList(std::string_view list);

// A validated CNI environment. Variables the verb does not use are left empty.
struct CniEnv {
  Verb verb = Verb::kVersion;
  std::string command;                          // CNI_COMMAND
  std::string container_id;                     // CNI_CONTAINERID
  std::string netns;                            // CNI_NETNS; may be empty for DEL
  std::string ifname;                           // CNI_IFNAME
  std::string args;                             // CNI_ARGS as given
  std::string path;                             // CNI_PATH as given (colon-separated directories)
  std::map<std::string, std::string> cni_args;  // CNI_ARGS parsed

  // The non-empty directories of CNI_PATH, in order.
  std::vector<std::string> PathDirs() const { return SplitPathList(path); }
  // The CNI_ARGS value of `key`, "" when absent.
  std::string Arg(std::string_view key) const;
  // K8S_POD_NAMESPACE, K8S_POD_NAME, K8S_POD_UID, K8S_POD_INFRA_CONTAINER_ID ("" when absent).
  std::string PodNamespace() const { return Arg(kArgPodNamespace); }
  std::string PodName() const { return Arg(kArgPodName); }
  std::string PodUid() const { return Arg(kArgPodUid); }
  std::string PodInfraContainerId() const { return Arg(kArgPodInfraContainerId); }
};

// A libcni boolean (types.UnmarshallableBool): "1" or "true", "0" or "false", in any case;
// std::nullopt for anything else.
std::optional<bool> ParseArgsBool(std::string_view value);

// Parses CNI_ARGS, "KEY=VALUE;KEY=VALUE", as libcni's types.LoadArgs does into a struct
// holding the keys above (docs/cni.md#cni_args): empty -> no pairs; split on ';', each pair
// on '=', and anything but exactly two parts (an empty pair, "K", "K=V=W") -> code 4. A
// repeated key is applied in order, so the last value wins (Multus adds its own
// IgnoreUnknown and pod keys in front of the runtime's). IgnoreUnknown must be a libcni
// boolean (code 4). Keys not above (case-sensitive, as Go field names) are dropped when the
// final IgnoreUnknown is true, else refused, all named (code 4). Stricter than libcni in
// one place, to keep an attachment tied to one pod: a pod identity key (K8S_POD_NAMESPACE,
// K8S_POD_NAME, K8S_POD_UID, K8S_POD_INFRA_CONTAINER_ID) repeated with a different value
// -> code 7. Returns the known keys with their final values.
Result<std::map<std::string, std::string>> ParseCniArgs(std::string_view args);

// Reads and validates the environment. CNI_COMMAND must be a verb. Required (empty counts
// as absent): ADD and CHECK need CNI_CONTAINERID, CNI_NETNS, CNI_IFNAME and CNI_PATH; DEL
// the same but CNI_NETNS is optional; GC needs CNI_PATH; STATUS and VERSION nothing more.
// Present values are checked: CNI_CONTAINERID by CheckIdentifier, CNI_IFNAME by
// CheckIfName, CNI_NETNS by CheckAbsolutePath, each CNI_PATH directory must be absolute,
// CNI_ARGS by CheckUtf8 and ParseCniArgs. Every problem is reported in one code-4 error whose msg
// names the variables; a CNI_ARGS that is well-formed but names two pods alone is code 7.
Result<CniEnv> ParseCniEnv(const EnvMap& env);

}  // namespace hcashare::cni
