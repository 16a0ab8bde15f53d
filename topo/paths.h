// Path classes between two devices of a Graph, in the vocabulary of `nvidia-smi topo -m`.
//
// As in NCCL's paths.cc, each hop has a class and a path's class is its worst hop:
//   device ─ bridge        PIX     bridge ─ bridge           PXB
//   device/bridge ─ root complex   PHB
//   root complex ─ NUMA node       NODE    NUMA node ─ system    SYS
// The classes are ordered, so policy is one comparison (`path <= PathType::kPxb`).
// Pure functions, thread-safe.
#pragma once

#include <optional>
#include <string>

#include "topo/graph.h"

namespace hcashare::topo {

// Ordered from closest to farthest.
enum class PathType {
  kSelf = 0,  // X: the device itself
  kPix,       // at most one PCIe bridge (a switch counts as one)
  kPxb,       // several PCIe bridges, no host bridge
  kPhb,       // through a PCIe host bridge
  kNode,      // across host bridges within one NUMA node
  kSys,       // across NUMA nodes (QPI/UPI/SMP interconnect)
};

// "X", "PIX", "PXB", "PHB", "NODE" or "SYS".
const char* PathTypeName(PathType type);
// The inverse of PathTypeName; nullopt for anything else.
std::optional<PathType> ParsePathType(const std::string& name);

// The class of the hop between a node of type `child` and its parent of type `parent`.
PathType HopType(NodeType child, NodeType parent);

// The class of the tree path between nodes `a` and `b`: the worst hop on the way up from
// each to their lowest common ancestor. kSelf when a == b. Two nodes whose own NUMA nodes
// are known and differ are SYS even when sysfs puts them under one host bridge (the
// `numa_node` attribute is the authority). REQUIRES: both are in `graph`.
PathType PathBetween(const Graph& graph, const std::string& a, const std::string& b);

}  // namespace hcashare::topo
