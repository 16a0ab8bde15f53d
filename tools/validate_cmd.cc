#include <iostream>

#include <nlohmann/json.hpp>

#include "config/config.h"
#include "tools/commands.h"

namespace hcashare::cli {

int RunValidate(const std::string& file, bool json) {
  config::ParseOutcome out = config::LoadConfigFile(file);
  if (json) {
    auto issues = [](const std::vector<config::ConfigIssue>& v) {
      nlohmann::json a = nlohmann::json::array();
      for (const auto& i : v) a.push_back({{"path", i.path}, {"message", i.message}});
      return a;
    };
    nlohmann::json j = {{"file", file},
                        {"valid", out.ok()},
                        {"errors", issues(out.errors)},
                        {"warnings", issues(out.warnings)}};
    if (out.config) {
      nlohmann::json res = nlohmann::json::array();
      for (const auto& rc : out.config->resources) {
        res.push_back({{"resource", rc.FullName()}, {"rdmaHcaMax", rc.rdma_hca_max}});
      }
      j["resources"] = res;
      j["periodicUpdateInterval"] = out.config->periodic_update_seconds;
    }
    std::cout << j.dump(2) << "\n";
  } else {
    std::cout << file << ": " << (out.ok() ? "valid" : "INVALID") << "\n"
              << config::FormatIssues(out);
    if (out.config) {
      for (const auto& rc : out.config->resources) {
        std::cout << "resource " << rc.FullName() << " rdmaHcaMax=" << rc.rdma_hca_max << "\n";
      }
    }
  }
  return out.ok() ? 0 : 2;
}

}  // namespace hcashare::cli
