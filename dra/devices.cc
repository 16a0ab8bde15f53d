#include "dra/devices.h"

#include <algorithm>
#include <map>
#include <tuple>
#include <utility>

#include "config/names.h"
#include "node/dra_owned.h"
#include "node/pool.h"

namespace hcashare::dra {
namespace {

constexpr const char* kSysDevices = "/sys/devices/";

// Why a shared resource offers nothing while RDMA devices live in one pod's netns each.
constexpr const char* kSharedInExclusiveNetns =
    "RDMA netns mode is exclusive: an RDMA device cannot be shared across pods (run `rdma "
    "system set netns shared`, or use an exclusive-mode resource)";

// `text` with every character other than [a-z0-9] as '-'.
std::string Dashed(const std::string& text) {
  std::string out = text;
  for (char& c : out) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'))) c = '-';
  }
  return out;
}

// The state name of a port's `state` ("4: ACTIVE" -> "ACTIVE").
std::string StateName(const std::string& state) {
  const size_t colon = state.find(": ");
  return colon == std::string::npos ? state : state.substr(colon + 2);
}

// The sysfs path whose first component is the function's PCIe root: its own, an SF's PF's.
std::string PcieRootFor(const node::PciFunction& fn, const hostfacts::HostSnapshot& snap) {
  if (fn.is_virtual) return "";
  const hostfacts::PciFunction* pci = snap.FindPci(fn.is_sf ? fn.pf_address : fn.address);
  return pci == nullptr ? "" : PcieRootOf(pci->sysfs_path);
}

// The device of `fn` offered by `rc`, with its host facts.
DraDevice MakeDevice(const config::ResourceConfig& rc, const node::PciFunction& fn, bool shared,
                     const hostfacts::HostSnapshot& snap) {
  DraDevice d;
  d.name = DeviceName(fn, shared);
  d.resource = rc;
  d.fn = fn;
  d.shared = shared;
  d.pcie_root = PcieRootFor(fn, snap);
  if (fn.rdma.empty()) return d;
  const hostfacts::RdmaDevice* rdma = snap.FindRdma(fn.rdma.front().name);
  if (rdma == nullptr) return d;
  d.fw_version = rdma->fw_ver;
  for (const hostfacts::RdmaPort& port : rdma->ports) {
    if (port.number != "1") continue;
    d.port_state = StateName(port.state);
    d.port_rate_gbps = port.rate_gbps;
  }
  return d;
}

}  // namespace

bool DraDevice::operator==(const DraDevice& o) const {
  return std::tie(name, resource, fn, shared, pcie_root, fw_version, port_state, port_rate_gbps,
                  taint_effect, taint_since) ==
         std::tie(o.name, o.resource, o.fn, o.shared, o.pcie_root, o.fw_version, o.port_state,
                  o.port_rate_gbps, o.taint_effect, o.taint_since);
}

const DraDevice* DraInventory::Find(const std::string& name) const {
  auto it = std::lower_bound(devices.begin(), devices.end(), name,
                             [](const DraDevice& d, const std::string& n) { return d.name < n; });
  return it != devices.end() && it->name == name ? &*it : nullptr;
}

std::string DeviceName(const node::PciFunction& fn, bool shared) {
  if (fn.is_virtual) return std::string(shared ? "shared-" : "") + "rdma-" + Dashed(fn.address);
  if (fn.is_sf) return std::string(shared ? "shared-" : "") + "sf-" + Dashed(fn.address);
  return std::string(shared ? "shared-" : "pci-") + Dashed(fn.address);
}

std::string PcieRootOf(const std::string& sysfs_path) {
  const std::string prefix = kSysDevices;
  if (sysfs_path.compare(0, prefix.size(), prefix) != 0) return "";
  const size_t end = sysfs_path.find('/', prefix.size());
  std::string root = sysfs_path.substr(prefix.size(), end - prefix.size());
  return root.rfind("pci", 0) == 0 ? root : "";
}

DraInventory SelectDraDevices(const config::PluginConfig& cfg, const node::Inventory& inv,
                              const hostfacts::HostSnapshot& snap) {
  DraInventory out;
  const bool exclusive_netns = snap.rdma_netns_mode == "exclusive";
  // The one rule the device plugin's pools follow too: the first DRA resource owns.
  const node::DraOwners owners = node::DraOwnedFunctions(cfg, inv);
  std::map<std::string, std::string> names;  // device name -> the address it names
  for (const config::ResourceConfig& rc : cfg.resources) {
    if (rc.api != config::ResourceApi::kDra) continue;
    const bool shared = rc.mode == config::PoolMode::kShared;
    const std::string full = rc.FullName();
    std::vector<DraRefusal> refused;
    // Built unblocked: a shared resource's HCAs are listed as refused, not dropped.
    node::PoolState pool = node::BuildPool(rc, inv);
    for (node::Exclusion& e : pool.refused) {
      refused.push_back({std::move(e.address), full, std::move(e.reason)});
    }
    for (const node::PciFunction& fn : pool.hcas) {
      auto refuse = [&](std::string reason) {
        refused.push_back({fn.address, full, std::move(reason)});
      };
      auto owner = owners.find(fn.address);
      if (owner != owners.end() && owner->second != full) {
        refuse(node::DraOwnedReason(owner->second));
        continue;
      }
      if (shared && exclusive_netns) {
        refuse(kSharedInExclusiveNetns);
        continue;
      }
      const std::string name = DeviceName(fn, shared);
      const std::string problem = config::DnsLabelProblem(name);
      if (!problem.empty()) {
        refuse("its device name \"" + name + "\" is not a DNS label: it " + problem);
        continue;
      }
      auto [it, inserted] = names.emplace(name, fn.address);
      if (!inserted) {
        refuse("its device name \"" + name + "\" is already the name of " + it->second);
        continue;
      }
      out.devices.push_back(MakeDevice(rc, fn, shared, snap));
    }
    std::stable_sort(refused.begin(), refused.end(), [](const DraRefusal& a, const DraRefusal& b) {
      return a.address < b.address;
    });
    for (DraRefusal& r : refused) out.refused.push_back(std::move(r));
  }
  std::sort(out.devices.begin(), out.devices.end(),
            [](const DraDevice& a, const DraDevice& b) { return a.name < b.name; });
  return out;
}

void KeepDevicesInUse(const DraInventory& previous, const config::PluginConfig& cfg,
                      const node::Inventory& inv, DraInventory* next) {
  bool added = false;
  for (const DraDevice& old : previous.devices) {
    if (old.shared || next->Find(old.name) != nullptr || inv.present.count(old.fn.address) == 0) {
      continue;
    }
    const bool same_resource =
        std::any_of(cfg.resources.begin(), cfg.resources.end(),
                    [&](const config::ResourceConfig& rc) { return rc == old.resource; });
    const bool function_taken =
        std::any_of(next->devices.begin(), next->devices.end(),
                    [&](const DraDevice& d) { return d.fn.address == old.fn.address; });
    if (!same_resource || function_taken) continue;
    next->devices.push_back(old);
    added = true;
  }
  if (added) {
    std::sort(next->devices.begin(), next->devices.end(),
              [](const DraDevice& a, const DraDevice& b) { return a.name < b.name; });
  }
}

void MarkTaints(DraInventory* inv, TaintTimes* times, int64_t now) {
  TaintTimes next;
  for (DraDevice& d : inv->devices) {
    d.taint_effect = d.fn.gone ? "NoExecute" : d.fn.healthy ? "" : "NoSchedule";
    d.taint_since = 0;
    if (d.taint_effect.empty()) continue;
    auto it = times->find(d.name);
    d.taint_since =
        it != times->end() && it->second.first == d.taint_effect ? it->second.second : now;
    next[d.name] = {d.taint_effect, d.taint_since};
  }
  *times = std::move(next);
}

void KeepHeldDevices(const std::vector<HeldDevice>& held, const config::PluginConfig& cfg,
                     const node::Inventory& inv, const hostfacts::HostSnapshot& snap,
                     DraInventory* next) {
  bool added = false;
  for (const HeldDevice& h : held) {
    if (next->Find(h.name) != nullptr) continue;
    const bool present = inv.present.count(h.address) != 0;
    const hostfacts::PciFunction* pci = snap.FindPci(h.address);
    // An SF or a virtual device never lives in a pod's namespace: it is seen or gone.
    if (present && pci == nullptr) continue;
    auto rc = std::find_if(
        cfg.resources.begin(), cfg.resources.end(), [&](const config::ResourceConfig& r) {
          return r.api == config::ResourceApi::kDra && r.mode == config::PoolMode::kExclusive &&
                 r.FullName() == h.resource;
        });
    const bool function_taken =
        std::any_of(next->devices.begin(), next->devices.end(),
                    [&](const DraDevice& d) { return d.fn.address == h.address; });
    if (rc == cfg.resources.end() || function_taken) continue;
    node::PciFunction fn;
    fn.address = h.address;
    for (const auto& name : h.rdma_devices) fn.rdma.push_back({name, {}, {}, {}});
    if (pci == nullptr) {
      if (DeviceName(fn, false) != h.name) continue;
      fn.gone = true;
      fn.healthy = false;
      fn.health_reason = "the function is gone from the host while a claim holds it";
      DraDevice d;
      d.name = h.name;
      d.resource = *rc;
      d.fn = std::move(fn);
      next->devices.push_back(std::move(d));
      added = true;
      continue;
    }
    // Described as discovery describes it (its netdevs are in the pod); another kind of
    // function in its slot is not the held device.
    if (!node::DescribePciIdentity(*pci, &fn)) continue;
    fn.driver = pci->driver;
    node::DescribeSriov(*pci, snap, &fn);
    if (DeviceName(fn, false) != h.name) continue;
    next->devices.push_back(MakeDevice(*rc, fn, false, snap));
    added = true;
  }
  if (added) {
    std::sort(next->devices.begin(), next->devices.end(),
              [](const DraDevice& a, const DraDevice& b) { return a.name < b.name; });
  }
}

}  // namespace hcashare::dra
