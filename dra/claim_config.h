// The pod-side network settings a ResourceClaim gives its devices of our driver: the opaque
// configuration in status.allocation.devices.config (copied there by the scheduler from the
// DeviceClass, "FromClass", and from the claim, "FromClaim"). Parameters of our driver:
//
//   {"apiVersion": "rdma.hcashare.io/v1alpha1",   // optional; when given, exactly this
//    "kind": "PodInterface",                       // optional; when given, exactly this
//    "interface": {"name": "rdma0",                // the netdev's name in the pod
//                  "mtu": 9000,                    // its MTU there
//                  "addresses": ["10.0.0.5/24"]}}  // its addresses there (CIDR, <= 16)
//
// An entry applies to the requests it names (a parent name covers its subrequests), or to
// every request when it names none; entries apply in order, a later one's keys replacing an
// earlier one's. Written by whoever may create the claim or the class (a tenant, for the
// claim): every value is checked, and a problem fails Prepare, naming its JSON path.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/status.h"

namespace hcashare::dra {

// The parameters' apiVersion and kind, when they name one.
inline constexpr char kPodInterfaceApiVersion[] = "rdma.hcashare.io/v1alpha1";
inline constexpr char kPodInterfaceKind[] = "PodInterface";
// The most config entries of a claim read.
inline constexpr size_t kMaxClaimConfigs = 32;

// One device's settings in the pod; unset members take the CNI step's defaults.
struct PodInterfaceConfig {
  std::optional<std::string> name;
  std::optional<int> mtu;
  std::optional<std::vector<std::string>> addresses;  // CIDR
};

// The most addresses one interface is given (the API server's limit for networkData.ips).
inline constexpr size_t kMaxPodInterfaceAddresses = 16;

// One allocation result of ours, as the config is matched against it.
struct ConfigTarget {
  std::string request;  // "nic" or "nic/fast"
  std::string device;
};

// The settings of each of `targets` (same order) from `config` (status.allocation.devices
// .config, absent: null), entries of other drivers skipped. InvalidArgument naming the JSON
// path of every problem: a value of the wrong type or range, an unknown key, an interface
// name that is not a Linux interface name, an address that is not CIDR, or a name or
// addresses that would apply to more than one device.
Result<std::vector<PodInterfaceConfig>> ResolvePodInterfaces(
    const nlohmann::json& config, const std::string& driver,
    const std::vector<ConfigTarget>& targets);

// Empty when `name` can name a netdev in a pod (config::IfNameProblem, and not "lo" or
// "eth0", the pod's own); else why not.
std::string CheckPodInterfaceName(const std::string& name);

}  // namespace hcashare::dra
