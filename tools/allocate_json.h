// An Allocate response as JSON with the proto field names, for the CLI's output. The
// daemon links the lite protobuf runtime, which has no JSON printer.
#pragma once

#include <nlohmann/json.hpp>

#include "deviceplugin/api/deviceplugin_v1beta1.pb.h"

namespace hcashare::cli {

// {"container_responses": [{"envs": {…sorted…}, "devices": [{container_path, host_path,
// permissions}]}]}; "mounts", "annotations" and "cdi_devices" are added to a container's
// object only when it has some.
nlohmann::ordered_json AllocateResponseJson(const v1beta1::AllocateResponse& resp);

}  // namespace hcashare::cli
