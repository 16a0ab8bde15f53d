// The names of the environment variables the device plugin gives a container (Allocate
// responses, CDI specs) and `hcashare doctor` reads back. One container may hold several
// resources; the kubelet merges their variables by name and keeps one value when two
// resources set the same name ("Environment variable has conflicting setting"), so every
// resource's variables carry a suffix of their own (issue 25).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace hcashare {

// The RDMA device names a resource grants: "HCASHARE_RDMA_DEVICES_<suffix>". Without a
// suffix it is the generic variable of earlier releases, set only by a resource with
// `setRdmaDevicesEnv` (docs/device-plugin.md, "What a pod gets").
inline constexpr const char* kRdmaDevicesEnv = "HCASHARE_RDMA_DEVICES";

// NCCL's HCA filter, set for resources with `setNcclIbHca` (and DRA claims of them).
inline constexpr const char* kNcclIbHcaEnv = "NCCL_IB_HCA";

// One device's part of an NCCL_IB_HCA value.
struct NcclHca {
  int numa_node = -1;                     // -1 when unknown
  std::vector<std::string> rdma_devices;  // "mlx5_0", ...
};

// NCCL_IB_HCA's exact-match form for `devices`: "=" and their RDMA device names, each once,
// by NUMA node (unknown last) and in the given order within a node. The '=' makes it exact:
// without it "mlx5_1" also selects mlx5_10..mlx5_19.
std::string NcclIbHcaExact(std::vector<NcclHca> devices);

// The suffix of a resource's variables: `full_name` ("rdma/hca_shared_devices_a")
// upper-cased, every byte that is not an ASCII letter or digit turned into '_'
// ("RDMA_HCA_SHARED_DEVICES_A"). Two resources whose suffixes are equal cannot be configured
// together (config validation).
std::string ResourceEnvSuffix(std::string_view full_name);

// "HCASHARE_RDMA_DEVICES_" + ResourceEnvSuffix(full_name).
std::string RdmaDevicesEnvName(std::string_view full_name);

// True for kRdmaDevicesEnv and every "HCASHARE_RDMA_DEVICES_<suffix>".
bool IsRdmaDevicesEnvName(std::string_view name);

}  // namespace hcashare
