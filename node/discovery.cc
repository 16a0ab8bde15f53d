#include "node/discovery.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>

#include "common/log.h"
#include "common/strings.h"
#include "hostfacts/live.h"
#include "hostfacts/reader.h"
#include "hostfacts/uplink.h"

namespace hcashare::node {
namespace {

using hostfacts::HostSnapshot;

// Maps a netdev ARPHRD type (sysfs `type`) to a link type name.
std::string LinkTypeFromArp(const std::string& t) {
  if (t == "1") return "ether";
  if (t == "32") return "infiniband";
  return "arphrd_" + t;
}

// Maps an RDMA port link_layer ("InfiniBand", "Ethernet") to a link type name.
std::string LinkTypeFromLayer(const std::string& l) {
  if (l == "InfiniBand") return "infiniband";
  if (l == "Ethernet") return "ether";
  return l;
}

void AddUnique(std::vector<std::string>* v, const std::string& s) {
  if (std::find(v->begin(), v->end(), s) == v->end()) v->push_back(s);
}

}  // namespace

bool PciFunction::operator==(const PciFunction& o) const {
  return address == o.address && vendor == o.vendor && device == o.device &&
         class_code == o.class_code && numa_node == o.numa_node && driver == o.driver &&
         netdevs == o.netdevs && link_types == o.link_types && rdma == o.rdma && is_vf == o.is_vf &&
         is_sf == o.is_sf && sf_num == o.sf_num && pf_address == o.pf_address &&
         vf_index == o.vf_index && pf_netdevs == o.pf_netdevs && is_virtual == o.is_virtual &&
         num_vfs == o.num_vfs && host_uplink == o.host_uplink && healthy == o.healthy &&
         health_reason == o.health_reason && gone == o.gone;
}

hostfacts::DeviceRef DeviceOf(const PciFunction& fn) {
  using hostfacts::DeviceBus;
  return {fn.address, fn.is_virtual ? DeviceBus::kVirtualRdma
                      : fn.is_sf    ? DeviceBus::kAux
                                    : DeviceBus::kPci};
}

namespace {

// What makes `fn` unhealthy, by the health rule (docs/architecture.md): for a PF or a
// virtual device every RDMA port ACTIVE and no netdev down; an idle VF or SF is commonly
// admin-down on the host (the CNI hands it back down), and an Ethernet one's RDMA port
// follows that netdev, so what makes it unusable is its PF's physical port; an InfiniBand VF
// has its own port state on the fabric. `port_state(rdma, port)` and `operstate(dir)` give
// the current values ("" when unreadable, which counts as no news); `operstate(pf, netdev)`
// is asked about a netdev of `fn`, or of its PF when `pf`.
template <typename PortState, typename OperState>
std::string HealthProblems(const PciFunction& fn, PortState port_state, OperState operstate) {
  std::string reason;
  auto add = [&reason](const std::string& what) { reason += (reason.empty() ? "" : "; ") + what; };
  const bool delegated = fn.is_vf || fn.is_sf;
  const bool infiniband =
      std::find(fn.link_types.begin(), fn.link_types.end(), "infiniband") != fn.link_types.end();
  if (!delegated || infiniband) {
    for (const auto& r : fn.rdma) {
      for (const auto& p : r.ports) {
        const std::string state = port_state(r.name, p);
        if (!state.empty() && state.find("ACTIVE") == std::string::npos) {
          add(r.name + " port " + p + " is " + state);
        }
      }
    }
  }
  auto check_netdev = [&](bool pf, const std::string& netdev, const std::string& what) {
    const std::string oper = operstate(pf, netdev);
    if (oper == "down" || oper == "lowerlayerdown" || oper == "notpresent") {
      add(what + " is " + oper);
    }
  };
  if (!delegated) {
    for (const auto& nd : fn.netdevs) check_netdev(false, nd, "netdev " + nd);
  } else if (!infiniband) {
    for (const auto& nd : fn.pf_netdevs) check_netdev(true, nd, "PF netdev " + nd);
  }
  return reason;
}

// The view of one snapshot.
class View {
 public:
  explicit View(const HostSnapshot& snap) : snap_(snap) {}

  Inventory Run();

 private:
  // Adds the link types of netdevs `names`.
  void NetdevTypes(const std::vector<std::string>& names, PciFunction* f) const;
  // Fills f->rdma from RDMA devices `names`; false (and `excluded` filled) when a required
  // char device is missing. Then computes health.
  bool Rdma(const std::vector<std::string>& names, PciFunction* f, Exclusion* excluded) const;
  bool NodePresent(const std::string& path) const;
  void Pci(const hostfacts::PciFunction& pci);
  void Aux(const hostfacts::AuxDevice& aux);
  void Virtual(const hostfacts::RdmaDevice& dev);
  void Add(bool ok, PciFunction f, Exclusion ex);
  void NotOffered(const std::string& address, const std::string& reason) {
    inv_.not_offered.push_back({address, reason});
  }

  const HostSnapshot& snap_;
  Inventory inv_;
};

}  // namespace

bool DescribePciIdentity(const hostfacts::PciFunction& pci, PciFunction* f) {
  if (pci.class_code < 0) return false;
  f->class_code = static_cast<uint32_t>(pci.class_code);
  if ((f->class_code >> 16) != 0x02) return false;
  f->vendor = pci.vendor;
  f->device = pci.device;
  f->numa_node = pci.numa_node;
  return true;
}

void DescribeSriov(const hostfacts::PciFunction& pci, const hostfacts::HostSnapshot& snap,
                   PciFunction* f) {
  if (!pci.physfn.empty()) {
    f->is_vf = true;
    f->pf_address = pci.physfn;
    if (const hostfacts::PciFunction* pf = snap.FindPci(pci.physfn)) {
      f->pf_netdevs = pf->netdevs;
      for (const auto& [index, vf] : pf->virtfns) {
        if (vf == pci.address) f->vf_index = index;
      }
    }
    return;
  }
  f->pf_netdevs = f->netdevs;
  // The kernel links virtfn0..N-1 for N enabled VFs; a tree without sriov_numvfs still
  // shows them.
  if (pci.sriov_numvfs > 0) {
    f->num_vfs = pci.sriov_numvfs;
  } else {
    while (pci.virtfns.count(f->num_vfs)) ++f->num_vfs;
  }
}

namespace {

void View::NetdevTypes(const std::vector<std::string>& names, PciFunction* f) const {
  for (const auto& nd : names) {
    const hostfacts::Netdev* n = snap_.FindNetdev(nd);
    if (n != nullptr && !n->arp_type.empty())
      AddUnique(&f->link_types, LinkTypeFromArp(n->arp_type));
  }
}

bool View::NodePresent(const std::string& path) const {
  const std::string prefix = "/dev/infiniband/";
  if (path.rfind(prefix, 0) != 0) return false;
  return std::binary_search(snap_.dev_infiniband.begin(), snap_.dev_infiniband.end(),
                            path.substr(prefix.size()));
}

bool View::Rdma(const std::vector<std::string>& names, PciFunction* f, Exclusion* excluded) const {
  std::vector<std::string> missing;
  for (const auto& name : names) {
    const hostfacts::RdmaDevice* dev = snap_.FindRdma(name);
    RdmaDeviceInfo info;
    info.name = name;
    if (dev != nullptr) {
      for (const auto& p : dev->ports) {
        info.ports.push_back(p.number);
        if (p.link_layer.empty()) continue;
        info.link_layers.push_back(LinkTypeFromLayer(p.link_layer));
        AddUnique(&f->link_types, LinkTypeFromLayer(p.link_layer));
      }
    }
    // uverbs is required; umad/issm are optional and dropped when their node is missing.
    bool has_uverbs = false;
    bool uverbs_node_missing = false;
    for (const auto& cd : dev != nullptr ? dev->char_devices : std::vector<std::string>{}) {
      const bool is_uverbs = BaseName(cd).rfind("uverbs", 0) == 0;
      if (!NodePresent(cd)) {
        if (is_uverbs) {
          missing.push_back(cd + " (listed in sysfs, but the device node is missing)");
          uverbs_node_missing = true;
        }
        continue;
      }
      info.char_devices.push_back(cd);
      has_uverbs = has_uverbs || is_uverbs;
    }
    if (!has_uverbs && !uverbs_node_missing) {
      missing.push_back("uverbs char device of " + name + " (is ib_uverbs loaded?)");
    }
    f->rdma.push_back(std::move(info));
  }
  if (!snap_.rdma_cm_present)
    missing.push_back(std::string(kRdmaCmPath) + " (is rdma_ucm loaded?)");
  std::sort(f->link_types.begin(), f->link_types.end());
  if (!missing.empty()) {
    excluded->address = f->address;
    excluded->reason = "missing required RDMA char device(s): " + Join(missing, ", ");
    return false;
  }
  f->health_reason = HealthProblems(
      *f,
      [this](const std::string& rdma, const std::string& port) {
        const hostfacts::RdmaDevice* d = snap_.FindRdma(rdma);
        if (d == nullptr) return std::string();
        for (const auto& p : d->ports) {
          if (p.number == port) return p.state;
        }
        return std::string();
      },
      [this](bool /*pf*/, const std::string& netdev) {
        const hostfacts::Netdev* n = snap_.FindNetdev(netdev);
        return n != nullptr ? n->operstate : std::string();
      });
  f->healthy = f->health_reason.empty();
  return true;
}

void View::Add(bool ok, PciFunction f, Exclusion ex) {
  if (ok) {
    inv_.functions.push_back(std::move(f));
  } else if (!ex.address.empty()) {
    inv_.excluded.push_back(std::move(ex));
  }
}

void View::Pci(const hostfacts::PciFunction& pci) {
  // Discovery's requirements, in order: an RDMA device, a network controller, a driver.
  const bool network = pci.class_code >= 0 && (pci.class_code >> 16) == 0x02;
  if (pci.rdma_devices.empty()) {
    if (network) {
      NotOffered(pci.address,
                 "no RDMA device (not RDMA-capable, or its RDMA driver, e.g. mlx5_ib, is not "
                 "loaded)");
    }
    return;
  }
  if (pci.class_code < 0) {
    LogDebug("skipping PCI function: no class", {{"pci", pci.address}});
    return;
  }
  PciFunction f;
  f.address = pci.address;
  if (!DescribePciIdentity(pci, &f)) {
    char cls[16];
    std::snprintf(cls, sizeof cls, "0x%06x", static_cast<unsigned>(pci.class_code));
    NotOffered(pci.address, std::string("not a network controller (class ") + cls + ")");
    return;
  }
  if (pci.driver.empty()) {
    NotOffered(pci.address, "not bound to a driver");
    return;
  }
  f.driver = pci.driver;
  f.netdevs = pci.netdevs;
  NetdevTypes(f.netdevs, &f);
  DescribeSriov(pci, snap_, &f);
  Exclusion ex;
  const bool ok = Rdma(pci.rdma_devices, &f, &ex);
  Add(ok, std::move(f), std::move(ex));
}

void View::Aux(const hostfacts::AuxDevice& aux) {
  if (aux.rdma_devices.empty()) return;
  PciFunction f;
  f.address = aux.name;
  // An SF has its parent PF's identity.
  const hostfacts::PciFunction* parent = snap_.FindPci(aux.parent);
  if (parent == nullptr || !DescribePciIdentity(*parent, &f)) {
    LogDebug("skipping auxiliary RDMA device without a PCI network parent", {{"device", aux.name}});
    return;
  }
  if (aux.driver.empty()) {
    LogDebug("skipping RDMA function without a bound driver", {{"device", aux.name}});
    return;
  }
  f.is_sf = true;
  f.pf_address = aux.parent;
  f.pf_netdevs = parent->netdevs;
  f.sf_num = aux.sf_num;
  f.driver = aux.driver;
  f.netdevs = aux.netdevs;
  NetdevTypes(f.netdevs, &f);
  Exclusion ex;
  const bool ok = Rdma(aux.rdma_devices, &f, &ex);
  Add(ok, std::move(f), std::move(ex));
}

void View::Virtual(const hostfacts::RdmaDevice& dev) {
  inv_.present.insert(dev.name);
  PciFunction f;
  f.address = dev.name;
  f.is_virtual = true;
  if (!dev.netdev.empty()) {
    f.netdevs = {dev.netdev};
    NetdevTypes(f.netdevs, &f);
    // The netdev's own device (e.g. an SR-IOV VF) places it; a veth has no NUMA node.
    const hostfacts::Netdev* nd = snap_.FindNetdev(dev.netdev);
    const hostfacts::PciFunction* pci = nd != nullptr ? snap_.FindPci(nd->device) : nullptr;
    if (pci != nullptr) f.numa_node = pci->numa_node;
  }
  Exclusion ex;
  const bool ok = Rdma({dev.name}, &f, &ex);
  Add(ok, std::move(f), std::move(ex));
}

Inventory View::Run() {
  inv_.rdma_cm_present = snap_.rdma_cm_present;
  if (!snap_.pci_listed) {
    LogDebug("cannot list PCI devices");
    return std::move(inv_);
  }
  for (const auto& pci : snap_.pci) {
    inv_.present.insert(pci.address);
    Pci(pci);
  }
  for (const auto& aux : snap_.aux) {
    inv_.present.insert(aux.name);
    Aux(aux);
  }
  for (const auto& r : snap_.rdma) {
    if (r.is_virtual) Virtual(r);
  }
  for (auto& f : inv_.functions) {
    for (const auto& nd : f.netdevs) {
      if (hostfacts::CarriesDefaultRoute(snap_, nd)) f.host_uplink = true;
    }
  }
  auto by_address = [](const auto& a, const auto& b) { return a.address < b.address; };
  std::sort(inv_.functions.begin(), inv_.functions.end(), by_address);
  std::sort(inv_.excluded.begin(), inv_.excluded.end(), by_address);
  std::sort(inv_.not_offered.begin(), inv_.not_offered.end(), by_address);
  return std::move(inv_);
}

}  // namespace

Inventory Discover(const HostSnapshot& snap) { return View(snap).Run(); }

Inventory Discoverer::Scan(hostfacts::HostSnapshot* snapshot) const {
  hostfacts::ReadOptions opts;
  opts.all_functions = false;
  hostfacts::HostSnapshot snap = hostfacts::ReadHostSnapshot(host_, opts);
  Inventory inv = Discover(snap);
  if (snapshot != nullptr) *snapshot = std::move(snap);
  return inv;
}

void Discoverer::RefreshHealth(PciFunction* fn) const {
  // A function or device node that vanished without a uevent: Unhealthy at once.
  fn->gone = false;
  std::string reason;
  const hostfacts::LiveFacts live(host_);
  const hostfacts::DeviceRef dev = DeviceOf(*fn);
  if (!live.DevicePresent(dev)) {
    reason = "function " + fn->address + " vanished";
    fn->gone = true;
  }
  for (const auto& r : fn->rdma) {
    for (const auto& cd : r.char_devices) {
      if (!fn->gone && !live.CharDevicePresent(cd)) {
        reason = "device node " + cd + " vanished";
        fn->gone = true;
      }
    }
  }
  if (!fn->gone) {
    reason = HealthProblems(
        *fn,
        [&](const std::string& rdma, const std::string& port) {
          return live.PortState(dev, rdma, port);
        },
        [&](bool pf, const std::string& netdev) {
          return live.OperState(pf ? hostfacts::DeviceRef{fn->pf_address} : dev, netdev);
        });
  }
  fn->healthy = reason.empty();
  fn->health_reason = reason;
}

void ExclusionReporter::Report(const std::vector<Exclusion>& excluded) {
  std::map<std::string, std::string> now;
  for (const auto& e : excluded) {
    now[e.address] = e.reason;
    auto it = last_.find(e.address);
    if (it == last_.end() || it->second != e.reason) {
      LogWarn("RDMA device excluded", {{"pci", e.address}, {"reason", e.reason}});
    }
  }
  for (const auto& [addr, reason] : last_) {
    if (!now.count(addr)) LogInfo("RDMA device no longer excluded", {{"pci", addr}});
  }
  last_ = std::move(now);
}

}  // namespace hcashare::node
