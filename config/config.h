// The device-plugin configuration: the Mellanox k8s-rdma-shared-dev-plugin JSON schema
// (also accepted as YAML) plus hcashare's extra selectors, validated strictly.
//
// Parsing never throws. Every problem is reported at once, each with its JSON path.
// Shared by the daemon and the `hcashare validate` CLI.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "json/document.h"
#include "json/fields.h"

namespace hcashare::config {

// Upper bound for rdmaHcaMax. A ListAndWatch message with this many IDs (each with
// topology) stays around 1.2 MB, well under the kubelet's 4 MiB receive limit.
inline constexpr int kMaxRdmaHcaMax = 50000;
// Upper bounds for the whole config, so that the daemon stays inside its DaemonSet memory
// limit (64 MiB): every shared ID is held in memory and listed to the kubelet, and every
// resource has its own gRPC server. Measured with bench/dp_cap_bench: 400,000 IDs peak at
// 29 MiB (8 x 50,000) and 22 MiB (64 x 6,250).
inline constexpr int kMaxResources = 64;
inline constexpr int64_t kMaxTotalDeviceIds = 400000;
// The largest config accepted, in bytes: what a ConfigMap can hold (the API server refuses
// one whose data add up to more than 1 MiB). A larger file is refused unread.
inline constexpr size_t kMaxConfigBytes = size_t{1} << 20;
// Most values (keys included, YAML aliases expanded) and deepest nesting of collections in a
// config: the document reader's (json/document.h); a text past either is refused before its
// tree is built. With kMaxConfigBytes they bound the parse's memory (docs/reliability.md,
// "Config memory").
inline constexpr size_t kMaxConfigValues = jsonin::kMaxDocumentValues;
inline constexpr int kMaxConfigDepth = jsonin::kMaxDocumentDepth;
// Default periodicUpdateInterval, in seconds, when it is absent or null.
inline constexpr int kDefaultPeriodicUpdateSeconds = 60;
// Default resourcePrefix.
inline constexpr const char* kDefaultResourcePrefix = "rdma";

// The DRA driver name when the config names none (`draDriver`); dra::kDefaultDriver.
inline constexpr const char* kDefaultDraDriver = "rdma.hcashare.io";

// Which Kubernetes API offers a resource's devices (`api`).
enum class ResourceApi {
  kDevicePlugin,  // "devicePlugin" (default): a kubelet device plugin, counted extended resource
  kDra,           // "dra": named devices in ResourceSlices of the DRA driver `draDriver`
};

// "devicePlugin" or "dra": the config's `api` value for `api`.
const char* ResourceApiName(ResourceApi api);

// The form of the resource.kubernetes.io/numaNode attribute of DRA devices (`draNumaNode`).
enum class DraNumaNodeForm {
  kScalar,  // "scalar" (default): {"int": N}
  kList,    // "list": {"ints": [N]}, for clusters with the DRAListTypeAttributes gate
};

// How a resource hands out its devices.
enum class PoolMode {
  kShared,     // rdmaHcaMax counted IDs, each granting the whole pool (the Mellanox model)
  kExclusive,  // one kubelet device per selected PCI function, ID = its PCI address
};

// "shared" or "exclusive": the config's `mode` value for `mode`.
const char* PoolModeName(PoolMode mode);

// One `pfNames` entry: a PF netdev name, optionally with a VF index range
// ("ens1f0#0-3" or "ens1f0#2"). Without a range it matches the PF itself and all its VFs;
// with a range it matches only those VFs.
struct PfNameSelector {
  std::string pf;     // netdev name of the physical function
  int first_vf = -1;  // -1: no range
  int last_vf = -1;   // inclusive
  bool operator==(const PfNameSelector& o) const {
    return pf == o.pf && first_vf == o.first_vf && last_vf == o.last_vf;
  }
};

// Device selectors. Within one list values are ORed; across lists they are ANDed.
// An empty list does not filter. Values are stored normalised (see ParseConfig).
struct Selectors {
  std::vector<std::string> vendors;        // 4 lower-case hex digits, e.g. "15b3"
  std::vector<std::string> device_ids;     // 4 lower-case hex digits, e.g. "1017"
  std::vector<std::string> drivers;        // e.g. "mlx5_core"
  std::vector<std::string> if_names;       // netdev names; any netdev of a function matches
  std::vector<std::string> link_types;     // "ether" or "infiniband"
  std::vector<std::string> pci_addresses;  // "0000:3b:00.0"
  std::vector<PfNameSelector> pf_names;    // PF netdev names, optionally with VF ranges
  std::vector<std::string> rdma_devices;   // e.g. "mlx5_0"
  std::vector<int> numa_nodes;             // e.g. 0, 1
  std::optional<bool> is_vf;               // `isVF`: only VFs (true) or only non-VFs (false)

  // True when no list has a value.
  bool Empty() const;
  bool operator==(const Selectors& o) const;
};

// One entry of configList: one kubelet resource.
struct ResourceConfig {
  std::string resource_name;                     // ^[a-zA-Z0-9_]+$, alphanumeric at both ends
  std::string resource_prefix;                   // DNS subdomain; defaults to "rdma"
  PoolMode mode = PoolMode::kShared;             // `mode`: "shared" (default) or "exclusive"
  ResourceApi api = ResourceApi::kDevicePlugin;  // `api`: "devicePlugin" (default) or "dra"
  int rdma_hca_max = 0;         // shared: 1..kMaxRdmaHcaMax (required); exclusive: 0 (not allowed)
  bool topology_aware = false;  // `topologyAware` (shared only): IDs spread over NUMA nodes
  bool exclude_topology = false;  // `excludeTopology`: advertise no NUMA TopologyInfo
  std::string cdi_kind;  // `cdiKind`: the CDI kind of this resource's spec; "" = FullName()
  // Exclusive only, both default false (see docs/device-plugin.md, "Exclusive mode"):
  bool allow_pf_with_vfs = false;  // `allowPfWithVfs`: offer PFs whose VFs are enabled
  bool allow_host_uplink = false;  // `allowHostUplink`: offer the netdev of the default route
  // `setNcclIbHca`: Allocate also sets NCCL_IB_HCA to the granted RDMA devices as an exact
  // match ("=mlx5_0,mlx5_1"), in NUMA order.
  bool set_nccl_ib_hca = false;
  // `setRdmaDevicesEnv`: Allocate also sets the generic HCASHARE_RDMA_DEVICES besides the
  // resource's own HCASHARE_RDMA_DEVICES_<suffix> (common/env_names.h). Absent: true when
  // configList has one resource (no container can then hold two that both set it), else false.
  bool set_rdma_devices_env = false;
  Selectors selectors;  // `devices` is folded into selectors.if_names

  // "<prefix>/<name>", the extended resource name the kubelet sees.
  std::string FullName() const { return resource_prefix + "/" + resource_name; }
  bool operator==(const ResourceConfig& o) const;
};

// The whole file.
struct PluginConfig {
  // Seconds between periodic rescans; 0 disables them.
  int periodic_update_seconds = kDefaultPeriodicUpdateSeconds;
  std::vector<ResourceConfig> resources;
  // `draDriver`: the DRA driver name of the resources with "api": "dra" (a lower-case DNS
  // subdomain of at most 63 characters).
  std::string dra_driver = kDefaultDraDriver;
  DraNumaNodeForm dra_numa_node = DraNumaNodeForm::kScalar;  // `draNumaNode`

  // True when a resource has "api": "dra".
  bool HasDra() const;
  bool operator==(const PluginConfig& o) const;
  bool operator!=(const PluginConfig& o) const { return !(*this == o); }
};

// One validation problem (json/fields.h). `path` is a JSON path such as
// "$.configList[1].rdmaHcaMax".
using ConfigIssue = jsonin::Issue;

// Most errors (and, apart, warnings) a ParseOutcome lists; one more issue counts the rest.
inline constexpr size_t kMaxListedIssues = jsonin::kMaxDocumentIssues;

// The outcome of parsing: a config when there are no errors, plus warnings (such as the
// deprecated `devices` field) that do not stop it.
struct ParseOutcome {
  std::optional<PluginConfig> config;  // set iff errors is empty
  std::vector<ConfigIssue> errors;
  std::vector<ConfigIssue> warnings;
  bool ok() const { return errors.empty(); }
};

// Input syntax.
enum class ConfigFormat { kAuto, kJson, kYaml };

// Parses and validates `text`. kAuto picks JSON when the first non-blank character is
// '{', YAML otherwise.
ParseOutcome ParseConfig(const std::string& text, ConfigFormat format = ConfigFormat::kAuto);

// Reads `path` and parses it; the format comes from the extension (.json, .yaml, .yml),
// else from the content. A read failure is reported as one error with path "$".
ParseOutcome LoadConfigFile(const std::string& path);

// Multi-line report: "N error(s)" then one line per error and warning.
std::string FormatIssues(const ParseOutcome& outcome);

}  // namespace hcashare::config
