// What the kubelet is told about a pool (ListAndWatch) and what a container gets
// (Allocate, GetPreferredAllocation), for shared and exclusive pools. Pure functions:
// the only host access is checking that device nodes still exist.
#pragma once

#include <string>
#include <vector>

#include "common/host.h"
#include "config/config.h"
#include "deviceplugin/api/deviceplugin_v1beta1.pb.h"
#include "node/pool.h"

namespace hcashare::dp {

// The variables naming the RDMA devices `rc` grants: its own
// HCASHARE_RDMA_DEVICES_<suffix> (common/env_names.h), and with `setRdmaDevicesEnv` also
// the generic HCASHARE_RDMA_DEVICES. Allocate and the CDI spec set the same ones.
std::vector<std::string> RdmaDevicesEnvNames(const config::ResourceConfig& rc);

// The ListAndWatch device list.
//   shared: IDs "0".."rdmaHcaMax-1", Healthy while at least one HCA the ID grants is
//     healthy, Unhealthy otherwise (capacity is kept, allocatable drops to 0). TopologyInfo lists
//     the pool's NUMA nodes, or with topologyAware the ID's own node; it is omitted when a node is
//     unknown.
//   exclusive: one device per function, ID = PCI address, Healthy when the function is (or
//     is in use inside a pod), TopologyInfo = its node.
// `excludeTopology` drops TopologyInfo. A blocked pool advertises no devices.
inline constexpr const char* kHealthy = "Healthy";
inline constexpr const char* kUnhealthy = "Unhealthy";
std::vector<v1beta1::Device> DeviceList(const config::ResourceConfig& rc,
                                        const node::PoolState& pool);
// The same list, appended to `out` (whose arena, if any, holds the devices).
void AppendDeviceList(const config::ResourceConfig& rc, const node::PoolState& pool,
                      v1beta1::ListAndWatchResponse* out);

// Builds the Allocate answer: one ContainerAllocateResponse per container request, with
// a "rw" DeviceSpec for every char device granted (rdma_cm once) and the granted RDMA
// device names in RdmaDevicesEnvNames(rc); with `setNcclIbHca` also NCCL_IB_HCA="=<the same
// devices in NUMA order>" (the '=' makes it an exact match: without it "mlx5_1" also
// selects mlx5_10..mlx5_19).
//   shared: the whole pool, or with topologyAware the HCAs of the granted IDs' NUMA nodes;
//     without HCAs whose device nodes vanished, and without the unhealthy ones while a
//     healthy one remains.
//   exclusive: exactly the granted functions, plus PCIDEVICE_<PREFIX>_<NAME> (the IDs) and
//     PCIDEVICE_<PREFIX>_<NAME>_INFO (JSON per ID) as the SR-IOV device plugin sets them.
// Host paths are host-absolute, never prefixed by the host root; `host` is only used to
// check that the device nodes still exist.
// InvalidArgument: no container requests, no IDs, or an ID that is not one of ours (named
// in the message). FailedPrecondition: no usable HCA, or (exclusive) a granted device node
// vanished.
Result<v1beta1::AllocateResponse> BuildAllocateResponse(const config::ResourceConfig& rc,
                                                        const node::PoolState& pool,
                                                        const v1beta1::AllocateRequest& req,
                                                        const Host& host);

// True when `id` is a canonical decimal in [0, rdma_hca_max) (a shared pool's ID).
bool IsValidDeviceId(const std::string& id, int rdma_hca_max);

// GetPreferredAllocation for one container: the must-include IDs first, then other
// available IDs packed onto as few NUMA nodes as possible (nodes already used first, then
// the smallest node that fits the rest, else the largest), each node's IDs in ascending
// order, up to `size`. IDs that are not the resource's are ignored. Deterministic.
std::vector<std::string> PreferredIds(const config::ResourceConfig& rc, const node::PoolState& pool,
                                      const std::vector<std::string>& available,
                                      const std::vector<std::string>& must_include, int size);

// The same for a shared pool without topology (every ID on one node).
std::vector<std::string> PreferredIds(const std::vector<std::string>& available,
                                      const std::vector<std::string>& must_include, int size,
                                      int rdma_hca_max);

// "PCIDEVICE_" + upper-cased "<prefix>/<name>" with '.' and '/' turned into '_'.
std::string PciDeviceEnvName(const config::ResourceConfig& rc);

}  // namespace hcashare::dp
