#include "hostfacts/snapshot_json.h"

#include <fstream>

#include "hostfacts/json_in.h"

namespace hcashare::hostfacts {
namespace {

using Json = nlohmann::ordered_json;

Json GidJson(const Gid& g) {
  return {{"index", g.index}, {"gid", g.gid}, {"type", g.type}, {"ndev", g.ndev}};
}

Json PortJson(const RdmaPort& p) {
  Json gids = Json::array();
  for (const auto& g : p.gids) gids.push_back(GidJson(g));
  return {{"number", p.number}, {"link_layer", p.link_layer}, {"state", p.state}, {"gids", gids}};
}

Json RdmaJson(const RdmaDevice& r) {
  Json ports = Json::array();
  for (const auto& p : r.ports) ports.push_back(PortJson(p));
  return {{"name", r.name},     {"sysfs_dir", r.sysfs_dir},
          {"parent", r.parent}, {"is_virtual", r.is_virtual},
          {"netdev", r.netdev}, {"char_devices", r.char_devices},
          {"ports", ports}};
}

Json NetdevJson(const Netdev& n) {
  return {{"name", n.name},           {"sysfs_dir", n.sysfs_dir}, {"arp_type", n.arp_type},
          {"operstate", n.operstate}, {"device", n.device},       {"uppers", n.uppers}};
}

Json PciJson(const PciFunction& f) {
  Json virtfns = Json::object();
  for (const auto& [i, a] : f.virtfns) virtfns[std::to_string(i)] = a;
  return {{"address", f.address},
          {"class_code", f.class_code},
          {"rdma_devices", f.rdma_devices},
          {"details", f.details},
          {"sysfs_path", f.sysfs_path},
          {"vendor", f.vendor},
          {"device", f.device},
          {"driver", f.driver},
          {"numa_node", f.numa_node},
          {"local_cpulist", f.local_cpulist},
          {"physfn", f.physfn},
          {"virtfns", virtfns},
          {"sriov_numvfs", f.sriov_numvfs},
          {"sriov_totalvfs", f.sriov_totalvfs},
          {"current_link_speed", f.current_link_speed},
          {"max_link_speed", f.max_link_speed},
          {"current_link_width", f.current_link_width},
          {"max_link_width", f.max_link_width},
          {"upstream_max_link_speed", f.upstream_max_link_speed},
          {"upstream_max_link_width", f.upstream_max_link_width},
          {"iommu_group", f.iommu_group},
          {"netdevs", f.netdevs},
          {"acs_ctrl", f.acs_ctrl}};
}

Json NumaJson(const NumaNode& n) {
  return {{"id", n.id}, {"cpumap", n.cpumap}, {"cpulist", n.cpulist}};
}

Json GpuJson(const NvidiaGpu& g) {
  return {{"address", g.address}, {"uuid", g.uuid}, {"model", g.model}, {"minor", g.minor}};
}

Json AuxJson(const AuxDevice& a) {
  return {{"name", a.name},     {"parent", a.parent},   {"driver", a.driver},
          {"sf_num", a.sf_num}, {"netdevs", a.netdevs}, {"rdma_devices", a.rdma_devices}};
}

void ReadGid(const nlohmann::json& j, const std::string& path, std::string* err, Gid* g) {
  JsonIn in(j, path, err);
  in.Int("index", &g->index);
  in.Str("gid", &g->gid);
  in.Str("type", &g->type);
  in.Str("ndev", &g->ndev);
}

void ReadPort(const nlohmann::json& j, const std::string& path, std::string* err, RdmaPort* p) {
  JsonIn in(j, path, err);
  in.Str("number", &p->number);
  in.Str("link_layer", &p->link_layer);
  in.Str("state", &p->state);
  in.Objects("gids", &p->gids, [err](const nlohmann::json& e, const std::string& at, Gid* g) {
    ReadGid(e, at, err, g);
  });
}

void ReadRdma(const nlohmann::json& j, const std::string& path, std::string* err, RdmaDevice* r) {
  JsonIn in(j, path, err);
  in.Str("name", &r->name);
  in.Str("sysfs_dir", &r->sysfs_dir);
  in.Str("parent", &r->parent);
  in.Bool("is_virtual", &r->is_virtual);
  in.Str("netdev", &r->netdev);
  in.Strings("char_devices", &r->char_devices);
  in.Objects("ports", &r->ports,
             [err](const nlohmann::json& e, const std::string& at, RdmaPort* p) {
               ReadPort(e, at, err, p);
             });
}

void ReadNetdev(const nlohmann::json& j, const std::string& path, std::string* err, Netdev* n) {
  JsonIn in(j, path, err);
  in.Str("name", &n->name);
  in.Str("sysfs_dir", &n->sysfs_dir);
  in.Str("arp_type", &n->arp_type);
  in.Str("operstate", &n->operstate);
  in.Str("device", &n->device);
  in.Strings("uppers", &n->uppers);
}

void ReadPci(const nlohmann::json& j, const std::string& path, std::string* err, PciFunction* f) {
  JsonIn in(j, path, err);
  in.Str("address", &f->address);
  in.Int("class_code", &f->class_code);
  in.Strings("rdma_devices", &f->rdma_devices);
  in.Bool("details", &f->details);
  in.Str("sysfs_path", &f->sysfs_path);
  in.Str("vendor", &f->vendor);
  in.Str("device", &f->device);
  in.Str("driver", &f->driver);
  in.Int("numa_node", &f->numa_node);
  in.Str("local_cpulist", &f->local_cpulist);
  in.Str("physfn", &f->physfn);
  in.StringMap("virtfns", &f->virtfns);
  in.Int("sriov_numvfs", &f->sriov_numvfs);
  in.Int("sriov_totalvfs", &f->sriov_totalvfs);
  in.Str("current_link_speed", &f->current_link_speed);
  in.Str("max_link_speed", &f->max_link_speed);
  in.Int("current_link_width", &f->current_link_width);
  in.Int("max_link_width", &f->max_link_width);
  in.Str("upstream_max_link_speed", &f->upstream_max_link_speed);
  in.Int("upstream_max_link_width", &f->upstream_max_link_width);
  in.Str("iommu_group", &f->iommu_group);
  in.Strings("netdevs", &f->netdevs);
  in.Int("acs_ctrl", &f->acs_ctrl);
}

void ReadNuma(const nlohmann::json& j, const std::string& path, std::string* err, NumaNode* n) {
  JsonIn in(j, path, err);
  in.Int("id", &n->id);
  in.Str("cpumap", &n->cpumap);
  in.Str("cpulist", &n->cpulist);
}

void ReadGpu(const nlohmann::json& j, const std::string& path, std::string* err, NvidiaGpu* g) {
  JsonIn in(j, path, err);
  in.Str("address", &g->address);
  in.Str("uuid", &g->uuid);
  in.Str("model", &g->model);
  in.Int("minor", &g->minor);
}

void ReadAux(const nlohmann::json& j, const std::string& path, std::string* err, AuxDevice* a) {
  JsonIn in(j, path, err);
  in.Str("name", &a->name);
  in.Str("parent", &a->parent);
  in.Str("driver", &a->driver);
  in.Int("sf_num", &a->sf_num);
  in.Strings("netdevs", &a->netdevs);
  in.Strings("rdma_devices", &a->rdma_devices);
}

// True when `v` is sorted by `key` without repeats (the lookups binary-search).
template <typename T, typename K>
bool SortedUnique(const std::vector<T>& v, K key) {
  for (size_t i = 1; i < v.size(); ++i) {
    if (!(v[i - 1].*key < v[i].*key)) return false;
  }
  return true;
}

}  // namespace

nlohmann::ordered_json SnapshotToJson(const HostSnapshot& s) {
  Json pci = Json::array(), aux = Json::array(), rdma = Json::array(), netdevs = Json::array();
  for (const auto& f : s.pci) pci.push_back(PciJson(f));
  for (const auto& a : s.aux) aux.push_back(AuxJson(a));
  for (const auto& r : s.rdma) rdma.push_back(RdmaJson(r));
  for (const auto& n : s.netdevs) netdevs.push_back(NetdevJson(n));
  Json owners = Json::object();
  for (const auto& [node, dev] : s.verbs_owners) owners[node] = dev;
  Json group_types = Json::object();
  for (const auto& [group, type] : s.iommu_group_types) group_types[group] = type;
  Json numa = Json::array(), gpus = Json::array();
  for (const auto& n : s.numa_nodes) numa.push_back(NumaJson(n));
  for (const auto& g : s.nvidia_gpus) gpus.push_back(GpuJson(g));
  return {{"kind", kSnapshotKind},
          {"version", s.version},
          {"pci_listed", s.pci_listed},
          {"gid_tables", s.gid_tables},
          {"rdma_cm_present", s.rdma_cm_present},
          {"rdma_netns_mode", s.rdma_netns_mode},
          {"rdma_netns_error", s.rdma_netns_error},
          {"default_route_netdevs", s.default_route_netdevs},
          {"rdma_class", s.rdma_class},
          {"dev_infiniband", s.dev_infiniband},
          {"verbs_owners", owners},
          {"sys_module_listed", s.sys_module_listed},
          {"peermem_modules", s.peermem_modules},
          {"memory_peers", s.memory_peers},
          {"nvidia_version", s.nvidia_version},
          {"kernel_release", s.kernel_release},
          {"iommu_units", s.iommu_units},
          {"iommu_group_types", group_types},
          {"iommu_cmdline", s.iommu_cmdline},
          {"numa_nodes", numa},
          {"cpu_arch", s.cpu_arch},
          {"cpu_vendor", s.cpu_vendor},
          {"cpu_family", s.cpu_family},
          {"cpu_model", s.cpu_model},
          {"nvidia_gpus", gpus},
          {"pci", pci},
          {"aux", aux},
          {"rdma", rdma},
          {"netdevs", netdevs}};
}

Result<HostSnapshot> SnapshotFromJson(const nlohmann::json& j) {
  std::string err;
  HostSnapshot s;
  JsonIn in(j, "", &err);
  std::string kind;
  in.Str("kind", &kind);
  s.version = -1;
  in.Int("version", &s.version);
  if (err.empty() && kind != kSnapshotKind) {
    return Status::InvalidArgument("/kind: not \"" + std::string(kSnapshotKind) +
                                   "\" (is this an hcashare snapshot?)");
  }
  if (err.empty() && s.version != kSnapshotVersion) {
    return Status::InvalidArgument("/version: " + std::to_string(s.version) +
                                   " is not supported (this hcashare reads version " +
                                   std::to_string(kSnapshotVersion) + ")");
  }
  in.Bool("pci_listed", &s.pci_listed);
  in.Bool("gid_tables", &s.gid_tables);
  in.Bool("rdma_cm_present", &s.rdma_cm_present);
  in.Str("rdma_netns_mode", &s.rdma_netns_mode);
  in.Str("rdma_netns_error", &s.rdma_netns_error);
  in.Strings("default_route_netdevs", &s.default_route_netdevs);
  in.Strings("rdma_class", &s.rdma_class);
  in.Strings("dev_infiniband", &s.dev_infiniband);
  in.StringMap("verbs_owners", &s.verbs_owners);
  in.Bool("sys_module_listed", &s.sys_module_listed);
  in.Strings("peermem_modules", &s.peermem_modules);
  in.Strings("memory_peers", &s.memory_peers);
  in.Str("nvidia_version", &s.nvidia_version);
  in.Str("kernel_release", &s.kernel_release);
  in.Strings("iommu_units", &s.iommu_units);
  in.StringMap("iommu_group_types", &s.iommu_group_types);
  in.Strings("iommu_cmdline", &s.iommu_cmdline);
  in.Objects("numa_nodes", &s.numa_nodes,
             [&err](const nlohmann::json& e, const std::string& at, NumaNode* n) {
               ReadNuma(e, at, &err, n);
             });
  in.Str("cpu_arch", &s.cpu_arch);
  in.Str("cpu_vendor", &s.cpu_vendor);
  in.Int("cpu_family", &s.cpu_family);
  in.Int("cpu_model", &s.cpu_model);
  in.Objects("nvidia_gpus", &s.nvidia_gpus,
             [&err](const nlohmann::json& e, const std::string& at, NvidiaGpu* g) {
               ReadGpu(e, at, &err, g);
             });
  in.Objects("pci", &s.pci, [&err](const nlohmann::json& e, const std::string& at, PciFunction* f) {
    ReadPci(e, at, &err, f);
  });
  in.Objects("aux", &s.aux, [&err](const nlohmann::json& e, const std::string& at, AuxDevice* a) {
    ReadAux(e, at, &err, a);
  });
  in.Objects("rdma", &s.rdma,
             [&err](const nlohmann::json& e, const std::string& at, RdmaDevice* r) {
               ReadRdma(e, at, &err, r);
             });
  in.Objects("netdevs", &s.netdevs,
             [&err](const nlohmann::json& e, const std::string& at, Netdev* n) {
               ReadNetdev(e, at, &err, n);
             });
  if (!err.empty()) return Status::InvalidArgument(err);
  if (!SortedUnique(s.pci, &PciFunction::address)) {
    return Status::InvalidArgument("/pci: not sorted by address, or an address repeats");
  }
  if (!SortedUnique(s.aux, &AuxDevice::name)) {
    return Status::InvalidArgument("/aux: not sorted by name, or a name repeats");
  }
  if (!SortedUnique(s.rdma, &RdmaDevice::name)) {
    return Status::InvalidArgument("/rdma: not sorted by name, or a name repeats");
  }
  if (!SortedUnique(s.netdevs, &Netdev::name)) {
    return Status::InvalidArgument("/netdevs: not sorted by name, or a name repeats");
  }
  if (!SortedUnique(s.numa_nodes, &NumaNode::id)) {
    return Status::InvalidArgument("/numa_nodes: not sorted by id, or an id repeats");
  }
  if (!SortedUnique(s.nvidia_gpus, &NvidiaGpu::address)) {
    return Status::InvalidArgument("/nvidia_gpus: not sorted by address, or an address repeats");
  }
  return s;
}

Result<HostSnapshot> LoadSnapshotFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::NotFound(path + ": cannot be read");
  std::string text(kMaxSnapshotBytes + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<size_t>(in.gcount()));
  if (text.size() > kMaxSnapshotBytes) {
    return Status::InvalidArgument(path + ": larger than " +
                                   std::to_string(kMaxSnapshotBytes >> 20) + " MiB");
  }
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return Status::InvalidArgument(path + ": not JSON");
  auto snap = SnapshotFromJson(j);
  if (!snap.ok()) return Status::InvalidArgument(path + ": " + snap.status().message());
  return snap;
}

}  // namespace hcashare::hostfacts
