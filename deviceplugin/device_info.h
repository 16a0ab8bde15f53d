// Multus device-info files for exclusive devices (the format the SR-IOV device plugin
// writes and Multus copies into the network-status annotation).
#pragma once

#include <string>
#include <vector>

#include "common/status.h"
#include "config/config.h"
#include "node/discovery.h"

namespace hcashare::dp {

// Default directory, a host path used as given (not under --host-root).
inline constexpr const char* kDefaultDeviceInfoDir = "/var/run/k8s.cni.cncf.io/devinfo/dp";

// "<prefix>-<name>-<id>-device.json" ('/' in any part becomes '-').
std::string DeviceInfoFileName(const config::ResourceConfig& rc, const std::string& id);

// {"type":"pci","version":"1.1.0","pci":{"pci-address":…,"rdma-device":…[,"pf-pci-address":…]}}
std::string DeviceInfoJson(const node::PciFunction& fn);

// Writes the file of each of `fns` (SFs excepted: the spec has no auxiliary type) into
// `dir` (created if missing), each atomically (temporary file, then rename). Returns the
// first error; files already written stay.
Status WriteDeviceInfoFiles(const std::string& dir, const config::ResourceConfig& rc,
                            const std::vector<const node::PciFunction*>& fns);

}  // namespace hcashare::dp
