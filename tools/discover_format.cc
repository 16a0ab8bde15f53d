// Text and JSON renderings of a DiscoverReport.
#include <sstream>

#include "common/strings.h"
#include "json/dump.h"
#include "tools/allocate_json.h"
#include "tools/discover_report.h"

namespace hcashare::cli {
namespace {

std::string Or(const std::vector<std::string>& v) { return v.empty() ? "-" : Join(v, ","); }

std::string Numa(const v1beta1::Device& d) {
  std::vector<std::string> nodes;
  for (const auto& n : d.topology().nodes()) nodes.push_back(std::to_string(n.id()));
  return nodes.empty() ? "no NUMA topology" : "NUMA " + Join(nodes, ",");
}

// Indents every line of `text` by `n` spaces.
std::string Indent(const std::string& text, size_t n) {
  std::istringstream in(text);
  std::string line, out;
  while (std::getline(in, line)) out += std::string(n, ' ') + line + "\n";
  return out;
}

// "15b3:1017  mlx5_core" for a PCI function or SF; "virtual, not on PCI" for rxe and siw.
std::string Identity(const node::PciFunction& h) {
  return h.is_virtual ? "virtual, not on PCI" : h.vendor + ":" + h.device + "  " + h.driver;
}

// Which bus a discovered device is on, for the JSON report.
const char* BusName(const node::PciFunction& h) {
  return h.is_virtual ? "virtual" : h.is_sf ? "auxiliary" : "pci";
}

void WriteSelected(const ResourceReport& r, size_t total, std::ostringstream& out) {
  out << "  selected " << r.pool.hcas.size() << " of " << total << " usable RDMA function(s)"
      << (r.pool.hcas.empty() ? "" : ":") << "\n";
  for (const auto& h : r.pool.hcas) {
    std::vector<std::string> rdma;
    for (const auto& x : h.rdma) rdma.push_back(x.name);
    out << "    " << h.address << "  " << Or(rdma) << "  " << Or(h.netdevs) << "  " << Identity(h)
        << "  NUMA " << h.numa_node << "  "
        << (h.healthy ? "Healthy" : "Unhealthy (" + h.health_reason + ")") << "\n";
  }
}

// Consecutive devices with the same NUMA topology and health as one line.
void WriteDevices(const ResourceReport& r, std::ostringstream& out) {
  out << "  advertised " << r.devices.size() << " device(s)" << (r.devices.empty() ? "" : ":")
      << "\n";
  const bool exclusive = r.rc.mode == config::PoolMode::kExclusive;
  for (size_t i = 0; i < r.devices.size();) {
    size_t j = i + 1;
    while (!exclusive && j < r.devices.size() && Numa(r.devices[j]) == Numa(r.devices[i]) &&
           r.devices[j].health() == r.devices[i].health()) {
      ++j;
    }
    const std::string ids =
        j - i == 1 ? r.devices[i].id() : r.devices[i].id() + ".." + r.devices[j - 1].id();
    out << "    " << (j - i == 1 ? "ID " : "IDs ") << ids << ": " << Numa(r.devices[i]) << ", "
        << r.devices[i].health() << "\n";
    i = j;
  }
}

// A DRA resource's devices: name, function, and the attributes a claim aligns by.
void WriteDraDevices(const ResourceReport& r, const std::string& driver, std::ostringstream& out) {
  out << "  published " << r.dra_devices.size() << " DRA device(s) in the ResourceSlice of driver "
      << driver << (r.dra_devices.empty() ? "" : ":") << "\n";
  for (const auto& d : r.dra_devices) {
    out << "    " << d.name << "  " << d.fn.address << "  pcieRoot "
        << (d.pcie_root.empty() ? "-" : d.pcie_root) << "  NUMA " << d.fn.numa_node
        << (d.shared ? "  shares " + std::to_string(r.rc.rdma_hca_max) : "") << "\n";
  }
}

void WriteAllocations(const ResourceReport& r, std::ostringstream& out) {
  for (const auto& a : r.allocations) {
    out << "  Allocate " << DumpJson(nlohmann::json(a.ids)) << ":";
    if (!a.status.ok()) {
      out << " refused: " << a.status.ToString() << "\n";
      continue;
    }
    out << "\n" << Indent(DumpJson(AllocateResponseJson(a.response), 2), 4);
  }
}

}  // namespace

std::string FormatDiscoverText(const DiscoverReport& report) {
  std::ostringstream out;
  out << "RDMA netns mode: " << report.netns_mode << "\n";
  out << "discovery: " << report.inventory.functions.size() << " usable RDMA function(s), "
      << report.inventory.excluded.size() << " unusable\n";
  for (const auto& r : report.resources) {
    out << "\nresource " << r.rc.FullName() << " (" << config::PoolModeName(r.rc.mode);
    if (r.rc.mode == config::PoolMode::kShared) out << ", rdmaHcaMax " << r.rc.rdma_hca_max;
    if (r.rc.topology_aware) out << ", topologyAware";
    if (r.rc.api == config::ResourceApi::kDra) out << ", api dra";
    out << ")\n";
    if (!r.pool.blocked_reason.empty()) out << "  BLOCKED: " << r.pool.blocked_reason << "\n";
    WriteSelected(r, report.inventory.functions.size(), out);
    if (r.rc.api == config::ResourceApi::kDra) {
      WriteDraDevices(r, report.dra_driver, out);
    } else {
      WriteDevices(r, out);
      WriteAllocations(r, out);
    }
    if (!r.excluded.empty()) out << "  not selected:\n";
    for (const auto& e : r.excluded) {
      out << "    " << e.address << (e.label.empty() ? "" : " (" + e.label + ")") << ": "
          << e.why.rule << ": " << e.why.detail << "\n";
    }
  }
  return out.str();
}

nlohmann::ordered_json DiscoverJson(const DiscoverReport& report) {
  nlohmann::ordered_json resources = nlohmann::ordered_json::array();
  for (const auto& r : report.resources) {
    nlohmann::ordered_json selected = nlohmann::ordered_json::array();
    for (const auto& h : r.pool.hcas) {
      std::vector<std::string> rdma;
      for (const auto& x : h.rdma) rdma.push_back(x.name);
      selected.push_back({{"id", h.address},
                          {"bus", BusName(h)},
                          {"pci", h.is_virtual ? nlohmann::ordered_json(nullptr)
                                               : nlohmann::ordered_json(h.address)},
                          {"rdma", rdma},
                          {"netdevs", h.netdevs},
                          {"numa", h.numa_node},
                          {"healthy", h.healthy}});
    }
    nlohmann::ordered_json devices = nlohmann::ordered_json::array();
    for (const auto& d : r.devices) {
      std::vector<int> nodes;
      for (const auto& n : d.topology().nodes()) nodes.push_back(static_cast<int>(n.id()));
      devices.push_back({{"id", d.id()}, {"health", d.health()}, {"numa", nodes}});
    }
    nlohmann::ordered_json allocations = nlohmann::ordered_json::array();
    for (const auto& a : r.allocations) {
      nlohmann::ordered_json one = {{"ids", a.ids}};
      if (a.status.ok()) {
        one["response"] = AllocateResponseJson(a.response);
      } else {
        one["error"] = a.status.ToString();
      }
      allocations.push_back(std::move(one));
    }
    nlohmann::ordered_json excluded = nlohmann::ordered_json::array();
    for (const auto& e : r.excluded) {
      excluded.push_back(
          {{"pci", e.address}, {"name", e.label}, {"rule", e.why.rule}, {"detail", e.why.detail}});
    }
    nlohmann::ordered_json one = {
        {"resource", r.rc.FullName()},
        {"mode", config::PoolModeName(r.rc.mode)},
        {"api", config::ResourceApiName(r.rc.api)},
        {"blocked", r.pool.blocked_reason.empty() ? nlohmann::ordered_json(nullptr)
                                                  : nlohmann::ordered_json(r.pool.blocked_reason)},
        {"selected", selected},
        {"devices", devices},
        {"allocations", allocations},
        {"excluded", excluded}};
    if (r.rc.api == config::ResourceApi::kDra) {
      nlohmann::ordered_json dra_devices = nlohmann::ordered_json::array();
      for (const auto& d : r.dra_devices) {
        dra_devices.push_back({{"name", d.name},
                               {"id", d.fn.address},
                               {"pcieRoot", d.pcie_root},
                               {"numa", d.fn.numa_node}});
      }
      one["dra_driver"] = report.dra_driver;
      one["dra_devices"] = std::move(dra_devices);
    }
    resources.push_back(std::move(one));
  }
  return {{"rdma_netns_mode", report.netns_mode}, {"resources", resources}};
}

}  // namespace hcashare::cli
