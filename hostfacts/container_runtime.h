// The node's container runtime and CDI: a DRA driver's Prepare hands the kubelet CDI device
// IDs only, so a claim's device nodes and variables reach a container only through a runtime
// that applies CDI (issue 37: on containerd 1.6 a DRA pod started Ready without
// /dev/infiniband, silently). Two sources, both facts without policy beyond the versions:
// the version the kubelet reports for the runtime (a Node's
// status.nodeInfo.containerRuntimeVersion) and containerd's config file.
#pragma once

#include <string>
#include <string_view>

namespace hcashare::hostfacts {

// Whether containers of this runtime get CDI devices.
enum class CdiSupport {
  kUnknown,      // a runtime or version this table does not know
  kNone,         // never: containerd < 1.7, CRI-O < 1.23
  kWhenEnabled,  // only with enable_cdi = true in its config: containerd 1.7
  kDefault,      // on unless turned off: containerd >= 2.0, CRI-O >= 1.23
};

// "unknown", "none", "when-enabled", "default".
const char* CdiSupportName(CdiSupport s);

// A runtime as the kubelet reports it, and what that says about CDI.
struct RuntimeCdi {
  std::string runtime;  // as given, e.g. "containerd://1.6.20" (at most 128 characters kept)
  CdiSupport support = CdiSupport::kUnknown;
  std::string why;  // one sentence a log line or a Prepare error can carry
};

// Classifies a containerRuntimeVersion: "<name>://<version>" with name containerd, cri-o
// (or docker, through cri-dockerd: unknown) and version [v]MAJOR.MINOR[.PATCH][suffix].
// Anything else is kUnknown.
RuntimeCdi ClassifyContainerRuntime(std::string_view runtime_version);

// What containerd's config.toml says about CDI.
struct ContainerdCdiConfig {
  int version = -1;        // the top-level `version` (2: containerd 1.x, 3: 2.x); -1 unset
  std::string enable_cdi;  // its CRI plugin's enable_cdi: "true", "false", "" unset
  bool imports = false;    // it imports other files (not read here)
};

// Reads the keys above from config.toml text, line by line: `version` at the top level,
// `enable_cdi` in [plugins."io.containerd.grpc.v1.cri"] (version 2) or
// [plugins.'io.containerd.cri.v1.runtime'] (version 3), `imports` at the top level. Comments
// and other tables are skipped; no other TOML is interpreted.
ContainerdCdiConfig ParseContainerdConfig(std::string_view toml);

}  // namespace hcashare::hostfacts
