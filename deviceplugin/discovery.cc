#include "deviceplugin/discovery.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>

#include "common/log.h"
#include "common/sysfs_attr.h"
#include "common/virtual_rdma.h"
#include "deviceplugin/host_uplink.h"

namespace hcashare::dp {
namespace {

constexpr const char* kPciDevices = "/sys/bus/pci/devices";
constexpr const char* kAuxDevices = "/sys/bus/auxiliary/devices";
constexpr const char* kRdmaClass = kRdmaClassDir;
constexpr const char* kNetClass = "/sys/class/net";
constexpr int kMaxVfs = 4096;  // the PCIe limit per PF is 65535; no NIC offers more than this

// True for the char device names that belong to an RDMA device.
bool IsRdmaCharDevice(const std::string& name) {
  return name.rfind("uverbs", 0) == 0 || name.rfind("umad", 0) == 0 || name.rfind("issm", 0) == 0;
}

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

std::string SysfsDirOf(const PciFunction& fn) {
  const char* base = fn.is_virtual ? kRdmaClass : fn.is_sf ? kAuxDevices : kPciDevices;
  return std::string(base) + "/" + fn.address;
}

std::string RdmaSysfsDir(const PciFunction& fn, const std::string& rdma) {
  return fn.is_virtual ? std::string(kRdmaClass) + "/" + rdma
                       : SysfsDirOf(fn) + "/infiniband/" + rdma;
}

std::string NetdevSysfsDir(const PciFunction& fn, const std::string& netdev) {
  return fn.is_virtual ? std::string(kNetClass) + "/" + netdev : SysfsDirOf(fn) + "/net/" + netdev;
}

std::string ParseHexId(const std::string& raw) {
  std::string s = raw;
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) s = s.substr(2);
  if (s.empty() || s.size() > 4) return "";
  for (char& c : s) {
    if (!std::isxdigit(static_cast<unsigned char>(c))) return "";
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return std::string(4 - s.size(), '0') + s;
}

Discoverer::CharDevices Discoverer::CharDevicesOf(
    const std::string& dir, const std::vector<std::string>& rdma_names) const {
  // The uverbs/umad/issm class devices of an RDMA device are children of its PCI device
  // (/sys/devices/.../<bdf>/infiniband_{verbs,mad}/<name>), so each function's own
  // directories are listed instead of indexing the global classes. `ibdev` is read only
  // when the function has several RDMA devices (e.g. switchdev representors).
  CharDevices out;
  for (const char* cls : {"infiniband_verbs", "infiniband_mad"}) {
    auto entries = host_.ListDir(dir + "/" + cls);
    if (!entries.ok()) continue;
    for (const auto& e : *entries) {
      if (!IsRdmaCharDevice(e)) continue;
      std::string owner = rdma_names.front();
      if (rdma_names.size() > 1) {
        auto ibdev = host_.ReadTrimmed(dir + "/" + cls + "/" + e + "/ibdev");
        if (!ibdev.ok()) continue;
        owner = *ibdev;
      }
      out[owner].push_back("/dev/infiniband/" + e);
    }
  }
  for (auto& [name, devs] : out) std::sort(devs.begin(), devs.end());
  return out;
}

Discoverer::CharDevices Discoverer::VirtualCharDevices() const {
  // A virtual RDMA device has no device directory to hold its class devices: they are
  // /sys/devices/virtual/infiniband_{verbs,mad}/<name>, each naming its `ibdev`.
  CharDevices out;
  for (const char* cls : {"/sys/class/infiniband_verbs", "/sys/class/infiniband_mad"}) {
    auto entries = host_.ListDir(cls);
    if (!entries.ok()) continue;
    for (const auto& e : *entries) {
      const std::string link = std::string(cls) + "/" + e;
      auto target = host_.ReadLink(link);
      if (!IsRdmaCharDevice(e) || !target.ok() || !IsVirtualDeviceTarget(*target)) continue;
      auto ibdev = host_.ReadTrimmed(link + "/ibdev");
      if (ibdev.ok()) out[*ibdev].push_back("/dev/infiniband/" + e);
    }
  }
  for (auto& [name, devs] : out) std::sort(devs.begin(), devs.end());
  return out;
}

std::vector<std::string> Discoverer::NetdevsOf(const std::string& dir) const {
  auto names = host_.ListDir(dir + "/net");
  return names.ok() ? *names : std::vector<std::string>{};
}

bool Discoverer::ReadPciIdentity(const std::string& pci_dir, PciFunction* f) const {
  auto cls = host_.ReadTrimmed(pci_dir + "/class");
  if (!cls.ok()) {
    LogDebug("skipping PCI function: no class", {{"dir", pci_dir}});
    return false;
  }
  const std::optional<int64_t> class_code = ParseSysfsInt(*cls, 16);
  f->class_code = class_code && *class_code >= 0 && *class_code <= 0xffffff
                      ? static_cast<uint32_t>(*class_code)
                      : 0;
  if ((f->class_code >> 16) != 0x02) {
    LogDebug("skipping RDMA function that is not a network controller",
             {{"dir", pci_dir}, {"class", *cls}});
    return false;
  }
  f->vendor = ParseHexId(host_.ReadFile(pci_dir + "/vendor").value_or(""));
  f->device = ParseHexId(host_.ReadFile(pci_dir + "/device").value_or(""));
  f->numa_node = ReadNumaNode(host_, pci_dir + "/numa_node");
  return true;
}

bool Discoverer::ReadFunction(const std::string& addr, const std::string& dir, bool aux,
                              bool rdma_cm, PciFunction* out, Exclusion* excluded) const {
  // RDMA first: it is one failed opendir for the many functions without it, so they are
  // skipped before anything else is read.
  auto ibdevs = host_.ListDir(dir + "/infiniband");
  if (!ibdevs.ok() || ibdevs->empty()) {
    LogDebug("skipping device without RDMA", {{"device", addr}});
    return false;
  }
  PciFunction f;
  f.address = addr;
  if (aux) {
    // An SF's directory sits inside its PF's: /sys/devices/.../<pf>/<sf name>.
    auto target = host_.ReadLink(dir);
    const std::string parent =
        target.ok() ? BaseName(target->substr(0, target->find_last_of('/'))) : "";
    if (parent.empty() || !ReadPciIdentity(std::string(kPciDevices) + "/" + parent, &f)) {
      LogDebug("skipping auxiliary RDMA device without a PCI network parent", {{"device", addr}});
      return false;
    }
    f.is_sf = true;
    f.pf_address = parent;
    f.pf_netdevs = NetdevsOf(std::string(kPciDevices) + "/" + parent);
    const std::optional<int64_t> sfnum = ReadSysfsInt(host_, dir + "/sfnum");
    if (sfnum && *sfnum >= 0 && *sfnum <= std::numeric_limits<int>::max()) {
      f.sf_num = static_cast<int>(*sfnum);
    }
  } else if (!ReadPciIdentity(dir, &f)) {
    return false;
  }
  auto driver = host_.ReadLink(dir + "/driver");
  if (!driver.ok()) {
    LogDebug("skipping RDMA function without a bound driver", {{"device", addr}});
    return false;
  }
  f.driver = BaseName(*driver);
  f.netdevs = NetdevsOf(dir);
  for (const auto& nd : f.netdevs) {
    auto t = host_.ReadTrimmed(dir + "/net/" + nd + "/type");
    if (t.ok()) AddUnique(&f.link_types, LinkTypeFromArp(*t));
  }
  if (aux) {
    // pf_address and pf_netdevs are the parent's (above).
  } else if (auto pf = host_.ReadLink(dir + "/physfn"); pf.ok()) {
    f.is_vf = true;
    f.pf_address = BaseName(*pf);
    f.pf_netdevs = NetdevsOf(std::string(kPciDevices) + "/" + f.pf_address);
    f.vf_index = ReadVfIndex(host_, f.pf_address, addr);
  } else {
    f.pf_netdevs = f.netdevs;
    // The kernel links virtfn0..N-1 for N enabled VFs; a tree without sriov_numvfs still
    // shows them.
    const std::optional<int64_t> vfs = ReadSysfsInt(host_, dir + "/sriov_numvfs");
    if (vfs && *vfs > 0 && *vfs <= std::numeric_limits<int>::max()) {
      f.num_vfs = static_cast<int>(*vfs);
    } else {
      while (f.num_vfs < kMaxVfs && host_.Exists(dir + "/virtfn" + std::to_string(f.num_vfs))) {
        ++f.num_vfs;
      }
    }
  }

  if (!ReadRdmaDevices(dir + "/infiniband", *ibdevs, CharDevicesOf(dir, *ibdevs), rdma_cm, &f,
                       excluded)) {
    return false;
  }
  *out = std::move(f);
  return true;
}

bool Discoverer::ReadVirtual(const VirtualRdmaDevice& dev, const CharDevices& chardevs,
                             bool rdma_cm, PciFunction* out, Exclusion* excluded) const {
  PciFunction f;
  f.address = dev.name;
  f.is_virtual = true;
  const std::string& netdev = dev.netdev;
  if (!netdev.empty()) {
    f.netdevs = {netdev};
    const std::string ndir = std::string(kNetClass) + "/" + netdev;
    if (auto t = host_.ReadTrimmed(ndir + "/type"); t.ok()) {
      f.link_types.push_back(LinkTypeFromArp(*t));
    }
    // The netdev's own device (e.g. an SR-IOV VF) places it; a veth has no NUMA node.
    f.numa_node = ReadNumaNode(host_, ndir + "/device/numa_node");
  }
  if (!ReadRdmaDevices(kRdmaClass, {dev.name}, chardevs, rdma_cm, &f, excluded)) return false;
  *out = std::move(f);
  return true;
}

void Discoverer::ScanVirtual(Inventory* inv) const {
  const std::vector<VirtualRdmaDevice> devices = ListVirtualRdmaDevices(host_);
  if (devices.empty()) return;
  const CharDevices chardevs = VirtualCharDevices();
  for (const auto& dev : devices) {
    inv->present.insert(dev.name);
    PciFunction f;
    Exclusion ex;
    if (ReadVirtual(dev, chardevs, inv->rdma_cm_present, &f, &ex)) {
      inv->functions.push_back(std::move(f));
    } else if (!ex.address.empty()) {
      inv->excluded.push_back(std::move(ex));
    }
  }
}

bool Discoverer::ReadRdmaDevices(const std::string& rdma_dir, const std::vector<std::string>& names,
                                 const CharDevices& chardevs, bool rdma_cm, PciFunction* f,
                                 Exclusion* excluded) const {
  std::vector<std::string> missing;
  for (const auto& name : names) {
    RdmaDeviceInfo info;
    info.name = name;
    auto it = chardevs.find(name);
    if (it != chardevs.end()) info.char_devices = it->second;
    auto ports = host_.ListDir(rdma_dir + "/" + name + "/ports");
    if (ports.ok()) {
      info.ports = *ports;
      for (const auto& p : *ports) {
        auto ll = host_.ReadTrimmed(rdma_dir + "/" + name + "/ports/" + p + "/link_layer");
        if (ll.ok()) {
          info.link_layers.push_back(LinkTypeFromLayer(*ll));
          AddUnique(&f->link_types, LinkTypeFromLayer(*ll));
        }
      }
    }
    // uverbs is required; umad/issm are optional and dropped when their node is missing.
    bool has_uverbs = false;
    bool uverbs_node_missing = false;
    std::vector<std::string> present;
    for (const auto& cd : info.char_devices) {
      const bool is_uverbs = BaseName(cd).rfind("uverbs", 0) == 0;
      if (!host_.Exists(cd)) {
        if (is_uverbs) {
          missing.push_back(cd + " (listed in sysfs, but the device node is missing)");
          uverbs_node_missing = true;
        }
        continue;
      }
      present.push_back(cd);
      has_uverbs = has_uverbs || is_uverbs;
    }
    info.char_devices = std::move(present);
    if (!has_uverbs && !uverbs_node_missing) {
      missing.push_back("uverbs char device of " + name + " (is ib_uverbs loaded?)");
    }
    f->rdma.push_back(std::move(info));
  }
  if (!rdma_cm) missing.push_back(std::string(kRdmaCmPath) + " (is rdma_ucm loaded?)");
  std::sort(f->link_types.begin(), f->link_types.end());
  if (!missing.empty()) {
    excluded->address = f->address;
    excluded->reason = "missing required RDMA char device(s): ";
    for (size_t i = 0; i < missing.size(); ++i) {
      excluded->reason += (i ? ", " : "") + missing[i];
    }
    return false;
  }
  RefreshHealth(f);
  return true;
}

void Discoverer::RefreshHealth(PciFunction* fn) const {
  std::string reason;
  auto add = [&reason](const std::string& what) { reason += (reason.empty() ? "" : "; ") + what; };
  // A function or device node that vanished without a uevent: Unhealthy at once.
  fn->gone = false;
  if (!host_.Exists(SysfsDirOf(*fn))) {
    add("function " + fn->address + " vanished");
    fn->gone = true;
  }
  for (const auto& r : fn->rdma) {
    for (const auto& cd : r.char_devices) {
      if (!fn->gone && !host_.Exists(cd)) {
        add("device node " + cd + " vanished");
        fn->gone = true;
      }
    }
  }
  if (fn->gone) {
    fn->healthy = false;
    fn->health_reason = reason;
    return;
  }
  // An idle VF or SF is commonly admin-down on the host (the CNI hands it back down), and
  // an Ethernet one's RDMA port follows that netdev. What makes it unusable is its PF's
  // physical port; an InfiniBand VF has its own port state on the fabric.
  const bool delegated = fn->is_vf || fn->is_sf;
  const bool infiniband =
      std::find(fn->link_types.begin(), fn->link_types.end(), "infiniband") != fn->link_types.end();
  if (!delegated || infiniband) {
    for (const auto& r : fn->rdma) {
      const std::string ports_dir = RdmaSysfsDir(*fn, r.name) + "/ports";
      for (const auto& p : r.ports) {
        // "4: ACTIVE"; unreadable (e.g. moved into a pod) counts as no news.
        auto state = host_.ReadTrimmed(ports_dir + "/" + p + "/state");
        if (state.ok() && state->find("ACTIVE") == std::string::npos) {
          add(r.name + " port " + p + " is " + *state);
        }
      }
    }
  }
  auto check_netdev = [&](const std::string& dir, const std::string& what) {
    auto oper = host_.ReadTrimmed(dir + "/operstate");
    if (oper.ok() && (*oper == "down" || *oper == "lowerlayerdown" || *oper == "notpresent")) {
      add(what + " is " + *oper);
    }
  };
  if (!delegated) {
    for (const auto& nd : fn->netdevs) check_netdev(NetdevSysfsDir(*fn, nd), "netdev " + nd);
  } else if (!infiniband) {
    const std::string pf_dir = std::string(kPciDevices) + "/" + fn->pf_address + "/net/";
    for (const auto& nd : fn->pf_netdevs) check_netdev(pf_dir + nd, "PF netdev " + nd);
  }
  fn->healthy = reason.empty();
  fn->health_reason = reason;
}

Inventory Discoverer::Scan() const {
  Inventory inv;
  inv.rdma_cm_present = host_.Exists(kRdmaCmPath);
  auto addrs = host_.ListDir(kPciDevices);
  if (!addrs.ok()) {
    LogDebug("cannot list PCI devices", {{"error", addrs.status().ToString()}});
    return inv;
  }
  inv.present.insert(addrs->begin(), addrs->end());
  auto scan = [&](const std::vector<std::string>& ids, const char* bus, bool aux) {
    for (const auto& id : ids) {
      PciFunction f;
      Exclusion ex;
      if (ReadFunction(id, std::string(bus) + "/" + id, aux, inv.rdma_cm_present, &f, &ex)) {
        inv.functions.push_back(std::move(f));
      } else if (!ex.address.empty()) {
        inv.excluded.push_back(std::move(ex));
      }
    }
  };
  scan(*addrs, kPciDevices, false);
  // Scalable functions: auxiliary devices with RDMA (a missing bus is no error).
  const size_t pci_count = inv.functions.size() + inv.excluded.size();
  if (auto aux = host_.ListDir(kAuxDevices); aux.ok() && !aux->empty()) {
    inv.present.insert(aux->begin(), aux->end());
    scan(*aux, kAuxDevices, true);
  }
  ScanVirtual(&inv);
  const std::set<std::string> default_route = DefaultRouteNetdevs(host_);
  for (auto& f : inv.functions) {
    for (const auto& nd : f.netdevs) {
      if (CarriesDefaultRoute(host_, nd, default_route)) f.host_uplink = true;
    }
  }
  if (inv.functions.size() + inv.excluded.size() != pci_count) {
    auto by_address = [](const auto& a, const auto& b) { return a.address < b.address; };
    std::sort(inv.functions.begin(), inv.functions.end(), by_address);
    std::sort(inv.excluded.begin(), inv.excluded.end(), by_address);
  }
  return inv;
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

}  // namespace hcashare::dp
