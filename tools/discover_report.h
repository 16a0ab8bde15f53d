// DiscoverReport: what the device plugin would do on this host with a given config — per
// resource, the selected functions, the advertised devices, the exact Allocate answers and
// why every other device was left out. Built with deviceplugin's own discovery, pool,
// selector and allocation code; only the explanations are added here.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/config.h"
#include "deviceplugin/api/deviceplugin_v1beta1.pb.h"
#include "dra/devices.h"
#include "node/discovery.h"
#include "node/pool.h"
#include "tools/exclusion.h"

namespace hcashare::cli {

// A device that is not in a resource's pool, and the first rule that kept it out.
struct ExcludedDevice {
  std::string address;
  std::string label;  // RDMA and netdev names, e.g. "mlx5_2 ib3"
  Rejection why;
};

// One Allocate call made against the pool (one container asking for `ids`).
struct AllocationView {
  std::vector<std::string> ids;
  Status status;                       // the refusal, if any
  v1beta1::AllocateResponse response;  // when status is OK
};

// Everything about one resource. A DRA resource ("api": "dra") has no device-plugin devices
// or Allocate answers: its pool holds the functions it offers as `dra_devices`.
struct ResourceReport {
  config::ResourceConfig rc;
  node::PoolState pool;
  std::vector<dra::DraDevice> dra_devices;  // DRA resources: the devices, by name
  std::vector<v1beta1::Device> devices;     // the ListAndWatch list
  std::vector<AllocationView> allocations;
  std::vector<ExcludedDevice> excluded;  // requirements first, then by address
};

struct DiscoverReport {
  std::string netns_mode;  // "shared", "exclusive", or "unknown (<error>)"
  node::Inventory inventory;
  std::vector<ResourceReport> resources;
  std::string dra_driver;  // the config's draDriver
  dra::DraInventory dra;   // every DRA resource's devices (dra::SelectDraDevices)
};

// Discovers from `snap`, builds each resource's pool as the daemon does (a function that a
// DRA resource offers is refused by device-plugin pools, rule "dra"; shared pools are
// blocked in RDMA netns mode exclusive; an unreadable mode counts as shared, as in the
// daemon), and allocates the first ID of every distinct NUMA topology of its device list,
// checking device nodes against the snapshot. With `use_cdi` the answers are rewritten for
// CDI as `--use-cdi` does. Reads nothing but `snap`.
DiscoverReport BuildDiscoverReport(const config::PluginConfig& config,
                                   const hostfacts::HostSnapshot& snap, bool use_cdi);

// Human-readable report.
std::string FormatDiscoverText(const DiscoverReport& report);

// JSON: {"rdma_netns_mode", "resources": [{"resource", "mode", "api", "blocked", "selected":
// [{"id", "bus" ("pci", "auxiliary" or "virtual"), "pci" (null for virtual), "rdma", "netdevs",
// "numa", "healthy"}],
// "devices": [{"id", "health", "numa"}], "allocations": [{"ids", "response" | "error"}],
// "excluded": [{"pci", "name", "rule", "detail"}]} and, for DRA resources, "dra_driver" and
// "dra_devices": [{"name", "id", "pcieRoot", "numa"}]]}.
nlohmann::ordered_json DiscoverJson(const DiscoverReport& report);

}  // namespace hcashare::cli
