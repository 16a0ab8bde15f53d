#include "node/selectors.h"

#include <algorithm>

namespace hcashare::node {
namespace {

// An empty selector list matches everything; otherwise `value` must be listed.
template <typename T>
bool Allows(const std::vector<T>& list, const T& value) {
  return list.empty() || std::find(list.begin(), list.end(), value) != list.end();
}

// An empty list matches everything; otherwise one of `values` must be listed.
bool AllowsAny(const std::vector<std::string>& list, const std::vector<std::string>& values) {
  if (list.empty()) return true;
  return std::any_of(values.begin(), values.end(),
                     [&](const std::string& v) { return Allows(list, v); });
}

std::vector<std::string> RdmaNames(const PciFunction& fn) {
  std::vector<std::string> names;
  for (const auto& r : fn.rdma) names.push_back(r.name);
  return names;
}

// One pfNames entry: without a range, the PF itself and its VFs; with one, those VFs only.
bool MatchesPf(const config::PfNameSelector& sel, const PciFunction& fn) {
  const auto& pfs = fn.pf_netdevs;
  if (std::find(pfs.begin(), pfs.end(), sel.pf) == pfs.end()) return false;
  if (sel.first_vf < 0) return true;
  return fn.is_vf && fn.vf_index >= sel.first_vf && fn.vf_index <= sel.last_vf;
}

bool AllowsPf(const std::vector<config::PfNameSelector>& list, const PciFunction& fn) {
  return list.empty() ||
         std::any_of(list.begin(), list.end(), [&](const auto& sel) { return MatchesPf(sel, fn); });
}

}  // namespace

bool Matches(const config::Selectors& sel, const PciFunction& fn) {
  return Allows(sel.vendors, fn.vendor) && Allows(sel.device_ids, fn.device) &&
         Allows(sel.drivers, fn.driver) && AllowsAny(sel.if_names, fn.netdevs) &&
         AllowsAny(sel.link_types, fn.link_types) && Allows(sel.pci_addresses, fn.address) &&
         AllowsPf(sel.pf_names, fn) && AllowsAny(sel.rdma_devices, RdmaNames(fn)) &&
         Allows(sel.numa_nodes, fn.numa_node) && (!sel.is_vf || *sel.is_vf == fn.is_vf);
}

}  // namespace hcashare::node
