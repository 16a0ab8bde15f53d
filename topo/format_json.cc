#include "topo/format.h"

namespace hcashare::topo {
namespace {

nlohmann::ordered_json OrNull(const std::string& s) {
  return s.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(s);
}

// {"width", "max_width", "speed_gts", "max_speed_gts", "degraded", "text"}; null when the
// link is unknown.
nlohmann::ordered_json LinkJson(const PcieLink& l) {
  if (!l.known) return nullptr;
  auto gts = [](double v) { return v > 0 ? nlohmann::ordered_json(v) : nlohmann::ordered_json(); };
  return {{"width", l.width},
          {"max_width", l.max_width},
          {"speed_gts", gts(l.speed_gts)},
          {"max_speed_gts", gts(l.max_speed_gts)},
          {"degraded", l.degraded()},
          {"text", LinkText(l)}};
}

// "off", "redirect", "unknown"; null when not applicable.
nlohmann::ordered_json AcsJson(AcsState state) {
  return state == AcsState::kNotApplicable ? nlohmann::ordered_json(nullptr)
                                           : nlohmann::ordered_json(AcsStateName(state));
}

}  // namespace

nlohmann::ordered_json ToJson(const TopoReport& r) {
  nlohmann::ordered_json devices = nlohmann::ordered_json::array();
  nlohmann::ordered_json matrix = nlohmann::ordered_json::object();
  for (const auto& a : r.devices) {
    const PciEndpoint& d = a.device;
    devices.push_back({{"pci", d.address},
                       {"kind", DeviceKindName(d.kind)},
                       {"name", a.name},
                       {"numa", d.numa_node < 0 ? nlohmann::ordered_json(nullptr)
                                                : nlohmann::ordered_json(d.numa_node)},
                       {"cpus", OrNull(d.cpus)},
                       {"pcie_link", LinkJson(d.link)}});
    nlohmann::ordered_json row = nlohmann::ordered_json::object();
    for (const auto& b : r.devices) {
      row[b.device.address] = PathTypeName(r.matrix.at(d.address).at(b.device.address));
    }
    matrix[d.address] = std::move(row);
  }
  nlohmann::ordered_json best = nlohmann::ordered_json::array();
  for (const auto& c : r.best_nics) {
    const bool none = c.nic.empty();
    best.push_back({{"gpu", c.gpu},
                    {"nic", OrNull(c.nic)},
                    {"name", OrNull(c.nic_name)},
                    {"path", none ? nlohmann::ordered_json(nullptr)
                                  : nlohmann::ordered_json(PathTypeName(c.path))},
                    {"gpudirect", none ? nlohmann::ordered_json(nullptr)
                                       : nlohmann::ordered_json(GpuDirectVerdict(c.path))},
                    {"acs", AcsJson(c.acs)}});
  }
  nlohmann::ordered_json acs = nlohmann::ordered_json::array();
  for (const auto& p : r.acs_paths) {
    acs.push_back({{"gpu", p.gpu},
                   {"nic", p.nic},
                   {"name", OrNull(p.nic_name)},
                   {"acs", AcsJson(p.state)},
                   {"bridges", p.bridges},
                   {"redirecting", p.redirecting},
                   {"unreadable", p.unreadable}});
  }
  nlohmann::ordered_json virtual_rdma = nlohmann::ordered_json::array();
  for (const auto& v : r.virtual_rdma) {
    virtual_rdma.push_back(
        {{"name", v.name}, {"netdev", OrNull(v.netdev)}, {"pci", OrNull(v.pci)}});
  }
  return {{"devices", devices},
          {"matrix", matrix},
          {"best_nics", best},
          {"nccl_ib_hca", OrNull(r.nccl_ib_hca)},
          {"virtual_rdma", virtual_rdma},
          {"acs_paths", acs}};
}

}  // namespace hcashare::topo
