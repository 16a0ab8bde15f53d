// The CDI (Container Device Interface) spec format, as both kubelet front-ends write it:
// the device plugin one spec per resource (deviceplugin/cdi.h), the DRA driver one per
// prepared claim (dra/cdi_claim.h). Text only: no file is written here.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace hcashare::node {

// Default CDI spec directory (a host path used as given).
inline constexpr const char* kDefaultCdiSpecDir = "/var/run/cdi";

// The device nodes of `char_devices`: sorted, each once, /dev/infiniband/rdma_cm left out and
// appended once at the end when there is any device at all.
std::vector<std::string> CdiDeviceNodePaths(const std::vector<std::string>& char_devices);
// One CDI device `name`: a device node for each of `node_paths` (the same path in the
// container, "rw") and `env` ("NAME=value" each), in that order.
nlohmann::ordered_json CdiDeviceJson(const std::string& name,
                                     const std::vector<std::string>& node_paths,
                                     const std::vector<std::string>& env);
// The spec file's text (cdiVersion 0.5.0) of `kind` with `devices` (CdiDeviceJson each) and,
// when not empty, `spec_env` in the spec's own containerEdits (applied once for any device).
std::string CdiSpecText(const std::string& kind, const nlohmann::ordered_json& devices,
                        const std::vector<std::string>& spec_env = {});

}  // namespace hcashare::node
