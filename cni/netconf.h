// The network configuration hcashare-cni reads from stdin: the sriov-cni schema (deviceID,
// vlan, mac, spoofchk, ... ipam) plus hcashare's own keys, validated strictly. Every
// problem is collected and reported in one code-7 error, each with its JSON path.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "cni/node_config.h"
#include "cni/syntax.h"
#include "cni/verb.h"
#include "common/log.h"
#include "common/status.h"
#include "interop/pool_info.h"

namespace hcashare::cni {

// VLAN IDs 0..4094 (4095 is reserved by 802.1Q; sriov-cni rejects it too). 0 = untagged.
inline constexpr int kMaxVlan = 4094;
inline constexpr int kMaxVlanQos = 7;
inline constexpr int kMinMtu = 68;
inline constexpr int kMaxMtu = 65535;
// The NVIDIA device plugin's resource; its device IDs are GPU UUIDs.
inline constexpr std::string_view kDefaultGpuResource = "nvidia.com/gpu";
// At most this many "gpuResources".
inline constexpr size_t kMaxGpuResources = 16;
// Rates are Mbps in a 32-bit netlink field.
inline constexpr int64_t kMaxTxRate = UINT32_MAX;

// Where the device ID came from, in order of precedence.
enum class DeviceIdSource {
  kDeviceId,       // "deviceID" (what Multus injects)
  kPciBusId,       // "pciBusID"
  kRuntimeConfig,  // "runtimeConfig.deviceID" (capability args, e.g. cnitool CAP_ARGS)
};

// The device the attachment uses.
struct DeviceId {
  std::string value;  // normalised: "0000:3b:00.2" or "mlx5_core.sf.4"
  DeviceKind kind = DeviceKind::kPciFunction;
  DeviceIdSource source = DeviceIdSource::kDeviceId;
};

// The VF link state set on the PF side.
enum class LinkState { kAuto, kEnable, kDisable };

// How the pod gets its interface (`mode`).
enum class AttachMode {
  kNetdev,   // an SR-IOV VF (or SF) netdev, moved into the pod (the default)
  kMacvlan,  // a macvlan on `master` (a shared pool HCA's netdev), created in the pod
  kIpoib,    // an IPoIB child of `master` (an InfiniBand pool HCA's netdev), likewise
  // Chained after the node's default network: every VF of the pod's DRA claims of this
  // node's driver enters the pod (cni/dra_chain.h); no device keys of its own.
  kDraClaims,
};

// What to do with the VF's RDMA device (`rdma`).
enum class RdmaMode {
  kAuto,  // move it into the pod when the RDMA netns mode is exclusive, else leave it
  kMove,  // move it; fail unless the mode is exclusive
  kOff,   // never touch it
};

// One entry of GC's "cni.dev/valid-attachments".
struct Attachment {
  std::string container_id;
  std::string ifname;
};

// The "args.cni" key by which ib-kubernetes says it has configured a pod's network (its
// value is then "configured").
inline constexpr char kIbKubernetesKey[] = "mellanox.infiniband.app";

// A parsed network configuration. Optional members are set only when the configuration
// sets them, so later code knows whether a PF-side setting was asked for.
struct NetConf {
  std::string cni_version;
  std::string name;
  std::string type;
  std::optional<DeviceId> device;  // ADD needs it or resource_name
  std::optional<std::string> resource_name;

  // PF-side VF settings.
  std::optional<int> vlan;                 // 0..4094
  std::optional<int> vlan_qos;             // 0..7; needs vlan (non-zero needs vlan != 0)
  std::optional<std::string> vlan_proto;   // "802.1q" or "802.1ad" (lower case); needs vlan
  std::optional<std::string> mac;          // "mac", unicast, lower case
  std::optional<std::string> runtime_mac;  // "runtimeConfig.mac", likewise
  std::optional<bool> spoofchk;            // "on" -> true, "off" -> false
  std::optional<bool> trust;
  std::optional<LinkState> link_state;
  std::optional<int64_t> min_tx_rate;  // Mbps, 0 = no limit
  std::optional<int64_t> max_tx_rate;
  // InfiniBand VFs: the node and port GUID to give the VF ("guid", ib-sriov-cni's key, and
  // Multus' "runtimeConfig.infinibandGUID"), normalised to lower case.
  std::optional<std::string> guid;
  std::optional<std::string> runtime_guid;
  // The GUID ib-kubernetes allocated, which Multus passes as "args.cni.guid" (from the pod's
  // network "cni-args"); after runtime_guid, as in ib-sriov-cni.
  std::optional<std::string> args_guid;
  // "ibKubernetesEnabled" (ib-sriov-cni's key): ADD waits (code 11, the runtime retries)
  // until ib-kubernetes has configured the pod's network, i.e. "args.cni" holds
  // "mellanox.infiniband.app": "configured" and a GUID is given.
  bool ib_kubernetes_enabled = false;
  std::string ib_kubernetes_state;  // "args.cni" kIbKubernetesKey; "" when absent

  std::optional<int> mtu;  // 68..65535
  RdmaMode rdma = RdmaMode::kAuto;
  AttachMode mode = AttachMode::kNetdev;
  std::optional<std::string> master;  // macvlan/ipoib mode: the parent netdev
  uint16_t pkey = 0xffff;             // ipoib mode: the partition key (default partition)
  // GPU-aware choice: the resources whose device IDs are GPU UUIDs ("gpuResources"), and
  // whether netN takes the VF nearest the pod's Nth GPU ("gpuRails", with resourceName).
  std::vector<std::string> gpu_resources{std::string(kDefaultGpuResource)};
  bool gpu_rails = false;
  // runtimeConfig.CNIDeviceInfoFile (Multus): where to write the device-info file.
  std::optional<std::string> device_info_file;

  // The "ipam" object; set only when it has a "type" (an "ipam": {} means no IPAM).
  std::optional<nlohmann::json> ipam;
  std::string ipam_type;  // ipam["type"], "" without IPAM

  // The node's settings (host root, state dir, kubelet root, pool-info dir, log file,
  // allocation check): never from the configuration, which may only repeat them.
  NodeSettings node = DefaultNodeSettings();
  std::optional<LogLevel> log_level;  // unset also when the value was not understood

  std::optional<nlohmann::json> prev_result;                 // kept as given; required for CHECK
  std::optional<nlohmann::json> runtime_config;              // kept as given
  std::optional<std::vector<Attachment>> valid_attachments;  // GC; required there

  nlohmann::json raw;  // the whole configuration
  // Problems that do not stop the plugin (likely typos of known keys, an unknown
  // logLevel), for the caller to log.
  std::vector<std::string> warnings;

  // True when any PF-side VF setting (vlan*, mac, runtime_mac, spoofchk, trust,
  // link_state, *_tx_rate, guid, runtime_guid) is set.
  bool RequestsPfSideSettings() const;
};

// Parses and validates the configuration for `verb` on a node with settings `node`. Not
// JSON, not an object, or nested too deeply -> code 6. cniVersion unsupported or too old
// for `verb` -> code 1 (see CheckConfigVersion). Any other problem -> one code-7 error, msg
// "invalid network configuration", details "path: problem" entries joined by "; ": among
// them a node setting (hostRoot, stateDir, kubeletRootDir, poolInfoDir, logFile) with a
// value other than the node's. Unknown keys are ignored; those close to a known key
// produce a warning.
Result<NetConf> ParseNetConf(std::string_view text, Verb verb, const NodeSettings& node);
// The same on a node with the built-in settings (DefaultNodeSettings()).
Result<NetConf> ParseNetConf(std::string_view text, Verb verb);

// Whether `file` (absolute) names a file directly in directory `dir` (lexically, as the node
// file's paths are compared): where runtimeConfig.CNIDeviceInfoFile may point, at ADD and
// when DEL removes it.
bool IsDeviceInfoFileIn(const std::string& file, const std::string& dir);

// The MAC for the interface, in sriov-cni's precedence: runtimeConfig.mac, else CNI_ARGS
// "MAC", else "mac"; std::nullopt when none is set. An invalid CNI_ARGS MAC -> code 4.
Result<std::optional<std::string>> SelectMac(const NetConf& conf,
                                             const std::map<std::string, std::string>& cni_args);

// The GUID for an InfiniBand VF, in ib-sriov-cni's precedence: runtimeConfig.infinibandGUID,
// else args.cni.guid, then hcashare's own sources: CNI_ARGS "guid", else "guid"; std::nullopt
// when none is set. An invalid CNI_ARGS GUID -> code 4.
Result<std::optional<std::string>> SelectGuid(const NetConf& conf,
                                              const std::map<std::string, std::string>& cni_args);

// With "ibKubernetesEnabled", code 11 (try again later) until ib-kubernetes has configured
// the pod's network: NetConf::ib_kubernetes_state is "configured" and runtimeConfig or
// args.cni gives a GUID (as ib-sriov-cni checks).
Status CheckIbKubernetes(const NetConf& conf);

// Checks a GUID for a VF: eight hex octets in any form ParseHardwareAddress reads
// ("02:00:00:00:00:00:00:01", "02-00-...", "0200.0000.0000.0001"), neither all zero nor all
// ones (the values of a VF without one). The form "xx:...:xx" in lower case, or std::nullopt
// with `problem` set.
std::optional<std::string> ParseVfGuid(const std::string& text, std::string* problem);

}  // namespace hcashare::cni
