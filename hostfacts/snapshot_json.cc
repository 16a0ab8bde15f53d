#include "hostfacts/snapshot_json.h"

#include <fstream>
#include <limits>
#include <map>
#include <optional>
#include <type_traits>

#include "hostfacts/attrs.h"
#include "json/fields.h"

namespace hcashare::hostfacts {
namespace {

using Json = nlohmann::ordered_json;

Json GidJson(const Gid& g) {
  return {{"index", g.index}, {"gid", g.gid}, {"type", g.type}, {"ndev", g.ndev}};
}

Json PortJson(const RdmaPort& p) {
  Json gids = Json::array();
  for (const auto& g : p.gids) gids.push_back(GidJson(g));
  return {{"number", p.number}, {"link_layer", p.link_layer}, {"state", p.state},
          {"rate", p.rate},     {"rate_gbps", p.rate_gbps},   {"gids", gids}};
}

Json RdmaJson(const RdmaDevice& r) {
  Json ports = Json::array();
  for (const auto& p : r.ports) ports.push_back(PortJson(p));
  return {{"name", r.name},
          {"sysfs_dir", r.sysfs_dir},
          {"parent", r.parent},
          {"is_virtual", r.is_virtual},
          {"netdev", r.netdev},
          {"fw_ver", r.fw_ver},
          {"char_devices", r.char_devices},
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

// The snapshot's fields, read with the one JSON field reader (json/fields.h): JSON Pointer
// paths, a null value of the wrong type, the first problem reported. Absent fields leave
// the value as it is.
using jsonin::FieldReader;

void Str(FieldReader& in, const char* key, std::string* out) {
  if (auto v = in.String(key)) *out = std::move(*v);
}
void Bool(FieldReader& in, const char* key, bool* out) {
  if (auto v = in.Bool(key)) *out = *v;
}
template <typename N>
void Int(FieldReader& in, const char* key, N* out) {
  if (auto v = in.Integer(key, std::numeric_limits<N>::min(), std::numeric_limits<N>::max())) {
    *out = static_cast<N>(*v);
  }
}
// Array of strings `key`, appended to `out`.
void Strings(FieldReader& in, const char* key, std::vector<std::string>* out) {
  if (auto v = in.Strings(key)) out->insert(out->end(), v->begin(), v->end());
}
// Each object of array `key` through `read(reader, &element)`.
template <typename T, typename F>
void Objects(FieldReader& in, const char* key, std::vector<T>* out, F read) {
  jsonin::ForEachObject(in, key, jsonin::Need::kOptional, [&](FieldReader& item) {
    T t;
    read(item, &t);
    out->push_back(std::move(t));
  });
}
// Object `key` whose values are strings, keyed by `K` (std::string, or int for numerals).
template <typename K>
void StringMap(FieldReader& in, const char* key, std::map<K, std::string>* out) {
  const nlohmann::json* object = in.Object(key);
  if (object == nullptr) return;
  FieldReader members = in.At(*object, in.PathOf(key));
  for (const auto& [k, value] : object->items()) {
    std::optional<std::string> text = members.StringAt(value, members.PathOf(k));
    if (!text) continue;
    if constexpr (std::is_same_v<K, int>) {
      const int n = ParseNonNegative(k);
      if (n < 0) {
        members.Fail(k, "must be a numeral key");
        continue;
      }
      (*out)[n] = std::move(*text);
    } else {
      (*out)[k] = std::move(*text);
    }
  }
}

void ReadGid(FieldReader& in, Gid* g) {
  Int(in, "index", &g->index);
  Str(in, "gid", &g->gid);
  Str(in, "type", &g->type);
  Str(in, "ndev", &g->ndev);
}

void ReadPort(FieldReader& in, RdmaPort* p) {
  Str(in, "number", &p->number);
  Str(in, "link_layer", &p->link_layer);
  Str(in, "state", &p->state);
  // Snapshots before these fields have neither: the rate stays unknown.
  Str(in, "rate", &p->rate);
  p->rate_gbps = ParsePortRateGbps(p->rate);
  Int(in, "rate_gbps", &p->rate_gbps);
  Objects(in, "gids", &p->gids, ReadGid);
}

void ReadRdma(FieldReader& in, RdmaDevice* r) {
  Str(in, "name", &r->name);
  Str(in, "sysfs_dir", &r->sysfs_dir);
  Str(in, "parent", &r->parent);
  Bool(in, "is_virtual", &r->is_virtual);
  Str(in, "netdev", &r->netdev);
  Str(in, "fw_ver", &r->fw_ver);
  Strings(in, "char_devices", &r->char_devices);
  Objects(in, "ports", &r->ports, ReadPort);
}

void ReadNetdev(FieldReader& in, Netdev* n) {
  Str(in, "name", &n->name);
  Str(in, "sysfs_dir", &n->sysfs_dir);
  Str(in, "arp_type", &n->arp_type);
  Str(in, "operstate", &n->operstate);
  Str(in, "device", &n->device);
  Strings(in, "uppers", &n->uppers);
}

void ReadPci(FieldReader& in, PciFunction* f) {
  Str(in, "address", &f->address);
  Int(in, "class_code", &f->class_code);
  Strings(in, "rdma_devices", &f->rdma_devices);
  Bool(in, "details", &f->details);
  Str(in, "sysfs_path", &f->sysfs_path);
  Str(in, "vendor", &f->vendor);
  Str(in, "device", &f->device);
  Str(in, "driver", &f->driver);
  Int(in, "numa_node", &f->numa_node);
  Str(in, "local_cpulist", &f->local_cpulist);
  Str(in, "physfn", &f->physfn);
  StringMap(in, "virtfns", &f->virtfns);
  Int(in, "sriov_numvfs", &f->sriov_numvfs);
  Int(in, "sriov_totalvfs", &f->sriov_totalvfs);
  Str(in, "current_link_speed", &f->current_link_speed);
  Str(in, "max_link_speed", &f->max_link_speed);
  Int(in, "current_link_width", &f->current_link_width);
  Int(in, "max_link_width", &f->max_link_width);
  Str(in, "upstream_max_link_speed", &f->upstream_max_link_speed);
  Int(in, "upstream_max_link_width", &f->upstream_max_link_width);
  Str(in, "iommu_group", &f->iommu_group);
  Strings(in, "netdevs", &f->netdevs);
  Int(in, "acs_ctrl", &f->acs_ctrl);
}

void ReadNuma(FieldReader& in, NumaNode* n) {
  Int(in, "id", &n->id);
  Str(in, "cpumap", &n->cpumap);
  Str(in, "cpulist", &n->cpulist);
}

void ReadGpu(FieldReader& in, NvidiaGpu* g) {
  Str(in, "address", &g->address);
  Str(in, "uuid", &g->uuid);
  Str(in, "model", &g->model);
  Int(in, "minor", &g->minor);
}

void ReadAux(FieldReader& in, AuxDevice* a) {
  Str(in, "name", &a->name);
  Str(in, "parent", &a->parent);
  Str(in, "driver", &a->driver);
  Int(in, "sf_num", &a->sf_num);
  Strings(in, "netdevs", &a->netdevs);
  Strings(in, "rdma_devices", &a->rdma_devices);
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
          {"containerd_config_present", s.containerd_config_present},
          {"containerd_config_version", s.containerd_config_version},
          {"containerd_enable_cdi", s.containerd_enable_cdi},
          {"containerd_config_imports", s.containerd_config_imports},
          {"crio_config_present", s.crio_config_present},
          {"nvidia_gpus", gpus},
          {"pci", pci},
          {"aux", aux},
          {"rdma", rdma},
          {"netdevs", netdevs}};
}

Result<HostSnapshot> SnapshotFromJson(const nlohmann::json& j) {
  if (!j.is_object()) return Status::InvalidArgument("/: expected an object");
  jsonin::IssueList issues(1);
  FieldReader in(j, "", &issues, {nullptr, jsonin::PathSyntax::kJsonPointer, false});
  HostSnapshot s;
  std::string kind;
  Str(in, "kind", &kind);
  s.version = -1;
  Int(in, "version", &s.version);
  if (issues.empty() && kind != kSnapshotKind) {
    return Status::InvalidArgument("/kind: not \"" + std::string(kSnapshotKind) +
                                   "\" (is this an hcashare snapshot?)");
  }
  if (issues.empty() && s.version != kSnapshotVersion) {
    return Status::InvalidArgument("/version: " + std::to_string(s.version) +
                                   " is not supported (this hcashare reads version " +
                                   std::to_string(kSnapshotVersion) + ")");
  }
  Bool(in, "pci_listed", &s.pci_listed);
  Bool(in, "gid_tables", &s.gid_tables);
  Bool(in, "rdma_cm_present", &s.rdma_cm_present);
  Str(in, "rdma_netns_mode", &s.rdma_netns_mode);
  Str(in, "rdma_netns_error", &s.rdma_netns_error);
  Strings(in, "default_route_netdevs", &s.default_route_netdevs);
  Strings(in, "rdma_class", &s.rdma_class);
  Strings(in, "dev_infiniband", &s.dev_infiniband);
  StringMap(in, "verbs_owners", &s.verbs_owners);
  Bool(in, "sys_module_listed", &s.sys_module_listed);
  Strings(in, "peermem_modules", &s.peermem_modules);
  Strings(in, "memory_peers", &s.memory_peers);
  Str(in, "nvidia_version", &s.nvidia_version);
  Str(in, "kernel_release", &s.kernel_release);
  Strings(in, "iommu_units", &s.iommu_units);
  StringMap(in, "iommu_group_types", &s.iommu_group_types);
  Strings(in, "iommu_cmdline", &s.iommu_cmdline);
  Objects(in, "numa_nodes", &s.numa_nodes, ReadNuma);
  Str(in, "cpu_arch", &s.cpu_arch);
  Str(in, "cpu_vendor", &s.cpu_vendor);
  Int(in, "cpu_family", &s.cpu_family);
  Int(in, "cpu_model", &s.cpu_model);
  Bool(in, "containerd_config_present", &s.containerd_config_present);
  Int(in, "containerd_config_version", &s.containerd_config_version);
  Str(in, "containerd_enable_cdi", &s.containerd_enable_cdi);
  Bool(in, "containerd_config_imports", &s.containerd_config_imports);
  Bool(in, "crio_config_present", &s.crio_config_present);
  Objects(in, "nvidia_gpus", &s.nvidia_gpus, ReadGpu);
  Objects(in, "pci", &s.pci, ReadPci);
  Objects(in, "aux", &s.aux, ReadAux);
  Objects(in, "rdma", &s.rdma, ReadRdma);
  Objects(in, "netdevs", &s.netdevs, ReadNetdev);
  if (!issues.empty()) return Status::InvalidArgument(issues.listed().front().ToString());
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
