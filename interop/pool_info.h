// The pool description hcashare-device-plugin publishes for each shared resource, and
// hcashare-cni reads in macvlan mode to pick the pool HCA whose netdev it puts the pod's
// macvlan on. One JSON file per resource in a run dir:
//   {"resource": "rdma/hca_a",
//    "hcas": [{"pci": "0000:3b:00.0", "netdevs": ["ib0"], "rdmaDevices": ["mlx5_0"],
//              "numa": 0, "healthy": true}, ...],
//    "idNuma": {"0": 0, "1": 1, ...}}          (topology-aware pools only)
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "common/status.h"

namespace hcashare {

// The largest pool description a reader accepts. The largest the device plugin writes:
// kMaxRdmaHcaMax (50,000) topology IDs at ~12 bytes each plus a few hundred HCAs, under
// 1 MiB (PoolInfoTest.LargestPoolFitsTheCap).
inline constexpr size_t kMaxPoolInfoBytes = 4 << 20;

// Where the device plugin writes the files by default.
inline constexpr const char* kDefaultPoolInfoDir = "/var/run/hcashare/pools";

// The pool-description directory of the daemon that serves the kubelet at `kubelet_root`:
// kDefaultPoolInfoDir for /var/lib/kubelet, else "<kDefaultPoolInfoDir>/kubelet-<root as
// a file name>" (PathAsFileName), so that two daemons on one host never share a file. The
// device plugin and hcashare-cni both derive it when no directory is configured.
std::string PoolInfoDirFor(const std::string& kubelet_root);

// One HCA of a pool.
struct PoolInfoHca {
  std::string pci;
  std::vector<std::string> netdevs;
  std::vector<std::string> rdma_devices;
  int numa = -1;  // -1 = unknown
  bool healthy = true;
  bool operator==(const PoolInfoHca& o) const;
};

// A shared pool.
struct PoolInfo {
  std::string resource;                // "<prefix>/<name>"
  std::vector<PoolInfoHca> hcas;       // in pool order
  std::map<std::string, int> id_numa;  // device ID -> NUMA node (topology-aware pools)
  bool operator==(const PoolInfo& o) const;
};

// "rdma/hca_a" -> "rdma_hca_a.json" ('/' and '.' become '_').
std::string PoolInfoFileName(const std::string& resource);
std::string PoolInfoToJson(const PoolInfo& info);
// InvalidArgument naming what is wrong when `text` is not such a document.
Result<PoolInfo> ParsePoolInfo(const std::string& text);

}  // namespace hcashare
