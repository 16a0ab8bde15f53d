#include "node/pool.h"

#include <algorithm>
#include <map>

#include "node/selectors.h"

namespace hcashare::node {

const PciFunction* PoolState::Find(const std::string& address) const {
  for (const auto& h : hcas) {
    if (h.address == address) return &h;
  }
  return nullptr;
}

std::vector<std::string> PoolState::CharDevicesOf(const std::vector<PciFunction>& fns) {
  std::set<std::string> all;
  for (const auto& h : fns) {
    for (const auto& r : h.rdma) all.insert(r.char_devices.begin(), r.char_devices.end());
  }
  all.erase(kRdmaCmPath);
  std::vector<std::string> out(all.begin(), all.end());
  if (!fns.empty()) out.push_back(kRdmaCmPath);
  return out;
}

std::vector<std::string> PoolState::RdmaNamesOf(const std::vector<PciFunction>& fns) {
  std::vector<std::string> names;
  for (const auto& h : fns) {
    for (const auto& r : h.rdma) names.push_back(r.name);
  }
  return names;
}

PoolState BuildPool(const config::ResourceConfig& rc, const Inventory& inv,
                    const std::string& blocked_reason, const PoolState* previous) {
  PoolState pool;
  pool.blocked_reason = blocked_reason;
  if (!blocked_reason.empty()) return pool;
  for (const auto& fn : inv.functions) {
    // Scalable functions are offered whole, one pod each: shared pools keep to PCI
    // functions (as the Mellanox plugin does), so adding SFs to a host changes no pool.
    if (fn.is_sf && rc.mode != config::PoolMode::kExclusive) continue;
    if (!Matches(rc.selectors, fn)) continue;
    if (auto refusal = ExclusiveRefusal(rc, fn)) {
      pool.refused.push_back({fn.address, std::move(refusal->reason)});
      continue;
    }
    pool.hcas.push_back(fn);
  }
  if (rc.mode == config::PoolMode::kExclusive && previous != nullptr) {
    // A device handed to a pod in exclusive RDMA netns mode disappears from host sysfs
    // (its RDMA device and netdev live in the pod). It is still ours and still in use:
    // keep advertising it while its PCI function exists.
    for (const auto& old : previous->hcas) {
      if (pool.Find(old.address) == nullptr && inv.present.count(old.address)) {
        pool.hcas.push_back(old);
        pool.in_use.insert(old.address);
      }
    }
    std::sort(pool.hcas.begin(), pool.hcas.end(),
              [](const PciFunction& a, const PciFunction& b) { return a.address < b.address; });
  }
  return pool;
}

std::optional<Refusal> ExclusiveRefusal(const config::ResourceConfig& rc, const PciFunction& fn) {
  if (rc.mode != config::PoolMode::kExclusive) return std::nullopt;
  if (fn.num_vfs > 0 && !rc.allow_pf_with_vfs) {
    return Refusal{"allowPfWithVfs",
                   "a PF with " + std::to_string(fn.num_vfs) +
                       " VF(s) enabled: a pod given it would control VFs that other pods own "
                       "(select its VFs instead, or set \"allowPfWithVfs\": true)"};
  }
  if (fn.host_uplink && !rc.allow_host_uplink) {
    return Refusal{"allowHostUplink",
                   "its netdev carries the host's default route (the node's own uplink; set "
                   "\"allowHostUplink\": true to offer it anyway)"};
  }
  return std::nullopt;
}

std::vector<int> NumaNodesOf(const std::vector<PciFunction>& fns) {
  std::set<int> nodes;
  for (const auto& h : fns) nodes.insert(h.numa_node < 0 ? -1 : h.numa_node);
  return std::vector<int>(nodes.begin(), nodes.end());
}

int NodeOfSharedId(const config::ResourceConfig& rc, const PoolState& pool, int id) {
  if (!rc.topology_aware || pool.hcas.empty() || id < 0 || id >= rc.rdma_hca_max) return kNoNode;
  const std::vector<int> nodes = NumaNodesOf(pool.hcas);
  // Blocks as even as possible: the first (max % k) nodes get one ID more, so every node
  // gets IDs whenever rdmaHcaMax >= the number of nodes.
  const int k = static_cast<int>(nodes.size());
  const int base = rc.rdma_hca_max / k;
  const int extra = rc.rdma_hca_max % k;
  const int big_ids = extra * (base + 1);  // IDs held by the larger blocks
  const int index = id < big_ids ? id / (base + 1) : extra + (id - big_ids) / std::max(base, 1);
  return nodes[static_cast<size_t>(std::min(index, k - 1))];
}

}  // namespace hcashare::node
