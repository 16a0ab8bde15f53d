// Renderings of a TopoReport for `hcashare topo --format table|json|dot`. Pure functions.
//
// JSON schema (stable; documented in docs/cli.md):
//   devices      list of {pci, kind ("gpu"|"nic"), name, numa (int or null), cpus (string
//                or null)}, GPUs first, each kind by PCI address
//   matrix       {pci: {pci: "X"|"PIX"|"PXB"|"PHB"|"NODE"|"SYS"}}
//   best_nics    list of {gpu, nic (pci or null), name (RDMA device or null), path,
//                gpudirect ("good"|"degraded"|"poor"|null), acs ("redirect"|"off"|
//                "unknown", null when they share no PCIe switch or there is no NIC)}, one
//                per GPU
//   nccl_ib_hca  the suggested NCCL_IB_HCA value, or null
//   virtual_rdma list of {name, netdev (or null), pci (the netdev's PCI function, or null)}
//                for RDMA devices that are not on PCI (rxe, siw), by name
//   acs_paths    list of {gpu, nic, name, acs ("redirect"|"off"|"unknown"), bridges,
//                redirecting, unreadable (bridge addresses)} for every GPU and RDMA NIC
//                pair under one PCIe switch, GPU then NIC order
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "topo/report.h"

namespace hcashare::topo {

// The matrix in the layout of `nvidia-smi topo -m` (CPU and NUMA affinity columns), the
// legend, the device list, the best NIC per GPU and the NCCL_IB_HCA hint.
std::string FormatTable(const TopoReport& report);

// The JSON document described above.
nlohmann::ordered_json ToJson(const TopoReport& report);

// The flattened tree as a Graphviz graph: NUMA nodes (joined by SYS edges), root
// complexes, bridges and switches, GPUs and NICs; each edge labelled with its hop class.
std::string FormatDot(const TopoReport& report);

}  // namespace hcashare::topo
