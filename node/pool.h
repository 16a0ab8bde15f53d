// Pool: the PCI functions a resource hands out, and how its device IDs map onto them.
//
// A pool is rebuilt from each Inventory; two pools compare equal only when everything a
// container would receive is identical (PCI addresses, RDMA names, char devices, NUMA).
//   shared      IDs "0".."rdmaHcaMax-1"; each grants the whole pool, or with
//               topologyAware the HCAs of the ID's NUMA node.
//   exclusive   one device per function, ID = PCI address.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "config/config.h"
#include "node/discovery.h"

namespace hcashare::node {

struct PoolState {
  std::vector<PciFunction> hcas;  // selected functions, sorted by address
  // Exclusive pools: addresses whose RDMA device has left host sysfs (moved into a pod's
  // network namespace) while the PCI function is still present. They stay advertised
  // with their last known details.
  std::set<std::string> in_use;
  // Set when the pool must advertise nothing (a shared pool while the RDMA netns mode is
  // exclusive).
  std::string blocked_reason;
  // Functions the selectors chose but the pool refuses to hand out (ExclusiveRefusal).
  std::vector<Exclusion> refused;
  // With --use-cdi: why the resource's CDI spec could not be published (a foreign file
  // holds its name); Allocate refuses with it, since the runtime could not resolve our names.
  std::string cdi_unavailable;

  // True when at least one HCA is present and the pool is not blocked.
  bool Usable() const { return blocked_reason.empty() && !hcas.empty(); }
  // Every char device of every HCA, sorted and de-duplicated, then rdma_cm once.
  std::vector<std::string> CharDevices() const { return CharDevicesOf(hcas); }
  // The RDMA device names (e.g. mlx5_0), in HCA order.
  std::vector<std::string> RdmaNames() const { return RdmaNamesOf(hcas); }
  // The function with PCI address `address`, or null.
  const PciFunction* Find(const std::string& address) const;

  // Char devices of `fns`, sorted and de-duplicated, then rdma_cm once (none for none).
  static std::vector<std::string> CharDevicesOf(const std::vector<PciFunction>& fns);
  static std::vector<std::string> RdmaNamesOf(const std::vector<PciFunction>& fns);

  bool operator==(const PoolState& o) const {
    return hcas == o.hcas && in_use == o.in_use && blocked_reason == o.blocked_reason &&
           refused == o.refused && cdi_unavailable == o.cdi_unavailable;
  }
  bool operator!=(const PoolState& o) const { return !(*this == o); }
};

// Selects the functions of `inv` that `rc` asks for. A non-empty `blocked_reason` makes an
// empty, blocked pool. For exclusive pools, `previous` (the last pool, may be null) supplies
// devices that vanished from host sysfs while their PCI function is still present.
PoolState BuildPool(const config::ResourceConfig& rc, const Inventory& inv,
                    const std::string& blocked_reason = "", const PoolState* previous = nullptr);

// Why a pool does not hand out a function its selectors chose.
struct Refusal {
  std::string opt_in;  // the resource key that would allow it ("allowPfWithVfs")
  std::string reason;
};

// Why exclusive pool `rc` refuses selected function `fn`, or nullopt: a PF with enabled VFs
// (a pod given it controls VFs that other pods own) unless allowPfWithVfs, and a function
// whose netdev carries the host's default route unless allowHostUplink. Shared pools refuse
// nothing (they exist to share the PF's HCA).
std::optional<Refusal> ExclusiveRefusal(const config::ResourceConfig& rc, const PciFunction& fn);

// The NUMA node a shared pool's ID belongs to, for topologyAware pools: the IDs are
// split into contiguous blocks as even as possible, one per NUMA node holding pool HCAs
// (ascending; earlier nodes get the extra IDs), so the mapping is stable while the set
// of nodes is. Functions with unknown NUMA (-1) form
// their own block. Returns kNoNode for pools that are not topology-aware or have no HCA.
inline constexpr int kNoNode = -2;
int NodeOfSharedId(const config::ResourceConfig& rc, const PoolState& pool, int id);

// The distinct NUMA nodes of `fns`, ascending; -1 is included when one is unknown.
std::vector<int> NumaNodesOf(const std::vector<PciFunction>& fns);

}  // namespace hcashare::node
