#include "cni/dra_devices.h"

#include <algorithm>

#include "cni/podresources_devices.h"

namespace hcashare::cni {

std::vector<std::string> ResolveDraDevices(const std::string& driver,
                                           const DraDeviceResolver& resolve,
                                           DevicesByResource* granted) {
  std::vector<std::string> ours;
  for (auto it = granted->begin(); it != granted->end();) {
    if (it->first.rfind(kDraKeyPrefix, 0) != 0) {
      ++it;
      continue;
    }
    if (it->first == DraResourceKey(driver)) ours = std::move(it->second);
    it = granted->erase(it);
  }
  std::vector<std::string> unknown;
  for (const std::string& id : ours) {
    const size_t slash = id.find('/');
    const std::string pool = slash == std::string::npos ? "" : id.substr(0, slash);
    const std::string device = slash == std::string::npos ? id : id.substr(slash + 1);
    std::optional<DraDeviceInfo> info = resolve ? resolve(pool, device) : std::nullopt;
    if (!info || info->address.empty() || info->resource.empty()) {
      unknown.push_back(id);
      continue;
    }
    std::vector<std::string>& list = (*granted)[info->resource];
    if (std::find(list.begin(), list.end(), info->address) == list.end()) {
      list.push_back(info->address);
    }
  }
  return unknown;
}

}  // namespace hcashare::cni
