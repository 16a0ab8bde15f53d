#include "hostfacts/reader.h"

#include <algorithm>
#include <set>

#include "hostfacts/attrs.h"
#include "hostfacts/live.h"
#include "hostfacts/platform.h"
#include "hostfacts/routes.h"

namespace hcashare::hostfacts {
namespace {

constexpr const char* kPciDevices = "/sys/bus/pci/devices/";
constexpr const char* kAuxDevices = "/sys/bus/auxiliary/devices/";
constexpr const char* kRdmaClass = "/sys/class/infiniband/";
constexpr const char* kNetClass = "/sys/class/net/";
constexpr const char* kDevInfiniband = "/dev/infiniband";
constexpr const char* kIommuGroups = "/sys/kernel/iommu_groups/";
constexpr int kMaxUpperDepth = 4;  // bond on VLAN on macvlan on ...: deeper is not a node's

// The last component of the symlink at `path`; "" when it is not one.
std::string LinkName(const Host& host, const std::string& path) {
  auto target = host.ReadLink(path);
  return target.ok() ? BaseName(*target) : "";
}

// Where the /sys/bus link at `path` points, host-absolute ("/sys/devices/pci0000:3a/..."):
// its relative target joined lexically (one readlink, where realpath(3) stats every
// component); RealPath when it is not a symlink; "" when neither resolves.
std::string BusLinkTarget(const Host& host, const std::string& path) {
  auto target = host.ReadLink(path);
  if (!target.ok() || target->empty() || (*target)[0] == '/') {
    return host.RealPath(path).value_or("");
  }
  std::vector<std::string> parts;
  const std::string joined = path.substr(0, path.rfind('/') + 1) + *target;
  size_t start = 0;
  while (start <= joined.size()) {
    size_t end = joined.find('/', start);
    if (end == std::string::npos) end = joined.size();
    const std::string part = joined.substr(start, end - start);
    if (part == "..") {
      if (!parts.empty()) parts.pop_back();
    } else if (!part.empty() && part != ".") {
      parts.push_back(part);
    }
    start = end + 1;
  }
  std::string out;
  for (const auto& p : parts) out += "/" + p;
  return out;
}

// True for a PCI address directory name ("0000:3a:00.0"), as opposed to a host bridge's
// ("pci0000:3a").
bool IsBdfName(const std::string& name) {
  return name.size() >= 12 && name[name.size() - 2] == '.' && name[name.size() - 5] == ':' &&
         name.rfind("pci", 0) != 0;
}

// True for the char device names that belong to an RDMA device.
bool IsRdmaCharDevice(const std::string& name) {
  return name.rfind("uverbs", 0) == 0 || name.rfind("umad", 0) == 0 || name.rfind("issm", 0) == 0;
}

// True when a class link target (e.g. "../../devices/virtual/infiniband/rxe0") lies under
// /sys/devices/virtual, i.e. the device has no parent device.
bool IsVirtualTarget(const std::string& link_target) {
  return link_target.find("/devices/virtual/") != std::string::npos;
}

// Accumulates one read. Keyed containers keep each device once.
class Reader {
 public:
  Reader(const Host& host, const ReadOptions& opts) : host_(host), opts_(opts) {}

  // Reads PCI function `addr` (its details when `force_details` or by its class) and what
  // hangs off it: netdevs, RDMA devices and their char devices.
  const PciFunction& ReadPci(const std::string& addr, bool force_details);
  // Reads auxiliary device `name`, what hangs off it, and its parent PCI function.
  const AuxDevice& ReadAux(const std::string& name);
  // Reads the virtual RDMA devices of the class listing (listed first when `list_class`).
  void ReadVirtualRdma(bool list_class = false);
  void ReadRestOfRdmaClass();
  // The netdevs with a default route; from then on netdevs are read with their uppers.
  void ReadDefaultRoutes();
  void ReadHostWide();
  HostSnapshot Finish();

 private:
  void ReadPciDetails(const std::string& dir, PciFunction* f);
  void ReadRdmaOf(const std::string& dir, const std::string& parent,
                  const std::vector<std::string>& names);
  RdmaDevice ReadRdma(const std::string& dir, const std::string& name);
  void ReadNetdev(const std::string& dir, const std::string& name, const std::string& device,
                  int depth);

  const Host& host_;
  const ReadOptions opts_;
  std::map<std::string, PciFunction> pci_;
  std::map<std::string, AuxDevice> aux_;
  std::map<std::string, RdmaDevice> rdma_;
  std::map<std::string, Netdev> netdevs_;
  HostSnapshot snap_;
  bool uppers_ = false;  // read netdev uppers: only a default route makes them matter
};

const PciFunction& Reader::ReadPci(const std::string& addr, bool force_details) {
  if (auto it = pci_.find(addr); it != pci_.end() && (!force_details || it->second.details)) {
    return it->second;
  }
  const std::string dir = kPciDevices + addr;
  PciFunction f;
  f.address = addr;
  // RDMA first: one failed opendir is all the scan of the device plugin spends on the many
  // functions without it.
  f.rdma_devices = List(host_, dir + "/infiniband");
  if (!force_details && !opts_.all_functions && f.rdma_devices.empty()) {
    return pci_[addr] = std::move(f);
  }
  if (auto cls = host_.ReadFile(dir + "/class"); cls.ok()) f.class_code = ParseClassCode(*cls);
  const int base_class = f.class_code < 0 ? -1 : f.class_code >> 16;
  // Bridges in a full read: their links and ACS control (NCCL's topology, the GPU <-> NIC
  // path checks).
  const bool bridge = opts_.all_functions && IsPciBridgeClass(f.class_code);
  if (force_details || base_class == 0x02 || base_class == 0x03 || !f.rdma_devices.empty() ||
      bridge) {
    ReadPciDetails(dir, &f);
  }
  if (bridge) f.acs_ctrl = ReadAcsCtrl(host_, dir);
  return pci_[addr] = std::move(f);
}

void Reader::ReadPciDetails(const std::string& dir, PciFunction* f) {
  f->details = true;
  // Where it sits in the PCIe tree (one readlink): topo, and the DRA driver's pcieRoot.
  f->sysfs_path = BusLinkTarget(host_, dir);
  // Which CPUs are near: only topo uses them.
  if (opts_.all_functions) f->local_cpulist = Trimmed(host_, dir + "/local_cpulist");
  f->vendor = ParseHexId(host_.ReadFile(dir + "/vendor").value_or(""));
  f->device = ParseHexId(host_.ReadFile(dir + "/device").value_or(""));
  f->driver = LinkName(host_, dir + "/driver");
  f->numa_node = ReadNumaNode(host_, dir + "/numa_node");
  f->physfn = LinkName(host_, dir + "/physfn");
  // A VF's PF in detail too, whatever it has: its netdevs name the VF's port, its virtfn
  // links give the VF's index.
  if (!f->physfn.empty()) ReadPci(f->physfn, true);
  if (f->physfn.empty()) {
    // A PF: its VFs by index. The kernel links virtfn0..N-1 for N enabled VFs; a tree
    // without sriov_numvfs may still show them. Reading sriov_numvfs waits for the PF's
    // device lock, held while VFs are being created or destroyed (seconds), so the device
    // plugin's scan reads it only for a PF it may offer; for another PF the links tell.
    if (opts_.all_functions || !f->rdma_devices.empty()) {
      f->sriov_numvfs = ReadNonNegative(host_, dir + "/sriov_numvfs");
    }
    if (f->sriov_numvfs > 0 || (f->sriov_numvfs < 0 && host_.Exists(dir + "/virtfn0"))) {
      for (const auto& e : List(host_, dir)) {
        const int index = VirtfnIndex(e);
        if (index < 0) continue;
        const std::string vf = LinkName(host_, dir + "/" + e);
        if (!vf.empty()) f->virtfns[index] = vf;
      }
    }
    if (opts_.all_functions) {
      // Its own PCIe link (a VF's is its PF's).
      f->sriov_totalvfs = ReadNonNegative(host_, dir + "/sriov_totalvfs");
      f->current_link_speed = Trimmed(host_, dir + "/current_link_speed");
      f->max_link_speed = Trimmed(host_, dir + "/max_link_speed");
      f->current_link_width = ReadNonNegative(host_, dir + "/current_link_width");
      f->max_link_width = ReadNonNegative(host_, dir + "/max_link_width");
      // The port above: the parent directory of its resolved path, when that is a bridge.
      const std::string up = f->sysfs_path.substr(0, f->sysfs_path.rfind('/'));
      if (!up.empty() && IsBdfName(BaseName(up))) {
        f->upstream_max_link_speed = Trimmed(host_, up + "/max_link_speed");
        f->upstream_max_link_width = ReadNonNegative(host_, up + "/max_link_width");
      }
    }
  }
  if (opts_.all_functions) {
    f->iommu_group = LinkName(host_, dir + "/iommu_group");
    if (!f->iommu_group.empty() && !snap_.iommu_group_types.count(f->iommu_group)) {
      snap_.iommu_group_types[f->iommu_group] =
          Trimmed(host_, kIommuGroups + f->iommu_group + "/type");
    }
  }
  f->netdevs = LiveFacts(host_).Netdevs({f->address, DeviceBus::kPci});
  for (const auto& nd : f->netdevs) ReadNetdev(dir + "/net/" + nd, nd, f->address, 0);
  ReadRdmaOf(dir, f->address, f->rdma_devices);
}

const AuxDevice& Reader::ReadAux(const std::string& name) {
  const std::string dir = kAuxDevices + name;
  AuxDevice a;
  a.name = name;
  // An SF's directory sits inside its PF's: /sys/devices/.../<pf>/<sf name>.
  if (auto target = host_.ReadLink(dir); target.ok()) {
    a.parent = BaseName(target->substr(0, target->find_last_of('/')));
  }
  a.rdma_devices = List(host_, dir + "/infiniband");
  a.driver = LinkName(host_, dir + "/driver");
  a.sf_num = ReadNonNegative(host_, dir + "/sfnum");
  a.netdevs = LiveFacts(host_).Netdevs({name, DeviceBus::kAux});
  for (const auto& nd : a.netdevs) ReadNetdev(dir + "/net/" + nd, nd, name, 0);
  ReadRdmaOf(dir, name, a.rdma_devices);
  if (!a.parent.empty()) ReadPci(a.parent, true);
  return aux_[name] = std::move(a);
}

void Reader::ReadRdmaOf(const std::string& dir, const std::string& parent,
                        const std::vector<std::string>& names) {
  if (names.empty()) return;
  for (const auto& name : names) {
    RdmaDevice r = ReadRdma(dir + "/infiniband/" + name, name);
    r.parent = parent;
    rdma_[name] = std::move(r);
  }
  // The uverbs/umad/issm class devices of an RDMA device are children of its device
  // (<dir>/infiniband_{verbs,mad}/<node>); `ibdev` names the owner when there are several.
  for (const char* cls : {"infiniband_verbs", "infiniband_mad"}) {
    for (const auto& e : List(host_, dir + "/" + cls)) {
      if (!IsRdmaCharDevice(e)) continue;
      std::string owner = names.front();
      if (names.size() > 1) owner = Trimmed(host_, dir + "/" + cls + "/" + e + "/ibdev");
      auto it = rdma_.find(owner);
      if (it != rdma_.end()) it->second.char_devices.push_back("/dev/infiniband/" + e);
    }
  }
}

RdmaDevice Reader::ReadRdma(const std::string& dir, const std::string& name) {
  RdmaDevice r;
  r.name = name;
  r.sysfs_dir = dir;
  r.fw_ver = Trimmed(host_, dir + "/fw_ver");
  for (const auto& p : List(host_, dir + "/ports")) {
    const std::string pdir = dir + "/ports/" + p;
    RdmaPort port;
    port.number = p;
    port.link_layer = Trimmed(host_, pdir + "/link_layer");
    port.state = PortStateAt(host_, pdir);
    port.rate = Trimmed(host_, pdir + "/rate");
    port.rate_gbps = ParsePortRateGbps(port.rate);
    if (opts_.gid_tables) {
      for (const auto& i : List(host_, pdir + "/gids")) {
        // The kernel lists every slot; unused ones read as zero and their type as EINVAL.
        auto gid = host_.ReadTrimmed(pdir + "/gids/" + i);
        if (!gid.ok() || gid->find_first_not_of("0:") == std::string::npos) continue;
        auto type = host_.ReadTrimmed(pdir + "/gid_attrs/types/" + i);
        const int index = ParseNonNegative(i);
        if (!type.ok() || index < 0) continue;
        port.gids.push_back({index, *gid, *type, Trimmed(host_, pdir + "/gid_attrs/ndevs/" + i)});
      }
      std::sort(port.gids.begin(), port.gids.end(),
                [](const Gid& a, const Gid& b) { return a.index < b.index; });
    }
    r.ports.push_back(std::move(port));
  }
  return r;
}

void Reader::ReadNetdev(const std::string& dir, const std::string& name, const std::string& device,
                        int depth) {
  if (netdevs_.count(name)) return;
  Netdev n;
  n.name = name;
  n.sysfs_dir = dir;
  n.arp_type = Trimmed(host_, dir + "/type");
  n.operstate = OperStateAt(host_, dir);
  n.device = device;
  if (uppers_) {
    for (const auto& e : List(host_, dir)) {
      if (e.rfind("upper_", 0) == 0) n.uppers.push_back(e.substr(6));
    }
  }
  const std::vector<std::string> uppers = n.uppers;
  netdevs_[name] = std::move(n);
  if (depth >= kMaxUpperDepth) return;
  for (const auto& u : uppers) ReadNetdev(kNetClass + u, u, "", depth + 1);
}

void Reader::ReadVirtualRdma(bool list_class) {
  if (list_class) snap_.rdma_class = List(host_, kRdmaClass);
  std::vector<std::string> virtual_names;
  for (const auto& name : snap_.rdma_class) {
    const std::string dir = kRdmaClass + name;
    auto target = host_.ReadLink(dir);
    if (!target.ok() || !IsVirtualTarget(*target)) continue;
    RdmaDevice r = ReadRdma(dir, name);
    r.is_virtual = true;
    // rxe writes its netdev's name to `parent`; otherwise the GID table names the netdev
    // of each used entry.
    r.netdev = Trimmed(host_, dir + "/parent");
    for (size_t i = 0; r.netdev.empty() && i < r.ports.size(); ++i) {
      const std::string ndevs = dir + "/ports/" + r.ports[i].number + "/gid_attrs/ndevs";
      for (const auto& e : List(host_, ndevs)) {
        r.netdev = Trimmed(host_, ndevs + "/" + e);
        if (!r.netdev.empty()) break;
      }
    }
    if (!r.netdev.empty()) {
      const std::string ndir = kNetClass + r.netdev;
      std::string device;
      if (auto real = host_.RealPath(ndir + "/device"); real.ok()) device = BaseName(*real);
      ReadNetdev(ndir, r.netdev, device, 0);
      // The netdev's PCI function (e.g. an SR-IOV VF) places the device: read it in detail.
      if (!device.empty() && host_.Exists(kPciDevices + device)) ReadPci(device, true);
    }
    virtual_names.push_back(name);
    rdma_[name] = std::move(r);
  }
  if (virtual_names.empty()) return;
  // A virtual RDMA device has no device directory to hold its class devices: they are
  // /sys/devices/virtual/infiniband_{verbs,mad}/<node>, each naming its `ibdev`.
  for (const char* cls : {"/sys/class/infiniband_verbs/", "/sys/class/infiniband_mad/"}) {
    for (const auto& e : List(host_, cls)) {
      const std::string link = cls + e;
      auto target = host_.ReadLink(link);
      if (!IsRdmaCharDevice(e) || !target.ok() || !IsVirtualTarget(*target)) continue;
      auto it = rdma_.find(Trimmed(host_, link + "/ibdev"));
      if (it != rdma_.end() && it->second.is_virtual) {
        it->second.char_devices.push_back("/dev/infiniband/" + e);
      }
    }
  }
}

void Reader::ReadRestOfRdmaClass() {
  for (const auto& name : snap_.rdma_class) {
    if (!rdma_.count(name)) rdma_[name] = ReadRdma(kRdmaClass + name, name);
  }
}

void Reader::ReadDefaultRoutes() {
  snap_.default_route_netdevs = ReadDefaultRouteNetdevs(host_);
  uppers_ = !snap_.default_route_netdevs.empty();
}

void Reader::ReadHostWide() {
  snap_.rdma_class = List(host_, kRdmaClass);
  snap_.dev_infiniband = List(host_, kDevInfiniband);
  snap_.rdma_cm_present = host_.Exists(kRdmaCmPath);
  ReadDefaultRoutes();
  if (opts_.verbs_owners) {
    for (const auto& node : List(host_, "/sys/class/infiniband_verbs")) {
      auto ibdev = host_.ReadTrimmed("/sys/class/infiniband_verbs/" + node + "/ibdev");
      if (ibdev.ok()) snap_.verbs_owners[node] = *ibdev;
    }
  }
}

HostSnapshot Reader::Finish() {
  snap_.gid_tables = opts_.gid_tables;
  for (auto& [k, v] : pci_) snap_.pci.push_back(std::move(v));
  for (auto& [k, v] : aux_) snap_.aux.push_back(std::move(v));
  for (auto& [k, v] : rdma_) {
    std::sort(v.char_devices.begin(), v.char_devices.end());
    snap_.rdma.push_back(std::move(v));
  }
  for (auto& [k, v] : netdevs_) snap_.netdevs.push_back(std::move(v));
  return std::move(snap_);
}

}  // namespace

HostSnapshot ReadHostSnapshot(const Host& host, const ReadOptions& opts) {
  Reader r(host, opts);
  r.ReadHostWide();
  auto addrs = host.ListDir(kPciDevices);
  if (addrs.ok()) {
    for (const auto& a : *addrs) r.ReadPci(a, false);
  }
  for (const auto& a : List(host, kAuxDevices)) r.ReadAux(a);
  r.ReadVirtualRdma();
  r.ReadRestOfRdmaClass();
  HostSnapshot snap = r.Finish();
  snap.pci_listed = addrs.ok();
  if (opts.all_functions) {
    ReadGpuDirectAndIommu(host, &snap);
    ReadCpus(host, &snap);
    ReadContainerRuntime(host, &snap);
    snap.nvidia_gpus = ReadNvidiaGpus(host);
  }
  return snap;
}

HostSnapshot ReadDevices(const Host& host, const std::vector<std::string>& pci,
                         const std::vector<std::string>& aux) {
  ReadOptions opts;
  opts.all_functions = false;
  Reader r(host, opts);
  r.ReadDefaultRoutes();  // the node's uplink is never attached
  bool virtual_rdma = false;
  for (const auto& a : pci) {
    if (!host.Exists(kPciDevices + a)) continue;
    const PciFunction& f = r.ReadPci(a, true);
    virtual_rdma = virtual_rdma || (f.rdma_devices.empty() && !f.netdevs.empty());
    // A VF's PF: its netdev, and the virtfn links that give the VF's index.
    if (!f.physfn.empty()) r.ReadPci(f.physfn, true);
  }
  for (const auto& a : aux) {
    if (!host.Exists(kAuxDevices + a)) continue;
    const AuxDevice& d = r.ReadAux(a);
    virtual_rdma = virtual_rdma || (d.rdma_devices.empty() && !d.netdevs.empty());
  }
  // Soft-RoCE on a device's netdev: the RDMA device is not under the device's directory.
  if (virtual_rdma) r.ReadVirtualRdma(/*list_class=*/true);
  return r.Finish();
}

}  // namespace hcashare::hostfacts
