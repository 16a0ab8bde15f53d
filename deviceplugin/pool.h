// Pool: the HCAs a shared resource hands out, and what the kubelet is told about it.
//
// A pool is rebuilt from each Inventory; two pools compare equal only when everything a
// container would receive is identical (PCI addresses, RDMA names, char devices, NUMA).
#pragma once

#include <string>
#include <vector>

#include "common/host.h"
#include "config/config.h"
#include "deviceplugin/api/deviceplugin_v1beta1.pb.h"
#include "deviceplugin/discovery.h"

namespace hcashare::dp {

// Environment variable that lists the pool's RDMA device names for NCCL_IB_HCA.
inline constexpr const char* kRdmaDevicesEnv = "HCASHARE_RDMA_DEVICES";

struct PoolState {
  std::vector<PciFunction> hcas;  // selected functions, sorted by address
  // Set when the pool must advertise nothing (RDMA netns mode is exclusive).
  std::string blocked_reason;

  // True when at least one HCA is present and the pool is not blocked.
  bool Usable() const { return blocked_reason.empty() && !hcas.empty(); }
  // Every char device of every HCA, sorted and de-duplicated, then rdma_cm once.
  std::vector<std::string> CharDevices() const;
  // The RDMA device names (e.g. mlx5_0), in HCA order.
  std::vector<std::string> RdmaNames() const;
  bool operator==(const PoolState& o) const {
    return hcas == o.hcas && blocked_reason == o.blocked_reason;
  }
  bool operator!=(const PoolState& o) const { return !(*this == o); }
};

// Selects the functions of `inv` that `rc` asks for. A non-empty `blocked_reason` (e.g.
// the RDMA subsystem is in exclusive netns mode) makes an empty, blocked pool.
PoolState BuildPool(const config::ResourceConfig& rc, const Inventory& inv,
                    const std::string& blocked_reason = "");

// The ListAndWatch device list: IDs "0".."rdmaHcaMax-1", Healthy while the pool is usable
// and Unhealthy otherwise (capacity is kept, allocatable drops to 0). A blocked pool
// advertises no devices.
std::vector<v1beta1::Device> DeviceList(const config::ResourceConfig& rc, const PoolState& pool);

// Builds the Allocate answer: one ContainerAllocateResponse per container request, each
// with a "rw" DeviceSpec for every char device of the pool (rdma_cm once) and the
// HCASHARE_RDMA_DEVICES env. Host paths are host-absolute, never prefixed by the host root;
// `host` is only used to check that the device nodes still exist.
// InvalidArgument: no container requests, no IDs, or an ID that is not one of ours
// (named in the message). FailedPrecondition: the pool has no usable HCA or a node vanished.
Result<v1beta1::AllocateResponse> BuildAllocateResponse(const config::ResourceConfig& rc,
                                                        const PoolState& pool,
                                                        const v1beta1::AllocateRequest& req,
                                                        const Host& host);

// Parses a device ID of this resource: a canonical decimal in [0, rdma_hca_max).
bool IsValidDeviceId(const std::string& id, int rdma_hca_max);

// GetPreferredAllocation for one container: the must-include IDs first, then the other
// available IDs in ascending numeric order, up to `size`. Unknown IDs are ignored.
std::vector<std::string> PreferredIds(const std::vector<std::string>& available,
                                      const std::vector<std::string>& must_include, int size,
                                      int rdma_hca_max);

}  // namespace hcashare::dp
