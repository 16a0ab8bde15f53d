#include "node/dra_owned.h"

#include <algorithm>
#include <utility>
#include <vector>

namespace hcashare::node {

DraOwners DraOwnedFunctions(const config::PluginConfig& cfg, const Inventory& inv) {
  DraOwners owners;
  for (const config::ResourceConfig& rc : cfg.resources) {
    if (rc.api != config::ResourceApi::kDra) continue;
    for (const PciFunction& fn : BuildPool(rc, inv).hcas) owners.emplace(fn.address, rc.FullName());
  }
  return owners;
}

std::string DraOwnedReason(const std::string& owner) {
  return "offered through DRA by resource " + owner;
}

void RefuseDraOwned(const DraOwners& owners, PoolState* pool) {
  if (owners.empty()) return;
  std::vector<PciFunction> kept;
  for (PciFunction& fn : pool->hcas) {
    auto it = owners.find(fn.address);
    if (it == owners.end()) {
      kept.push_back(std::move(fn));
      continue;
    }
    pool->in_use.erase(fn.address);
    pool->refused.push_back({fn.address, DraOwnedReason(it->second)});
  }
  pool->hcas = std::move(kept);
  std::stable_sort(pool->refused.begin(), pool->refused.end(),
                   [](const Exclusion& a, const Exclusion& b) { return a.address < b.address; });
}

std::vector<config::ResourceConfig> DevicePluginResources(
    const std::vector<config::ResourceConfig>& resources) {
  std::vector<config::ResourceConfig> out;
  for (const config::ResourceConfig& rc : resources) {
    if (rc.api == config::ResourceApi::kDevicePlugin) out.push_back(rc);
  }
  return out;
}

}  // namespace hcashare::node
