#include "testing/cdi_runtime.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

namespace hcashare::fake {
namespace {

using nlohmann::json;

// "NAME" of "NAME=value".
std::string EnvKey(const std::string& e) { return e.substr(0, e.find('=')); }

// runtime-tools' AddMultipleProcessEnv: a name already present is replaced in place.
void AddEnv(const std::string& e, std::vector<std::string>* env) {
  const std::string key = EnvKey(e);
  auto it = std::find_if(env->begin(), env->end(),
                         [&](const std::string& have) { return EnvKey(have) == key; });
  if (it == env->end()) {
    env->push_back(e);
  } else {
    *it = e;
  }
}

void Apply(const json& edits, CdiContainer* out) {
  if (!edits.is_object()) return;
  for (const json& e : edits.value("env", json::array())) {
    if (e.is_string()) AddEnv(e.get<std::string>(), &out->env);
  }
  for (const json& n : edits.value("deviceNodes", json::array())) {
    const std::string path = n.is_object() ? n.value("path", "") : "";
    if (path.empty()) continue;
    if (std::find(out->device_nodes.begin(), out->device_nodes.end(), path) ==
        out->device_nodes.end()) {
      out->device_nodes.push_back(path);
    }
  }
}

}  // namespace

std::vector<std::string> ContainerCdiIds(
    const ::k8s::io::kubelet::pkg::apis::dra::v1::NodePrepareResourceResponse& claim,
    const std::string& request) {
  std::vector<std::string> out;
  for (const auto& d : claim.devices()) {
    const auto& names = d.request_names();
    const bool match = request.empty() || names.empty() ||
                       std::find(names.begin(), names.end(), request) != names.end();
    if (!match) continue;
    for (const auto& id : d.cdi_device_ids()) out.push_back(id);
  }
  return out;
}

std::string CdiContainer::Env(const std::string& name) const {
  for (const auto& e : env) {
    if (EnvKey(e) == name) return e.substr(name.size() + 1);
  }
  return "";
}

std::map<std::string, std::string> CdiContainer::EnvMap() const {
  std::map<std::string, std::string> out;
  for (const auto& e : env)
    out[EnvKey(e)] = e.find('=') == std::string::npos ? "" : e.substr(e.find('=') + 1);
  return out;
}

Result<CdiContainer> InjectCdiDevices(const std::string& spec_dir,
                                      const std::vector<std::string>& ids,
                                      std::vector<std::string> env) {
  // Every spec of the directory, and each device's qualified name -> (spec, device).
  std::vector<json> specs;
  std::map<std::string, std::pair<size_t, json>> devices;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(spec_dir, ec)) {
    if (entry.path().extension() != ".json") continue;
    std::ifstream in(entry.path());
    std::stringstream text;
    text << in.rdbuf();
    json spec = json::parse(text.str(), nullptr, false);
    if (!spec.is_object()) {
      return Status::InvalidArgument("CDI spec " + entry.path().string() + " is not JSON");
    }
    const std::string kind = spec.value("kind", "");
    for (const json& d : spec.value("devices", json::array())) {
      const std::string id = kind + "=" + d.value("name", "");
      if (devices.count(id) != 0) {
        return Status::FailedPrecondition("CDI device " + id + " is defined twice");
      }
      devices[id] = {specs.size(), d};
    }
    specs.push_back(std::move(spec));
  }
  CdiContainer out;
  out.env = std::move(env);
  std::set<size_t> applied;
  for (const auto& id : ids) {
    auto it = devices.find(id);
    if (it == devices.end()) return Status::NotFound("unresolvable CDI device " + id);
    const auto& [spec, device] = it->second;
    if (applied.insert(spec).second) Apply(specs[spec].value("containerEdits", json()), &out);
    Apply(device.value("containerEdits", json()), &out);
  }
  return out;
}

}  // namespace hcashare::fake
