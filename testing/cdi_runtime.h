// What a container gets from its DRA claims, computed as the kubelet and a container runtime
// compute it, for the DRA tests: the kubelet picks, per claim the container names, the CDI
// IDs of the devices whose request names contain the container's request (all of them when
// it names none); the runtime resolves each ID against every spec file in the CDI directory
// and applies, in ID order, a spec's own containerEdits once (before its first device's) and
// each device's containerEdits, a variable set twice keeping its last value in its first
// place, a device node added twice kept once (CDI's InjectDevices with runtime-tools'
// generator). Thread-compatible.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "common/status.h"
#include "dra/api/dra_v1.pb.h"

namespace hcashare::fake {

// The CDI IDs the kubelet gives a container naming `request` of a claim prepared as
// `claim` ("" = the whole claim), in the answer's order.
std::vector<std::string> ContainerCdiIds(
    const ::k8s::io::kubelet::pkg::apis::dra::v1::NodePrepareResourceResponse& claim,
    const std::string& request = "");

// A container's edits after CDI injection.
struct CdiContainer {
  std::vector<std::string> env;           // "NAME=value", in the order the runtime keeps
  std::vector<std::string> device_nodes;  // container paths
  // The value of variable `name`, or "" when unset.
  std::string Env(const std::string& name) const;
  // Every variable by name.
  std::map<std::string, std::string> EnvMap() const;
};

// Injects `ids` ("<vendor>/<class>=<name>") from the specs (*.json) in `spec_dir` into a
// container whose spec already has `env`. NotFound naming an ID no spec defines;
// InvalidArgument for a spec that is not JSON, and FailedPrecondition for a device two specs
// define (the CDI cache refuses both).
Result<CdiContainer> InjectCdiDevices(const std::string& spec_dir,
                                      const std::vector<std::string>& ids,
                                      std::vector<std::string> env = {});

}  // namespace hcashare::fake
