// Device-plugin configs of a given size, shared by the tests and the benchmarks that drive
// the real daemon at the config limits.
#pragma once

#include <string>

namespace hcashare::testing {

// `n` shared resources named `<prefix>0`.. `<prefix>n-1`, `ids` IDs each, over every
// Mellanox HCA (vendor 15b3).
inline std::string ManySharedResources(int n, int ids, const std::string& prefix = "r") {
  std::string list;
  for (int r = 0; r < n; ++r) {
    list += std::string(r ? "," : "") + R"({"resourceName": ")" + prefix + std::to_string(r) +
            R"(", "rdmaHcaMax": )" + std::to_string(ids) +
            R"(, "selectors": {"vendors": ["15b3"]}})";
  }
  return R"({"configList": [)" + list + "]}";
}

}  // namespace hcashare::testing
