#include "tools/discover_report.h"

#include <algorithm>
#include <set>

#include "common/strings.h"
#include "deviceplugin/allocation.h"
#include "deviceplugin/cdi.h"
#include "hostfacts/snapshot_host.h"

namespace hcashare::cli {
namespace {

// The reason the daemon gives shared pools while the netns mode is exclusive.
constexpr const char* kBlockedExclusive =
    "RDMA netns mode is exclusive: RDMA devices cannot be shared across pods (run `rdma system "
    "set netns shared`, or use an exclusive-mode resource)";

std::string Label(const dp::PciFunction& fn) {
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
std::vector<ExcludedDevice> Unusable(const dp::Inventory& inv,
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

}  // namespace

DiscoverReport BuildDiscoverReport(const config::PluginConfig& config,
                                   const hostfacts::HostSnapshot& snap, bool use_cdi) {
  DiscoverReport report;
  report.netns_mode = !snap.rdma_netns_mode.empty()
                          ? snap.rdma_netns_mode
                          : "unknown (" + snap.rdma_netns_error + "; assuming shared)";
  const bool exclusive_ns = snap.rdma_netns_mode == "exclusive";
  report.inventory = dp::Discover(snap);
  const std::vector<ExcludedDevice> unusable = Unusable(report.inventory, snap);
  const std::unique_ptr<Host> host = hostfacts::NewSnapshotHost(snap);
  for (const auto& rc : config.resources) {
    ResourceReport r;
    r.rc = rc;
    const bool shared = rc.mode == config::PoolMode::kShared;
    r.pool = dp::BuildPool(rc, report.inventory, shared && exclusive_ns ? kBlockedExclusive : "");
    r.devices = dp::DeviceList(rc, r.pool);
    r.allocations = Allocate(r, *host, use_cdi);
    r.excluded = unusable;
    for (const auto& fn : report.inventory.functions) {
      if (r.pool.Find(fn.address) != nullptr) continue;
      if (auto why = WhyNotSelected(rc, fn)) r.excluded.push_back({fn.address, Label(fn), *why});
    }
    report.resources.push_back(std::move(r));
  }
  return report;
}

}  // namespace hcashare::cli
