#include <sstream>

#include "topo/format.h"

namespace hcashare::topo {
namespace {

// The label of node `n`: what it is and its identity.
std::string Label(const TopoReport& r, const Node& n) {
  switch (n.type) {
    case NodeType::kNuma:
      return n.numa_node < 0 ? "NUMA node unknown" : "NUMA node " + std::to_string(n.numa_node);
    case NodeType::kRootComplex:
      return "root complex\\n" + n.id.substr(3);
    case NodeType::kBridge:
      if (n.merged.empty()) {
        const bool root_port = r.graph.Find(n.parent)->type == NodeType::kRootComplex;
        return (root_port ? "root port\\n" : "bridge\\n") + n.id;
      }
      return "PCIe switch\\n" + n.id + "\\n(" + std::to_string(n.merged.size()) +
             " downstream ports)";
    default:
      for (const auto& d : r.devices) {
        if (d.device.address == n.id) return d.name + "\\n" + n.id;
      }
      return n.id;
  }
}

const char* Shape(NodeType t) {
  switch (t) {
    case NodeType::kNuma:
      return "box3d";
    case NodeType::kRootComplex:
      return "box";
    case NodeType::kBridge:
      return "diamond";
    case NodeType::kGpu:
      return "component";
    default:
      return "ellipse";
  }
}

}  // namespace

std::string FormatDot(const TopoReport& r) {
  std::ostringstream out;
  out << "graph hcashare_topo {\n  node [fontname=\"monospace\"];\n";
  std::vector<const Node*> numa;
  for (const auto& [id, n] : r.graph.nodes()) {
    if (n.type == NodeType::kSystem) continue;
    if (n.type == NodeType::kNuma) numa.push_back(&n);
    out << "  \"" << id << "\" [label=\"" << Label(r, n) << "\", shape=" << Shape(n.type) << "];\n";
  }
  for (const auto& [id, n] : r.graph.nodes()) {
    if (n.type == NodeType::kSystem || n.type == NodeType::kNuma) continue;
    const Node* parent = r.graph.Find(n.parent);
    out << "  \"" << n.parent << "\" -- \"" << id << "\" [label=\""
        << PathTypeName(HopType(n.type, parent->type)) << "\"];\n";
  }
  for (size_t i = 0; i < numa.size(); ++i) {
    for (size_t j = i + 1; j < numa.size(); ++j) {
      out << "  \"" << numa[i]->id << "\" -- \"" << numa[j]->id << "\" [label=\"SYS\"];\n";
    }
  }
  out << "}\n";
  return out.str();
}

}  // namespace hcashare::topo
