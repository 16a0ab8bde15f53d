#include <iostream>

#include <nlohmann/json.hpp>

#include "config/config.h"
#include "tools/commands.h"

namespace hcashare::cli {
namespace {

// What the resource advertises, in words.
std::string Advertises(const config::ResourceConfig& rc) {
  if (rc.mode == config::PoolMode::kShared) {
    return "shared: rdmaHcaMax=" + std::to_string(rc.rdma_hca_max) + " IDs, each granting the pool";
  }
  return "exclusive: one device per selected PCI function (ID = its PCI address)";
}

}  // namespace

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
        nlohmann::json r = {{"resource", rc.FullName()}, {"mode", config::PoolModeName(rc.mode)}};
        if (rc.mode == config::PoolMode::kShared) r["rdmaHcaMax"] = rc.rdma_hca_max;
        res.push_back(std::move(r));
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
        std::cout << "resource " << rc.FullName() << " " << Advertises(rc) << "\n";
      }
    }
  }
  return out.ok() ? 0 : 2;
}

}  // namespace hcashare::cli
