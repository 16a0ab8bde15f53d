#include "topo/graph.h"

#include <algorithm>
#include <cassert>

namespace hcashare::topo {
namespace {

void InsertSorted(std::vector<std::string>* v, const std::string& s) {
  auto it = std::lower_bound(v->begin(), v->end(), s);
  if (it == v->end() || *it != s) v->insert(it, s);
}

void Erase(std::vector<std::string>* v, const std::string& s) {
  v->erase(std::remove(v->begin(), v->end(), s), v->end());
}

// The bridge children of `id`, copied (the caller may restructure the tree).
std::vector<std::string> BridgeChildren(const Graph& g, const std::string& id) {
  std::vector<std::string> out;
  for (const auto& c : g.Find(id)->children) {
    if (g.Find(c)->type == NodeType::kBridge) out.push_back(c);
  }
  return out;
}

// Folds the switch whose upstream port is `usp`, then the switches nested below it.
void FlattenSwitch(Graph* g, const std::string& usp) {
  for (const auto& dsp : BridgeChildren(*g, usp)) g->Absorb(usp, dsp);
  for (const auto& nested : BridgeChildren(*g, usp)) FlattenSwitch(g, nested);
}

}  // namespace

std::string NumaId(int numa) { return "numa:" + std::to_string(numa < 0 ? -1 : numa); }

Node& Graph::Ensure(const std::string& id, NodeType type, const std::string& parent) {
  auto [it, added] = nodes_.try_emplace(id);
  if (added) {
    it->second.id = id;
    it->second.type = type;
    it->second.parent = parent;
    if (!parent.empty()) InsertSorted(&nodes_.at(parent).children, id);
  }
  return it->second;
}

Graph Graph::FromSnapshot(const Endpoints& snap) {
  Graph g;
  g.Ensure(kSystemId, NodeType::kSystem, "");
  // The NUMA node of each root complex: its first endpoint with a known node.
  std::map<std::string, int> rc_numa;
  for (const auto& ep : snap.devices) {
    auto [it, added] = rc_numa.try_emplace(ep.root_complex, ep.numa_node);
    if (!added && it->second < 0) it->second = ep.numa_node;
  }
  for (const auto& ep : snap.devices) {
    const int numa = rc_numa[ep.root_complex];
    g.Ensure(NumaId(numa), NodeType::kNuma, kSystemId).numa_node = numa < 0 ? -1 : numa;
    std::string parent = "rc:" + ep.root_complex;
    g.Ensure(parent, NodeType::kRootComplex, NumaId(numa)).numa_node = numa < 0 ? -1 : numa;
    for (const auto& b : ep.bridges) {
      g.Ensure(b, NodeType::kBridge, parent);
      parent = b;
    }
    const NodeType type = ep.kind == DeviceKind::kGpu ? NodeType::kGpu : NodeType::kNic;
    g.Ensure(ep.address, type, parent).numa_node = ep.numa_node;
  }
  return g;
}

const Node* Graph::Find(const std::string& id) const {
  auto it = nodes_.find(id);
  return it == nodes_.end() ? nullptr : &it->second;
}

std::vector<std::string> Graph::Ancestors(const std::string& id) const {
  std::vector<std::string> out;
  for (const Node* n = Find(id); n != nullptr; n = Find(n->parent)) out.push_back(n->id);
  return out;
}

void Graph::Absorb(const std::string& to, const std::string& from) {
  Node& target = nodes_.at(to);
  Node& gone = nodes_.at(from);
  assert(gone.parent == to);
  for (const auto& c : gone.children) {
    nodes_.at(c).parent = to;
    InsertSorted(&target.children, c);
  }
  InsertSorted(&target.merged, from);
  Erase(&target.children, from);
  nodes_.erase(from);
}

void FlattenSwitches(Graph* graph) {
  std::vector<std::string> root_ports;
  for (const auto& [id, node] : graph->nodes()) {
    if (node.type == NodeType::kBridge &&
        graph->Find(node.parent)->type == NodeType::kRootComplex) {
      root_ports.push_back(id);
    }
  }
  // The bridges right below a root port are switch upstream ports.
  for (const auto& rp : root_ports) {
    for (const auto& usp : BridgeChildren(*graph, rp)) FlattenSwitch(graph, usp);
  }
}

}  // namespace hcashare::topo
