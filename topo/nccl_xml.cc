#include "topo/nccl_xml.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <map>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "hostfacts/attrs.h"
#include "topo/endpoints.h"
#include "topo/graph.h"

namespace hcashare::topo {
namespace {

using hostfacts::HostSnapshot;
using hostfacts::PciFunction;

// NCCL's parser limits (src/graph/xml.h, topo.h). A value is read into 255 bytes with its
// closing quote and a NUL, so 253 characters fit; the whole file, and the gpu, nic and net
// nodes NCCL adds to it, share one budget of 256 nodes (which also keeps every element far
// below the 640 children NCCL allows).
constexpr size_t kMaxValue = 253;
constexpr size_t kMaxAttrs = 16;
constexpr size_t kMaxChildren = 640;
constexpr size_t kMaxNodes = 256;
// PCI base class of display controllers (GPUs).
constexpr int kDisplayClass = 0x03;
// A cpuid vendor string ("GenuineIntel", "  Shanghai  ") is always 12 characters.
constexpr size_t kCpuidVendorLen = 12;
// From x86 family 15 on, `cpu family` adds the extended family to the base family while
// NCCL versions have encoded familyid differently (base + extended << 4, e.g. 175 for 25).
constexpr int kExtendedFamily = 15;

// One element of the file.
struct Element {
  std::string name;
  std::vector<std::pair<std::string, std::string>> attrs;
  std::vector<Element> children;
};

// `<name key="value">`, for error messages.
std::string Where(const Element& e) {
  std::string s = "<" + e.name;
  if (!e.attrs.empty()) s += " " + e.attrs[0].first + "=\"" + e.attrs[0].second + "\"";
  return s + ">";
}

// NCCL reads a value verbatim up to its closing quote, and an XML parser needs '<' and '&'
// escaped: a value that either would read differently cannot be written.
Status CheckValue(const Element& e, const std::string& key, const std::string& value) {
  if (value.size() > kMaxValue) {
    return Status::InvalidArgument(Where(e) + " " + key + ": " + std::to_string(value.size()) +
                                   " characters, NCCL reads at most " + std::to_string(kMaxValue));
  }
  for (char c : value) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '<' || c == '&' || u < 0x20 || u == 0x7f) {
      return Status::InvalidArgument(
          Where(e) + " " + key + " \"" + value +
          "\": NCCL's parser decodes no XML escapes, so a value with '\"', '<', '&' or a "
          "control character cannot be written");
    }
  }
  return Status::Ok();
}

// NCCL's dump layout: two-space indent, one element a line, leaves self-closed.
Status Render(const Element& e, int indent, std::string* out) {
  if (e.attrs.size() > kMaxAttrs || e.children.size() > kMaxChildren) {
    return Status::InvalidArgument(Where(e) + ": more attributes or children than NCCL reads");
  }
  out->append(static_cast<size_t>(indent), ' ');
  *out += "<" + e.name;
  for (const auto& [key, value] : e.attrs) {
    RETURN_IF_ERROR(CheckValue(e, key, value));
    *out += " " + key + "=\"" + value + "\"";
  }
  if (e.children.empty()) {
    *out += "/>\n";
    return Status::Ok();
  }
  *out += ">\n";
  for (const auto& c : e.children) RETURN_IF_ERROR(Render(c, indent + 2, out));
  out->append(static_cast<size_t>(indent), ' ');
  *out += "</" + e.name + ">\n";
  return Status::Ok();
}

// A bus address NCCL's sysfs walk takes for one: exactly "dddd:bb:dd.f". A longer domain
// (behind a VMD) ends the walk there, as a root complex would.
bool NcclBdf(const std::string& s) { return s.size() == 12 && IsBdf(s); }

// The pci elements from `ep` up to its cpu, as NCCL's walk makes them: from each element two
// path components up, while both are bus addresses.
std::vector<std::string> ChainOf(const PciEndpoint& ep) {
  std::vector<std::string> path = ep.bridges;
  path.push_back(ep.address);
  std::vector<std::string> chain{ep.address};
  for (size_t k = path.size() - 1; k >= 2 && NcclBdf(path[k - 1]) && NcclBdf(path[k - 2]);) {
    k -= 2;
    chain.push_back(path[k]);
  }
  return chain;
}

// The pci elements and the cpu each top one hangs off.
struct Tree {
  std::map<int, std::set<std::string>> cpus;         // NUMA node (-1: unknown) -> top bus ids
  std::map<std::string, std::set<std::string>> pci;  // bus id -> children's bus ids
};

// The GPUs, and the NICs that carry an RDMA device; PFs only. NCCL places a VF through sysfs
// where its PF is (the same parent port), and the VFs change with sriov_numvfs.
Endpoints Kept(const HostSnapshot& snap, const Endpoints& all) {
  Endpoints kept;
  for (const auto& ep : all.devices) {
    const PciFunction* f = snap.FindPci(ep.address);
    const bool vf = f != nullptr && !f->physfn.empty();
    if (!vf && (ep.kind == DeviceKind::kGpu || !ep.rdma.empty())) kept.devices.push_back(ep);
  }
  return kept;
}

Tree TreeOf(const Endpoints& kept) {
  // NUMA nodes as the rest of topo places root complexes.
  const Graph graph = Graph::FromSnapshot(kept);
  Tree tree;
  for (const auto& ep : kept.devices) {
    int numa = -1;
    for (const auto& id : graph.Ancestors(ep.address)) {
      const Node* n = graph.Find(id);
      if (n->type == NodeType::kNuma) numa = n->numa_node;
    }
    const std::vector<std::string> chain = ChainOf(ep);
    for (size_t i = 0; i < chain.size(); ++i) {
      auto& children = tree.pci[chain[i]];
      if (i > 0) children.insert(chain[i - 1]);
    }
    tree.cpus[numa].insert(chain.back());
  }
  return tree;
}

// "0x" and a sysfs vendor or device id (4 hex digits); nullopt when unknown.
std::optional<std::string> HexId(const std::string& id) {
  if (id.size() != 4) return std::nullopt;
  for (char c : id) {
    if (!std::isxdigit(static_cast<unsigned char>(c))) return std::nullopt;
  }
  return "0x" + id;
}

// NCCL's link_speed: the max_link_speed text of the slower end, when both ends are known.
std::optional<std::string> LinkSpeed(const PciFunction& f) {
  const double own = hostfacts::ParseLinkSpeedGts(f.max_link_speed);
  const double up = hostfacts::ParseLinkSpeedGts(f.upstream_max_link_speed);
  if (own <= 0 || up <= 0) return std::nullopt;
  return up < own ? f.upstream_max_link_speed : f.max_link_speed;
}

// NCCL's link_width: the narrower max_link_width of both ends, when both are known.
std::optional<std::string> LinkWidth(const PciFunction& f) {
  if (f.max_link_width <= 0 || f.upstream_max_link_width <= 0) return std::nullopt;
  return std::to_string(std::min(f.max_link_width, f.upstream_max_link_width));
}

Result<Element> PciElement(const HostSnapshot& snap, const Tree& tree, const std::string& bdf) {
  const PciFunction* f = snap.FindPci(bdf);
  if (f == nullptr || f->class_code < 0) {
    return Status::FailedPrecondition("PCI function " + bdf +
                                      " has no class in the snapshot (sysfs `class`): NCCL "
                                      "needs the class of every pci element");
  }
  char cls[16];
  std::snprintf(cls, sizeof(cls), "0x%06x", static_cast<unsigned>(f->class_code));
  Element e{"pci", {{"busid", bdf}, {"class", cls}}, {}};
  // Since NCCL 2.30.7 a GPU's link comes from NVML's current PCIe state; a value in the file
  // would override it with sysfs's maximum, so a GPU's link is left to NCCL.
  const bool gpu = (f->class_code >> 16) == kDisplayClass;
  const std::pair<const char*, std::optional<std::string>> optional[] = {
      {"vendor", HexId(f->vendor)},
      {"device", HexId(f->device)},
      {"link_speed", gpu ? std::nullopt : LinkSpeed(*f)},
      {"link_width", gpu ? std::nullopt : LinkWidth(*f)}};
  for (const auto& [key, value] : optional) {
    if (value) e.attrs.emplace_back(key, *value);
  }
  for (const auto& child : tree.pci.at(bdf)) {
    ASSIGN_OR_RETURN(Element c, PciElement(snap, tree, child));
    e.children.push_back(std::move(c));
  }
  return e;
}

// NCCL's name of /proc/sys/kernel/arch's value.
Result<std::string> NcclArch(const std::string& arch) {
  if (arch.empty()) {
    return Status::FailedPrecondition(
        "the CPU architecture is unknown (neither /proc/sys/kernel/arch, which kernels before "
        "6.1 lack, nor /sys/devices/system/cpu/modalias names it; snapshots of older hcashare "
        "versions do not hold it), and NCCL needs the arch of every cpu element");
  }
  static const std::pair<const char*, const char*> kArchs[] = {{"x86_64", "x86_64"},
                                                               {"aarch64", "arm64"},
                                                               {"arm64", "arm64"},
                                                               {"ppc64le", "ppc64"},
                                                               {"ppc64", "ppc64"}};
  for (const auto& [kernel, nccl] : kArchs) {
    if (arch == kernel) return std::string(nccl);
  }
  return Status::FailedPrecondition("CPU architecture \"" + arch +
                                    "\" (/proc/sys/kernel/arch) is none NCCL knows (x86_64, "
                                    "arm64, ppc64)");
}

// The `cpumap` of NUMA node `id` when it is one NCCL can read back; nullopt otherwise (NCCL
// then reads the same file).
std::optional<std::string> Affinity(const HostSnapshot& snap, int id) {
  for (const auto& n : snap.numa_nodes) {
    if (n.id != id || n.cpumap.empty() || n.cpumap.size() > kMaxValue) continue;
    bool ok = true;
    for (char c : n.cpumap) ok = ok && (c == ',' || std::isxdigit(static_cast<unsigned char>(c)));
    if (ok) return n.cpumap;
  }
  return std::nullopt;
}

Result<Element> CpuElement(const HostSnapshot& snap, const std::string& arch, int numa) {
  Element e{"cpu", {{"numaid", std::to_string(numa)}}, {}};
  if (auto affinity = Affinity(snap, numa)) e.attrs.emplace_back("affinity", *affinity);
  e.attrs.emplace_back("arch", arch);
  // NCCL reads vendor, familyid and modelid on x86 only.
  if (arch != "x86_64") return e;
  if (snap.cpu_vendor.size() == kCpuidVendorLen) e.attrs.emplace_back("vendor", snap.cpu_vendor);
  if (snap.cpu_family >= 0 && snap.cpu_family < kExtendedFamily && snap.cpu_model >= 0) {
    e.attrs.emplace_back("familyid", std::to_string(snap.cpu_family));
    e.attrs.emplace_back("modelid", std::to_string(snap.cpu_model));
  }
  return e;
}

// The nodes NCCL adds to the file's when it loads it: a gpu under each GPU's pci (its
// nvlink children come from NVML and are not known here), and under each NIC's pci a nic
// with a net per port of its RDMA devices.
size_t NcclOwnNodes(const HostSnapshot& snap, const Endpoints& kept) {
  size_t n = 0;
  for (const auto& ep : kept.devices) {
    ++n;  // gpu or nic
    if (ep.kind == DeviceKind::kGpu) continue;
    for (const auto& name : ep.rdma) {
      const hostfacts::RdmaDevice* r = snap.FindRdma(name);
      n += r != nullptr && !r->ports.empty() ? r->ports.size() : 1;
    }
  }
  return n;
}

}  // namespace

Result<std::string> FormatNcclXml(const HostSnapshot& snap) {
  ASSIGN_OR_RETURN(const Endpoints all, EndpointsOf(snap));
  const Endpoints kept = Kept(snap, all);
  const Tree tree = TreeOf(kept);
  const size_t written = 1 + tree.cpus.size() + tree.pci.size();
  const size_t nodes = written + NcclOwnNodes(snap, kept);
  if (nodes > kMaxNodes) {
    return Status::InvalidArgument("the topology has " + std::to_string(nodes) + " nodes (" +
                                   std::to_string(written) +
                                   " elements in the file, the rest the gpu, nic and net nodes "
                                   "NCCL adds); NCCL loads at most " +
                                   std::to_string(kMaxNodes));
  }
  Element system{"system", {{"version", "1"}}, {}};
  if (!tree.cpus.empty()) {
    ASSIGN_OR_RETURN(const std::string arch, NcclArch(snap.cpu_arch));
    for (const auto& [numa, tops] : tree.cpus) {
      ASSIGN_OR_RETURN(Element cpu, CpuElement(snap, arch, numa));
      for (const auto& bdf : tops) {
        ASSIGN_OR_RETURN(Element pci, PciElement(snap, tree, bdf));
        cpu.children.push_back(std::move(pci));
      }
      system.children.push_back(std::move(cpu));
    }
  }
  std::string out;
  RETURN_IF_ERROR(Render(system, 0, &out));
  return out;
}

}  // namespace hcashare::topo
