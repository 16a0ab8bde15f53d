#include "common/env_names.h"

#include <algorithm>
#include <limits>
#include <set>

namespace hcashare {

std::string ResourceEnvSuffix(std::string_view full_name) {
  std::string out;
  out.reserve(full_name.size());
  for (char c : full_name) {
    if (c >= 'a' && c <= 'z') {
      out += static_cast<char>(c - 'a' + 'A');
    } else if ((c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) {
      out += c;
    } else {
      out += '_';
    }
  }
  return out;
}

std::string RdmaDevicesEnvName(std::string_view full_name) {
  return std::string(kRdmaDevicesEnv) + "_" + ResourceEnvSuffix(full_name);
}

bool IsRdmaDevicesEnvName(std::string_view name) {
  const std::string_view prefix = kRdmaDevicesEnv;
  if (name.substr(0, prefix.size()) != prefix) return false;
  return name.size() == prefix.size() ||
         (name.size() > prefix.size() + 1 && name[prefix.size()] == '_');
}

std::string NcclIbHcaExact(std::vector<NcclHca> devices) {
  const auto key = [](const NcclHca& d) {
    return d.numa_node < 0 ? std::numeric_limits<int>::max() : d.numa_node;
  };
  std::stable_sort(devices.begin(), devices.end(),
                   [&](const NcclHca& a, const NcclHca& b) { return key(a) < key(b); });
  std::string out = "=";
  std::set<std::string> seen;
  for (const auto& d : devices) {
    for (const auto& name : d.rdma_devices) {
      if (!seen.insert(name).second) continue;
      if (out.size() > 1) out += ',';
      out += name;
    }
  }
  return out;
}

}  // namespace hcashare
