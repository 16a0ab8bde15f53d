#include "tools/allocate_json.h"

#include <map>

namespace hcashare::cli {
namespace {

// A proto map as a JSON object with sorted keys (proto map order is unspecified).
template <typename ProtoMap>
nlohmann::ordered_json SortedObject(const ProtoMap& m) {
  nlohmann::ordered_json out = nlohmann::ordered_json::object();
  for (const auto& [k, v] : std::map<std::string, std::string>(m.begin(), m.end())) out[k] = v;
  return out;
}

}  // namespace

nlohmann::ordered_json AllocateResponseJson(const v1beta1::AllocateResponse& resp) {
  nlohmann::ordered_json out = {{"container_responses", nlohmann::ordered_json::array()}};
  for (const auto& c : resp.container_responses()) {
    nlohmann::ordered_json devices = nlohmann::ordered_json::array();
    for (const auto& d : c.devices()) {
      devices.push_back({{"container_path", d.container_path()},
                         {"host_path", d.host_path()},
                         {"permissions", d.permissions()}});
    }
    nlohmann::ordered_json container = {{"envs", SortedObject(c.envs())}, {"devices", devices}};
    if (c.mounts_size() > 0) {
      nlohmann::ordered_json mounts = nlohmann::ordered_json::array();
      for (const auto& m : c.mounts()) {
        mounts.push_back({{"container_path", m.container_path()},
                          {"host_path", m.host_path()},
                          {"read_only", m.read_only()}});
      }
      container["mounts"] = mounts;
    }
    if (c.annotations_size() > 0) container["annotations"] = SortedObject(c.annotations());
    if (c.cdi_devices_size() > 0) {
      nlohmann::ordered_json cdi = nlohmann::ordered_json::array();
      for (const auto& d : c.cdi_devices()) cdi.push_back({{"name", d.name()}});
      container["cdi_devices"] = cdi;
    }
    out["container_responses"].push_back(std::move(container));
  }
  return out;
}

}  // namespace hcashare::cli
