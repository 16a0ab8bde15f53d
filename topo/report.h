// TopoReport: what `hcashare topo` shows — the devices with their names, the path-class
// matrix, and for each GPU the best RDMA NIC with a GPUDirect RDMA verdict. Built from a
// Endpoints by pure functions; thread-compatible.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "topo/acs.h"
#include "topo/endpoints.h"
#include "topo/graph.h"
#include "topo/paths.h"

namespace hcashare::topo {

// A device with its display name: "GPU0"…, or for a NIC its RDMA device name, else its
// first netdev, else "NIC<n>".
struct NamedDevice {
  PciEndpoint device;
  std::string name;
};

// The best NIC for one GPU. `nic` is "" when the host has no RDMA NIC.
struct NicChoice {
  std::string gpu;       // PCI address
  std::string nic;       // PCI address
  std::string nic_name;  // RDMA device name
  PathType path = PathType::kSys;
  AcsState acs = AcsState::kNotApplicable;  // ACS on the path between them
};

struct TopoReport {
  std::vector<NamedDevice> devices;                               // GPUs, then NICs
  std::map<std::string, std::map<std::string, PathType>> matrix;  // by PCI address
  std::vector<NicChoice> best_nics;                               // one per GPU, GPU order
  std::string nccl_ib_hca;  // "=mlx5_0,mlx5_1": the best NICs; "" when there are none
  Graph graph;              // flattened
  std::vector<VirtualRdmaEndpoint> virtual_rdma;  // not on PCI: listed, not in the matrix
  std::vector<AcsPath> acs_paths;  // every GPU and RDMA NIC pair under one PCIe switch
};

// GPUDirect RDMA between a GPU and a NIC at `path`: "good" (PIX, PXB), "degraded" (PHB,
// NODE) or "poor" (SYS).
const char* GpuDirectVerdict(PathType path);

// Builds the report: flattens switches, classifies every pair, and picks for each GPU the
// RDMA-capable NIC with the closest class, then on the GPU's NUMA node, then a PF before a
// VF, then the lowest address; and ACS on every GPU <-> RDMA NIC path under a switch.
TopoReport BuildReport(const Endpoints& snap);

}  // namespace hcashare::topo
