// The DRA driver's pool content: each DraDevice as a v1 ResourceSlice device, with the
// standard attributes (resource.kubernetes.io/pcieRoot, pciBusID, numaNode), the driver's own
// (unqualified: rdmaDevice, netdev, linkType, ...) and the two Multus reads
// (k8s.cni.cncf.io/deviceID, resourceName); shared HCAs with allowMultipleAllocations and a
// `shares` capacity. The input of dra::SliceObjects. Pure functions; thread-safe.
#pragma once

#include <cstddef>
#include <string>

#include <nlohmann/json.hpp>

#include "config/config.h"
#include "dra/devices.h"
#include "dra/slices.h"

namespace hcashare::dra {

// How devices are rendered.
struct RenderOptions {
  // resource.kubernetes.io/numaNode as {"ints": [N]} (`draNumaNode`: "list") rather than
  // {"int": N}. The list holds the device's own node only (the snapshot has no distances).
  bool numa_list = false;
  // The driver: the domain of the taints' keys ("<driver>/unhealthy", "<driver>/gone").
  std::string driver = kDefaultDriver;
};

// The options `cfg` asks for (draNumaNode).
RenderOptions RenderOptionsOf(const config::PluginConfig& cfg);

// The longest string (and version) attribute value the API server accepts; a longer value
// (a firmware version, say) is left out.
inline constexpr size_t kMaxAttributeStringLength = 64;

// `device` in the v1 shape: {name, attributes, capacity (shared only),
// allowMultipleAllocations (shared only), taints (when it has one: key "<driver>/unhealthy"
// with NoSchedule, or "<driver>/gone" with NoExecute, timeAdded its taint_since)}.
// Attributes whose value is unknown are left out.
nlohmann::json RenderDevice(const DraDevice& device, const RenderOptions& options);

// The node's pool: driver `driver`, node and pool name `node_name`, every device of `inv`
// rendered (sorted by name, as `inv` keeps them).
PoolContent RenderPool(const DraInventory& inv, const std::string& driver,
                       const std::string& node_name, const RenderOptions& options);

}  // namespace hcashare::dra
