// The node's settings for hcashare-cni: where it finds the host, keeps its state, logs and
// reads the kubelet and the device plugin, and whether it checks a device against the
// pod's allocation. Only the node's administrator sets them.
//
// Under Multus a network configuration is a NetworkAttachmentDefinition, a namespaced
// object that a tenant may write; a path in it could point the root plugin at a tree the
// tenant controls. So these settings come from a root-owned file on the node,
// /etc/hcashare/cni.json by default, whose path only HCASHARE_CNI_CONFIG in the runtime's
// environment can change (no NAD can set it). The file is refused unless root owns it and
// its directory and nobody else can write either. Absent (at the default path) means the
// built-in defaults. A network configuration may repeat a setting with the node's value
// (older NADs do) but never set another (ParseNetConf).
//
//   {"hostRoot": "/", "stateDir": "/var/lib/cni/hcashare",
//    "kubeletRootDir": "/var/lib/kubelet", "devicePluginDir": "/var/lib/kubelet/device-plugins",
//    "poolInfoDir": "/var/run/hcashare/pools",
//    "logFile": "/var/log/hcashare-cni.log", "checkAllocation": true,
//    "draDriver": "rdma.hcashare.io", "deviceInfoDir": "/var/run/k8s.cni.cncf.io/devinfo/cni"}
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "cni/env.h"
#include "common/status.h"

namespace hcashare::cni {

inline constexpr std::string_view kDefaultKubeletRootDir = "/var/lib/kubelet";
// The kubelet's device-plugin directory (its checkpoint): fixed in the kubelet, whatever its
// --root-dir (deviceplugin/resource_server.h, kDefaultDevicePluginDir).
inline constexpr std::string_view kDefaultDevicePluginDir = "/var/lib/kubelet/device-plugins";
inline constexpr std::string_view kDefaultStateDir = "/var/lib/cni/hcashare";
inline constexpr std::string_view kDefaultHostRoot = "/";
// The node file, and the environment variable that names another.
inline constexpr std::string_view kDefaultNodeConfigPath = "/etc/hcashare/cni.json";
inline constexpr std::string_view kNodeConfigEnv = "HCASHARE_CNI_CONFIG";
// The DRA driver whose devices the CNI attaches (hcashare-device-plugin's `draDriver`).
inline constexpr std::string_view kDefaultDraDriver = "rdma.hcashare.io";
// Where Multus asks for device-info files (nadutils.GetCNIDeviceInfoPath): the only
// directory runtimeConfig.CNIDeviceInfoFile may name a file in.
inline constexpr std::string_view kDefaultDeviceInfoDir = "/var/run/k8s.cni.cncf.io/devinfo/cni";
// The node file's size limit.
inline constexpr size_t kMaxNodeConfigBytes = 64 * 1024;

// The settings of this node.
struct NodeSettings {
  std::string host_root{kDefaultHostRoot};               // "hostRoot": where /sys, /dev, /proc are
  std::string state_dir{kDefaultStateDir};               // "stateDir"
  std::string kubelet_root_dir{kDefaultKubeletRootDir};  // "kubeletRootDir": pod-resources/
  // "devicePluginDir": where the kubelet's checkpoint is; not under kubelet_root_dir.
  std::string device_plugin_dir{kDefaultDevicePluginDir};
  // "poolInfoDir": where hcashare-device-plugin describes its shared pools; by default
  // PoolInfoDirFor(kubelet_root_dir) (interop/pool_info.h).
  std::string pool_info_dir;
  std::optional<std::string> log_file;  // "logFile": records go there instead of stderr
  // "checkAllocation": a device is attached only when the kubelet allocated it to the pod
  // (pod-resources, else the checkpoint). Off only for clusters without either.
  bool check_allocation = true;
  // "draDriver": the DRA driver name; its checkpoint, <kubelet_root_dir>/plugins/<driver>/
  // checkpoint.json, maps the pod's DRA devices to PCI addresses (cni/dra_devices.h).
  std::string dra_driver{kDefaultDraDriver};
  // "deviceInfoDir": runtimeConfig.CNIDeviceInfoFile must name a file directly in it. A NAD
  // may carry its own runtimeConfig (libcni replaces it only when it injects capabilities),
  // so without this bound a tenant could have root write or remove any file of the host.
  std::string device_info_dir{kDefaultDeviceInfoDir};
  // The file these came from, "" for the built-in defaults.
  std::string source;
};

// The built-in defaults (no node file).
NodeSettings DefaultNodeSettings();

// Parses the node file's text (strict: unknown keys and wrong types are errors, each with
// its JSON path). `source` names the file in errors. InvalidArgument (CNI code 7) listing
// every problem.
Result<NodeSettings> ParseNodeSettings(std::string_view text, const std::string& source);

// Reads the node file: HCASHARE_CNI_CONFIG of `env` when set (it must then exist), else
// kDefaultNodeConfigPath (absent: DefaultNodeSettings()). Refused (code 7, naming the file
// and what is wrong) unless it is a regular file, not a symlink, at most
// kMaxNodeConfigBytes, owned by root and writable by nobody else, in a directory owned by
// root that nobody else can write.
Result<NodeSettings> LoadNodeSettings(const EnvMap& env);

}  // namespace hcashare::cni
