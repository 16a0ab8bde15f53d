#include "tools/exclusion.h"

#include <algorithm>

#include <cstdint>

#include "common/strings.h"
#include "node/pool.h"
#include "node/selectors.h"

namespace hcashare::cli {
namespace {

using config::Selectors;
using node::PciFunction;

std::string Or(const std::vector<std::string>& v) { return v.empty() ? "none" : Join(v, ", "); }

std::string Ints(const std::vector<int>& v) {
  std::vector<std::string> s;
  for (int i : v) s.push_back(std::to_string(i));
  return Or(s);
}

std::string PfText(const config::PfNameSelector& p) {
  if (p.first_vf < 0) return p.pf;
  return p.pf + "#" + std::to_string(p.first_vf) +
         (p.last_vf != p.first_vf ? "-" + std::to_string(p.last_vf) : "");
}

std::vector<std::string> RdmaNames(const PciFunction& fn) {
  std::vector<std::string> out;
  for (const auto& r : fn.rdma) out.push_back(r.name);
  return out;
}

// One selector: its config key, how to copy just it, and how to describe both sides.
struct SelectorField {
  const char* key;
  void (*copy)(const Selectors& from, Selectors* to);
  std::string (*wants)(const Selectors& s);
  std::string (*has)(const PciFunction& fn);
};

const SelectorField kFields[] = {
    {"vendors", [](const Selectors& f, Selectors* t) { t->vendors = f.vendors; },
     [](const Selectors& s) { return Or(s.vendors); },
     [](const PciFunction& fn) { return fn.vendor; }},
    {"deviceIDs", [](const Selectors& f, Selectors* t) { t->device_ids = f.device_ids; },
     [](const Selectors& s) { return Or(s.device_ids); },
     [](const PciFunction& fn) { return fn.device; }},
    {"drivers", [](const Selectors& f, Selectors* t) { t->drivers = f.drivers; },
     [](const Selectors& s) { return Or(s.drivers); },
     [](const PciFunction& fn) { return fn.driver; }},
    {"ifNames", [](const Selectors& f, Selectors* t) { t->if_names = f.if_names; },
     [](const Selectors& s) { return Or(s.if_names); },
     [](const PciFunction& fn) { return Or(fn.netdevs); }},
    {"linkTypes", [](const Selectors& f, Selectors* t) { t->link_types = f.link_types; },
     [](const Selectors& s) { return Or(s.link_types); },
     [](const PciFunction& fn) { return Or(fn.link_types); }},
    {"pciAddresses", [](const Selectors& f, Selectors* t) { t->pci_addresses = f.pci_addresses; },
     [](const Selectors& s) { return Or(s.pci_addresses); },
     [](const PciFunction& fn) { return fn.address; }},
    {"pfNames", [](const Selectors& f, Selectors* t) { t->pf_names = f.pf_names; },
     [](const Selectors& s) {
       std::vector<std::string> v;
       for (const auto& p : s.pf_names) v.push_back(PfText(p));
       return Or(v);
     },
     [](const PciFunction& fn) {
       std::string s = "PF netdev " + Or(fn.pf_netdevs);
       if (fn.is_vf) s += ", VF index " + std::to_string(fn.vf_index);
       return s;
     }},
    {"isVF", [](const Selectors& f, Selectors* t) { t->is_vf = f.is_vf; },
     [](const Selectors& s) { return std::string(s.is_vf.value_or(false) ? "true" : "false"); },
     [](const PciFunction& fn) { return std::string(fn.is_vf ? "true" : "false"); }},
    {"rdmaDevices", [](const Selectors& f, Selectors* t) { t->rdma_devices = f.rdma_devices; },
     [](const Selectors& s) { return Or(s.rdma_devices); },
     [](const PciFunction& fn) { return Or(RdmaNames(fn)); }},
    {"numaNodes", [](const Selectors& f, Selectors* t) { t->numa_nodes = f.numa_nodes; },
     [](const Selectors& s) { return Ints(s.numa_nodes); },
     [](const PciFunction& fn) { return std::to_string(fn.numa_node); }},
};

}  // namespace

std::optional<Rejection> WhyNotSelected(const config::ResourceConfig& rc, const PciFunction& fn) {
  if (fn.is_sf && rc.mode != config::PoolMode::kExclusive) {
    return Rejection{"requirement", "scalable functions are offered only by exclusive pools"};
  }
  if (node::Matches(rc.selectors, fn)) {
    auto refusal = node::ExclusiveRefusal(rc, fn);
    if (!refusal) return std::nullopt;
    return Rejection{refusal->opt_in, refusal->reason};
  }
  for (const auto& field : kFields) {
    Selectors one;
    field.copy(rc.selectors, &one);
    if (!node::Matches(one, fn)) {
      return Rejection{std::string("selectors.") + field.key,
                       "has " + field.has(fn) + "; wants " + field.wants(rc.selectors)};
    }
  }
  return Rejection{"selectors", "no single selector rejects it, but together they do"};
}

std::optional<Rejection> WhyNotDiscovered(const node::Inventory& inv, const std::string& address) {
  auto it = std::lower_bound(
      inv.not_offered.begin(), inv.not_offered.end(), address,
      [](const node::Exclusion& e, const std::string& a) { return e.address < a; });
  if (it == inv.not_offered.end() || it->address != address) return std::nullopt;
  return Rejection{"requirement", it->reason};
}

}  // namespace hcashare::cli
