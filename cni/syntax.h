// Syntax checks of the names and addresses that reach hcashare-cni from the runtime and
// the network configuration. Each Check* returns why `s` is invalid (a phrase such as
// "contains '/'"), or std::nullopt when it is valid. Nothing here touches the host.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/ip_text.h"
#include "config/names.h"

namespace hcashare::cni {

// Longest container ID or network name accepted.
inline constexpr size_t kMaxIdentifierLength = 256;
// Longest interface name (IFNAMSIZ - 1).
inline constexpr size_t kMaxIfNameLength = config::kMaxIfNameLength;

// A reason, or std::nullopt when valid.
using Problem = std::optional<std::string>;

// A container ID or network name: 1..kMaxIdentifierLength bytes of [A-Za-z0-9_.-],
// starting with a letter or digit (the rule libcni and skel apply).
Problem CheckIdentifier(std::string_view s);

// Longest path accepted (PATH_MAX - 1).
inline constexpr size_t kMaxPathLength = 4095;

// A Linux interface name: 1..15 bytes of valid UTF-8, not "." or "..", no '/', ':',
// whitespace or control characters.
Problem CheckIfName(std::string_view s);

// An absolute path of valid UTF-8, at most kMaxPathLength bytes, with no ".." component
// and no control characters.
Problem CheckAbsolutePath(std::string_view s);

// Valid UTF-8 (what every value that ends up in a JSON state file or result must be).
Problem CheckUtf8(std::string_view s);

// A Kubernetes extended resource name "prefix/name" (e.g. "rdma/hca_vfs"), by the one rule
// in config/names.h (config::ExtendedResourceNameProblem).
Problem CheckResourceName(std::string_view s);

// A delegated plugin's name (e.g. ipam.type): non-empty, not "." or "..", no '/',
// whitespace or control characters.
Problem CheckPluginName(std::string_view s);

// What a device ID names.
enum class DeviceKind {
  kPciFunction,  // a PCI address, e.g. a VF "0000:3b:00.2"
  kAuxDevice,    // an auxiliary device, e.g. a scalable function "mlx5_core.sf.4"
};

// A validated, normalised device ID.
struct DeviceName {
  DeviceKind kind = DeviceKind::kPciFunction;
  std::string value;
};

// Accepts a PCI address "DDDD:BB:DD.F" (hex; device <= 1f, function <= 7) or its short
// form "BB:DD.F", normalised to lower case with a "0000:" domain; or an auxiliary device
// name "[A-Za-z0-9_]+(.[A-Za-z0-9_]+)+.[0-9]+" (kept as is). std::nullopt otherwise.
std::optional<DeviceName> ParseDeviceName(std::string_view s);

// Reads a hardware address as Go's net.ParseMAC does, and so Multus (which checks a pod's
// requested MAC with it and passes the text on), sriov-cni and ib-sriov-cni: 6, 8 or 20
// octets, written as two hex digits each joined by ':' or by '-' (one separator throughout),
// or as groups of four hex digits joined by '.'; either case. std::nullopt otherwise.
std::optional<std::vector<uint8_t>> ParseHardwareAddress(std::string_view s);

// Accepts a unicast, non-zero MAC in any six-octet form ParseHardwareAddress reads
// ("02:00:00:00:00:01", "02-00-00-00-00-01", "0200.0000.0001") and returns it as
// "xx:xx:xx:xx:xx:xx" in lower case; `problem` (when not null) receives why it was rejected.
std::optional<std::string> ParseUnicastMac(std::string_view s, std::string* problem = nullptr);

// IP addresses and CIDRs (common/ip_text.h).
using ::hcashare::CidrFamily;
using ::hcashare::IsIpAddress;

}  // namespace hcashare::cni
