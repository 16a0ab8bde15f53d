#include "node/cdi_spec.h"

#include <set>

#include "hostfacts/reader.h"
#include "json/dump.h"

namespace hcashare::node {

std::vector<std::string> CdiDeviceNodePaths(const std::vector<std::string>& char_devices) {
  std::set<std::string> all(char_devices.begin(), char_devices.end());
  all.erase(hostfacts::kRdmaCmPath);
  std::vector<std::string> out(all.begin(), all.end());
  if (!char_devices.empty()) out.push_back(hostfacts::kRdmaCmPath);
  return out;
}

nlohmann::ordered_json CdiDeviceJson(const std::string& name,
                                     const std::vector<std::string>& node_paths,
                                     const std::vector<std::string>& env) {
  nlohmann::ordered_json nodes = nlohmann::json::array();
  for (const auto& path : node_paths) {
    nodes.push_back({{"path", path}, {"hostPath", path}, {"permissions", "rw"}});
  }
  nlohmann::ordered_json env_json = nlohmann::json::array();
  for (const auto& e : env) env_json.push_back(e);
  return {{"name", name}, {"containerEdits", {{"deviceNodes", nodes}, {"env", env_json}}}};
}

std::string CdiSpecText(const std::string& kind, const nlohmann::ordered_json& devices,
                        const std::vector<std::string>& spec_env) {
  nlohmann::ordered_json spec = {{"cdiVersion", "0.5.0"}, {"kind", kind}, {"devices", devices}};
  if (!spec_env.empty()) spec["containerEdits"] = {{"env", spec_env}};
  return DumpJson(spec, 2) + "\n";
}

}  // namespace hcashare::node
