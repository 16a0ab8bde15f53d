#include "kubelet/device_checkpoint.h"

#include <algorithm>
#include <cstdlib>
#include <set>
#include <utility>

#include <nlohmann/json.hpp>

#include "common/safe_file.h"

namespace hcashare::kubelet {

using nlohmann::json;

namespace {

// Appends the strings of the array `ids` to `out` unless already in `seen`.
Status AppendIds(const json& ids, std::vector<std::string>& out, std::set<std::string>& seen) {
  if (!ids.is_array()) return Status::InvalidArgument("device ID list is not an array");
  for (const json& id : ids) {
    if (!id.is_string()) return Status::InvalidArgument("device ID is not a string");
    const std::string& s = id.get_ref<const std::string&>();
    if (seen.insert(s).second) out.push_back(s);
  }
  return Status::Ok();
}

// The NUMA key order: numeric keys by value ("-1" < "0" < "2" < "10"), then any other
// key by name.
bool NumaKeyLess(const std::string& a, const std::string& b) {
  char* end_a = nullptr;
  char* end_b = nullptr;
  long long va = std::strtoll(a.c_str(), &end_a, 10);
  long long vb = std::strtoll(b.c_str(), &end_b, 10);
  bool num_a = !a.empty() && *end_a == '\0';
  bool num_b = !b.empty() && *end_b == '\0';
  if (num_a != num_b) return num_a;
  if (num_a && va != vb) return va < vb;
  return a < b;
}

}  // namespace

Result<DevicesByResource> ParseCheckpointDevices(const std::string& json_text,
                                                 const std::string& pod_uid) {
  if (pod_uid.empty()) {
    return Status::InvalidArgument(
        "the pod UID (K8S_POD_UID in CNI_ARGS) is required to read the kubelet checkpoint");
  }
  json doc = json::parse(json_text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return Status::InvalidArgument("checkpoint is not valid JSON");
  if (!doc.is_object()) return Status::InvalidArgument("checkpoint is not a JSON object");
  auto data = doc.find("Data");
  if (data == doc.end() || data->is_null()) return DevicesByResource{};
  if (!data->is_object()) return Status::InvalidArgument("checkpoint Data is not an object");
  auto entries = data->find("PodDeviceEntries");
  if (entries == data->end() || entries->is_null()) return DevicesByResource{};
  if (!entries->is_array()) {
    return Status::InvalidArgument("checkpoint Data.PodDeviceEntries is not an array");
  }

  DevicesByResource out;
  std::map<std::string, std::set<std::string>> seen;
  size_t index = 0;
  for (const json& e : *entries) {
    const size_t i = index++;
    if (!e.is_object()) continue;
    auto uid = e.find("PodUID");
    if (uid == e.end() || !uid->is_string() || uid->get_ref<const std::string&>() != pod_uid) {
      continue;
    }
    const std::string where = "checkpoint Data.PodDeviceEntries[" + std::to_string(i) + "]";
    auto res = e.find("ResourceName");
    if (res == e.end() || !res->is_string() || res->get_ref<const std::string&>().empty()) {
      return Status::InvalidArgument(where + ": ResourceName is missing or not a string");
    }
    const std::string& resource = res->get_ref<const std::string&>();
    auto ids = e.find("DeviceIDs");
    if (ids == e.end() || ids->is_null()) continue;
    std::vector<std::string>& list = out[resource];
    std::set<std::string>& seen_ids = seen[resource];
    if (ids->is_array()) {  // Kubernetes <= 1.19: a flat list
      RETURN_IF_ERROR(AppendIds(*ids, list, seen_ids).WithContext(where + ".DeviceIDs"));
    } else if (ids->is_object()) {  // Kubernetes >= 1.20: NUMA node -> IDs
      std::vector<std::string> keys;
      for (const auto& [key, value] : ids->items()) keys.push_back(key);
      std::sort(keys.begin(), keys.end(), NumaKeyLess);
      for (const std::string& key : keys) {
        const json& bucket = (*ids)[key];
        if (bucket.is_null()) continue;
        RETURN_IF_ERROR(
            AppendIds(bucket, list, seen_ids).WithContext(where + ".DeviceIDs[\"" + key + "\"]"));
      }
    } else {
      return Status::InvalidArgument(where + ": DeviceIDs is neither an array nor an object");
    }
    if (list.empty()) out.erase(resource);
  }
  return out;
}

Result<DevicesByResource> ReadCheckpointDevices(const std::string& path,
                                                const std::string& pod_uid) {
  if (pod_uid.empty()) return ParseCheckpointDevices("", pod_uid);
  SafeReadOptions read;
  read.max_bytes = kMaxCheckpointBytes;
  read.what = "kubelet checkpoint";
  ASSIGN_OR_RETURN(const std::string text, ReadFileSafely(path, read));
  auto devices = ParseCheckpointDevices(text, pod_uid);
  if (!devices.ok()) {
    return Status::IoError("kubelet checkpoint " + path + ": " + devices.status().message());
  }
  return devices;
}

}  // namespace hcashare::kubelet
