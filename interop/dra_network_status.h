// The network data of a DRA device that hcashare-cni attached in a pod, for the DRA driver to
// write into its ResourceClaim's status (status.devices[].networkData, as DraNet writes it):
// one JSON file per (claim, device) under `<kubelet root>/plugins/<driver>/network/`, written
// atomically by the CNI after the attachment and removed by its DEL; the driver reads the
// directory. Root writes and reads them (the files are 0600 in a 0700 directory, and the
// reader refuses a file not root's); each is bounded.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/status.h"

namespace hcashare::dra {

// The largest network status file read.
inline constexpr size_t kMaxNetworkStatusBytes = 16 << 10;
// The most addresses one device reports (the API server's limit for networkData.ips).
inline constexpr size_t kMaxNetworkIps = 16;

// One attached device's network data, and the claim it belongs to.
struct DeviceNetworkStatus {
  std::string claim_uid;
  std::string claim_namespace;
  std::string claim_name;
  std::string pool;
  std::string device;
  std::optional<std::string> share_id;
  std::string interface_name;    // in the pod
  std::string hardware_address;  // the MAC (or IPoIB hardware address) in the pod
  std::vector<std::string> ips;  // CIDR ("10.0.0.5/24"), at most kMaxNetworkIps

  bool operator==(const DeviceNetworkStatus& o) const;
};

// "<kubelet root>/plugins/<driver>/network".
std::string NetworkStatusDir(const std::string& kubelet_root, const std::string& driver);
// "<dir>/<claim uid>_<device>.json".
std::string NetworkStatusPath(const std::string& dir, const std::string& claim_uid,
                              const std::string& device);

// Writes `status` to `path` atomically (0600; its directory is created 0700). InvalidArgument
// when a name would not stay within the directory or there are more than kMaxNetworkIps.
Status WriteNetworkStatus(const std::string& path, const DeviceNetworkStatus& status);
// Reads one file; errors name it (see ReadFileSafely; root-owned, bounded), InvalidArgument
// when its content is not a network status.
Result<DeviceNetworkStatus> ReadNetworkStatus(const std::string& path);

}  // namespace hcashare::dra
