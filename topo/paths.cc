#include "topo/paths.h"

#include <algorithm>
#include <set>

namespace hcashare::topo {
namespace {

struct PathName {
  PathType type;
  const char* name;
};
constexpr PathName kPathNames[] = {
    {PathType::kSelf, "X"},  {PathType::kPix, "PIX"},   {PathType::kPxb, "PXB"},
    {PathType::kPhb, "PHB"}, {PathType::kNode, "NODE"}, {PathType::kSys, "SYS"},
};

bool IsEndpoint(NodeType t) { return t == NodeType::kGpu || t == NodeType::kNic; }

// The worst hop from `path[0]` up to (excluding) `path[stop]`.
PathType WorstHop(const Graph& g, const std::vector<std::string>& path, size_t stop) {
  PathType worst = PathType::kSelf;
  for (size_t i = 0; i < stop; ++i) {
    worst = std::max(worst, HopType(g.Find(path[i])->type, g.Find(path[i + 1])->type));
  }
  return worst;
}

}  // namespace

const char* PathTypeName(PathType type) {
  for (const auto& p : kPathNames) {
    if (p.type == type) return p.name;
  }
  return "?";
}

std::optional<PathType> ParsePathType(const std::string& name) {
  for (const auto& p : kPathNames) {
    if (name == p.name) return p.type;
  }
  return std::nullopt;
}

PathType HopType(NodeType child, NodeType parent) {
  switch (parent) {
    case NodeType::kBridge:
      return IsEndpoint(child) ? PathType::kPix : PathType::kPxb;
    case NodeType::kRootComplex:
      return PathType::kPhb;
    case NodeType::kNuma:
      return PathType::kNode;
    case NodeType::kSystem:
      return PathType::kSys;
    default:
      return PathType::kSys;  // endpoints have no children
  }
}

PathType PathBetween(const Graph& graph, const std::string& a, const std::string& b) {
  if (a == b) return PathType::kSelf;
  const std::vector<std::string> up_a = graph.Ancestors(a);
  const std::vector<std::string> up_b = graph.Ancestors(b);
  const std::set<std::string> in_b(up_b.begin(), up_b.end());
  size_t lca_a = 0;
  while (lca_a < up_a.size() && !in_b.count(up_a[lca_a])) ++lca_a;
  if (lca_a == up_a.size()) return PathType::kSys;  // not in one tree (cannot happen)
  const size_t lca_b =
      static_cast<size_t>(std::find(up_b.begin(), up_b.end(), up_a[lca_a]) - up_b.begin());
  const PathType tree = std::max(WorstHop(graph, up_a, lca_a), WorstHop(graph, up_b, lca_b));
  const int numa_a = graph.Find(a)->numa_node;
  const int numa_b = graph.Find(b)->numa_node;
  return numa_a >= 0 && numa_b >= 0 && numa_a != numa_b ? PathType::kSys : tree;
}

}  // namespace hcashare::topo
