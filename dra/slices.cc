#include "dra/slices.h"

#include <algorithm>

namespace hcashare::dra {
namespace {

// A device needs the smaller per-slice limit when it has taints, counters or any
// list-typed attribute (ints, bools, strings, versions).
bool UsesAdvancedFeatures(const nlohmann::json& device) {
  if (device.contains("taints") || device.contains("consumesCounters")) return true;
  auto it = device.find("attributes");
  if (it == device.end() || !it->is_object()) return false;
  for (const auto& [name, value] : it->items()) {
    (void)name;
    if (!value.is_object()) continue;
    for (const char* list : {"ints", "bools", "strings", "versions"}) {
      if (value.contains(list)) return true;
    }
  }
  return false;
}

}  // namespace

const char* ApiVersionName(ApiVersion v) {
  switch (v) {
    case ApiVersion::kV1:
      return "v1";
    case ApiVersion::kV1beta2:
      return "v1beta2";
    case ApiVersion::kV1beta1:
      return "v1beta1";
  }
  return "v1";
}

Result<ApiVersion> ParseApiVersion(const std::string& name) {
  for (ApiVersion v : {ApiVersion::kV1, ApiVersion::kV1beta2, ApiVersion::kV1beta1}) {
    if (name == ApiVersionName(v)) return v;
  }
  return Status::InvalidArgument("resource.k8s.io version \"" + name +
                                 "\" is not one of v1, v1beta2, v1beta1");
}

std::vector<std::vector<nlohmann::json>> SplitDevices(const PoolContent& pool) {
  bool advanced = std::any_of(pool.devices.begin(), pool.devices.end(), UsesAdvancedFeatures);
  size_t per_slice = advanced ? kMaxDevicesPerSliceAdvanced : kMaxDevicesPerSlice;
  std::vector<std::vector<nlohmann::json>> parts;
  for (size_t i = 0; i < pool.devices.size(); i += per_slice) {
    size_t end = std::min(pool.devices.size(), i + per_slice);
    parts.emplace_back(pool.devices.begin() + static_cast<std::ptrdiff_t>(i),
                       pool.devices.begin() + static_cast<std::ptrdiff_t>(end));
  }
  if (parts.empty()) parts.emplace_back();
  return parts;
}

nlohmann::json ShapeDevice(const nlohmann::json& device, ApiVersion version) {
  if (version != ApiVersion::kV1beta1) return device;
  nlohmann::json out = nlohmann::json::object();
  nlohmann::json basic = nlohmann::json::object();
  for (const auto& [key, value] : device.items()) {
    if (key == "name") {
      out[key] = value;
    } else {
      basic[key] = value;
    }
  }
  out["basic"] = std::move(basic);
  return out;
}

std::vector<nlohmann::json> SliceObjects(const PoolContent& pool, const SliceHeader& header) {
  auto parts = SplitDevices(pool);
  std::vector<nlohmann::json> slices;
  slices.reserve(parts.size());
  for (auto& part : parts) {
    nlohmann::json metadata = {{"generateName", pool.node_name + "-" + pool.driver + "-"}};
    if (!header.node_uid.empty()) {
      metadata["ownerReferences"] = nlohmann::json::array({{{"apiVersion", "v1"},
                                                            {"kind", "Node"},
                                                            {"name", pool.node_name},
                                                            {"uid", header.node_uid},
                                                            {"controller", true}}});
    }
    nlohmann::json devices = nlohmann::json::array();
    for (auto& d : part) devices.push_back(ShapeDevice(d, header.version));
    nlohmann::json spec = {
        {"driver", pool.driver},
        {"nodeName", pool.node_name},
        {"pool",
         {{"name", pool.pool_name},
          {"generation", header.generation},
          {"resourceSliceCount", static_cast<int64_t>(parts.size())}}},
        {"devices", std::move(devices)},
    };
    slices.push_back(
        {{"apiVersion", std::string("resource.k8s.io/") + ApiVersionName(header.version)},
         {"kind", "ResourceSlice"},
         {"metadata", std::move(metadata)},
         {"spec", std::move(spec)}});
  }
  return slices;
}

}  // namespace hcashare::dra
