#include "tools/discover_report.h"

#include <algorithm>
#include <set>

#include "common/strings.h"
#include "deviceplugin/allocation.h"
#include "deviceplugin/cdi.h"
#include "hostfacts/snapshot_host.h"
#include "node/dra_owned.h"

namespace hcashare::cli {
namespace {

// The reason the daemon gives shared pools while the netns mode is exclusive.
constexpr const char* kBlockedExclusive =
    "RDMA netns mode is exclusive: RDMA devices cannot be shared across pods (run `rdma system "
    "set netns shared`, or use an exclusive-mode resource)";

std::string Label(const node::PciFunction& fn) {
  std::vector<std::string> parts;
  for (const auto& r : fn.rdma) parts.push_back(r.name);
  parts.insert(parts.end(), fn.netdevs.begin(), fn.netdevs.end());
  return Join(parts, " ");
}

// The label of a function that discovery did not yield: its netdevs, if any.
std::string LabelOf(const hostfacts::HostSnapshot& snap, const std::string& address) {
  const hostfacts::PciFunction* f = snap.FindPci(address);
  return f != nullptr ? Join(f->netdevs, " ") : "";
}

// "0,1" for a device's topology, "" for none.
std::string TopologyKey(const v1beta1::Device& d) {
  std::string out;
  for (const auto& n : d.topology().nodes()) {
    out += (out.empty() ? "" : ",") + std::to_string(n.id());
  }
  return out;
}

// Devices kept out of every pool by discovery itself (not usable, or not RDMA at all).
std::vector<ExcludedDevice> Unusable(const node::Inventory& inv,
                                     const hostfacts::HostSnapshot& snap) {
  std::vector<ExcludedDevice> out;
  std::set<std::string> seen;
  for (const auto& f : inv.functions) seen.insert(f.address);
  for (const auto& e : inv.excluded) {
    seen.insert(e.address);
    out.push_back({e.address, LabelOf(snap, e.address), {"requirement", e.reason}});
  }
  for (const auto& addr : inv.present) {
    if (seen.count(addr)) continue;
    if (auto why = WhyNotDiscovered(inv, addr)) {
      out.push_back({addr, LabelOf(snap, addr), *why});
    }
  }
  std::sort(out.begin(), out.end(),
            [](const auto& a, const auto& b) { return a.address < b.address; });
  return out;
}

std::vector<AllocationView> Allocate(const ResourceReport& r, const Host& host, bool use_cdi) {
  std::vector<AllocationView> out;
  std::set<std::string> topologies;
  for (const auto& d : r.devices) {
    if (!topologies.insert(TopologyKey(d)).second) continue;
    v1beta1::AllocateRequest req;
    req.add_container_requests()->add_devices_ids(d.id());
    AllocationView view;
    view.ids = {d.id()};
    auto resp = dp::BuildAllocateResponse(r.rc, r.pool, req, host);
    if (resp.ok()) {
      view.response = std::move(resp).value();
      if (use_cdi) dp::ApplyCdi(r.rc, r.pool, req, &view.response);
    } else {
      view.status = resp.status();
    }
    out.push_back(std::move(view));
  }
  return out;
}

// The pool view of DRA resource `full_name`: the functions of its devices (collected in
// `devices`) and its refusals.
node::PoolState DraPool(const dra::DraInventory& inv, const std::string& full_name,
                        std::vector<dra::DraDevice>* devices) {
  node::PoolState pool;
  for (const dra::DraDevice& d : inv.devices) {
    if (d.resource.FullName() != full_name) continue;
    devices->push_back(d);
    pool.hcas.push_back(d.fn);
  }
  std::sort(
      pool.hcas.begin(), pool.hcas.end(),
      [](const node::PciFunction& a, const node::PciFunction& b) { return a.address < b.address; });
  for (const dra::DraRefusal& r : inv.refused) {
    if (r.resource == full_name) pool.refused.push_back({r.address, r.reason});
  }
  return pool;
}

// The refusal of `address` in `pool`, or null.
const node::Exclusion* RefusalOf(const node::PoolState& pool, const std::string& address) {
  for (const node::Exclusion& e : pool.refused) {
    if (e.address == address) return &e;
  }
  return nullptr;
}

}  // namespace

DiscoverReport BuildDiscoverReport(const config::PluginConfig& config,
                                   const hostfacts::HostSnapshot& snap, bool use_cdi) {
  DiscoverReport report;
  report.netns_mode = !snap.rdma_netns_mode.empty()
                          ? snap.rdma_netns_mode
                          : "unknown (" + snap.rdma_netns_error + "; assuming shared)";
  const bool exclusive_ns = snap.rdma_netns_mode == "exclusive";
  report.inventory = node::Discover(snap);
  const std::vector<ExcludedDevice> unusable = Unusable(report.inventory, snap);
  const std::unique_ptr<Host> host = hostfacts::NewSnapshotHost(snap);
  report.dra_driver = config.dra_driver;
  report.dra = dra::SelectDraDevices(config, report.inventory, snap);
  const node::DraOwners dra_owned = node::DraOwnedFunctions(config, report.inventory);
  for (const auto& rc : config.resources) {
    ResourceReport r;
    r.rc = rc;
    if (rc.api == config::ResourceApi::kDra) {
      r.pool = DraPool(report.dra, rc.FullName(), &r.dra_devices);
    } else {
      const bool shared = rc.mode == config::PoolMode::kShared;
      r.pool =
          node::BuildPool(rc, report.inventory, shared && exclusive_ns ? kBlockedExclusive : "");
      node::RefuseDraOwned(dra_owned, &r.pool);
      r.devices = dp::DeviceList(rc, r.pool);
      r.allocations = Allocate(r, *host, use_cdi);
    }
    r.excluded = unusable;
    for (const auto& fn : report.inventory.functions) {
      if (r.pool.Find(fn.address) != nullptr) continue;
      if (auto why = WhyNotSelected(rc, fn)) {
        r.excluded.push_back({fn.address, Label(fn), *why});
      } else if (const node::Exclusion* refusal = RefusalOf(r.pool, fn.address)) {
        // Selected, but offered through the other API or not nameable as a DRA device.
        r.excluded.push_back({fn.address, Label(fn), {"dra", refusal->reason}});
      }
    }
    report.resources.push_back(std::move(r));
  }
  return report;
}

}  // namespace hcashare::cli
