// Graph: the PCIe tree of a host, built from Endpoints, in the manner of NCCL's
// topo.cc: typed nodes keyed by a stable id (never by array index), one parent each.
//
//   system ── NUMA node ── root complex ── bridge ── … ── GPU / NIC
//
// The system node stands for the SMP interconnect between NUMA nodes. Bridges are every
// BDF component of a device's sysfs path; FlattenSwitches then folds each PCIe switch into
// one node. Thread-compatible.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "topo/endpoints.h"

namespace hcashare::topo {

// Node types, from the top of the tree down.
enum class NodeType { kSystem, kNuma, kRootComplex, kBridge, kGpu, kNic };

// One node of the tree.
struct Node {
  std::string id;  // "system", "numa:0" ("numa:-1" = unknown), "rc:<path>", or a BDF
  NodeType type = NodeType::kBridge;
  std::string parent;                 // "" for the system node
  std::vector<std::string> children;  // sorted
  int numa_node = -1;                 // NUMA and root-complex nodes, endpoints
  // Switches: the downstream ports folded into this upstream port by FlattenSwitches.
  std::vector<std::string> merged;
};

class Graph {
 public:
  // The id of the system node.
  static constexpr const char* kSystemId = "system";

  // Builds the tree of `snap`. A root complex hangs off the NUMA node of its first
  // endpoint (in snapshot order) whose node is known, else off "numa:-1".
  static Graph FromSnapshot(const Endpoints& snap);

  // The node with `id`, or null.
  const Node* Find(const std::string& id) const;
  // Every node, by id.
  const std::map<std::string, Node>& nodes() const { return nodes_; }
  // The ids from `id` up to the system node, `id` first. Empty when `id` is unknown.
  std::vector<std::string> Ancestors(const std::string& id) const;

  // Moves every child of `from` under `to` and deletes `from`, recording it in `to`'s
  // `merged`. REQUIRES: both exist and `from` is a child of `to`.
  void Absorb(const std::string& to, const std::string& from);

 private:
  // Adds `id` under `parent` unless it exists; returns it.
  Node& Ensure(const std::string& id, NodeType type, const std::string& parent);

  std::map<std::string, Node> nodes_;
};

// The NUMA node id of `numa` ("numa:0"; "numa:-1" when unknown).
std::string NumaId(int numa);

// Folds every PCIe switch into one node, as NCCL does when it walks a device's sysfs path
// two levels at a time. A switch shows as an upstream port whose children are its
// downstream ports; below a root port the bridge levels alternate (upstream, downstream,
// upstream of a nested switch, …). Each downstream port's children move up to its
// upstream port and the downstream port is removed, so two devices under one switch are
// one bridge apart (PIX) and devices under nested switches several (PXB).
void FlattenSwitches(Graph* graph);

}  // namespace hcashare::topo
