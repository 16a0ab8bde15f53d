#include "common/env_names.h"

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

}  // namespace hcashare
