#include <algorithm>
#include <iostream>

#include <nlohmann/json.hpp>

#include "config/config.h"
#include "hostfacts/snapshot_json.h"
#include "json/dump.h"
#include "tools/commands.h"
#include "tools/discover_report.h"

namespace hcashare::cli {
namespace {

// What the resource advertises, and through which API, in words.
std::string Advertises(const config::ResourceConfig& rc, const std::string& dra_driver) {
  if (rc.api == config::ResourceApi::kDra && rc.mode == config::PoolMode::kShared) {
    return "shared, through DRA (driver " + dra_driver +
           "): one device per HCA, allocatable to several claims, rdmaHcaMax=" +
           std::to_string(rc.rdma_hca_max) + " shares each";
  }
  if (rc.api == config::ResourceApi::kDra) {
    return "exclusive, through DRA (driver " + dra_driver +
           "): one named device per selected PCI function, SF or virtual RDMA device";
  }
  if (rc.mode == config::PoolMode::kShared) {
    return "shared: rdmaHcaMax=" + std::to_string(rc.rdma_hca_max) + " IDs, each granting the pool";
  }
  return "exclusive: one device per selected PCI function (ID = its PCI address)";
}

// What each resource selects on a node's snapshot: the functions in its pool (none when the
// pool is blocked), and the reasons for the first devices it leaves out when it has none.
struct Coverage {
  std::string resource;
  size_t devices = 0;
  std::vector<std::string> why_not;  // "0000:3b:00.0: selectors.vendors: has ...; wants ..."
};

constexpr size_t kMaxReasons = 5;

std::vector<Coverage> CoverageOn(const config::PluginConfig& config,
                                 const hostfacts::HostSnapshot& snap) {
  std::vector<Coverage> out;
  for (const auto& r : BuildDiscoverReport(config, snap, false).resources) {
    Coverage c;
    c.resource = r.rc.FullName();
    c.devices = r.pool.Usable() ? r.pool.hcas.size() : 0;
    for (size_t i = 0; c.devices == 0 && i < r.excluded.size() && i < kMaxReasons; ++i) {
      const auto& e = r.excluded[i];
      c.why_not.push_back(e.address + ": " + e.why.rule + ": " + e.why.detail);
    }
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace

int RunValidate(const std::string& file, bool json, const std::string& against) {
  config::ParseOutcome out = config::LoadConfigFile(file);
  std::vector<Coverage> coverage;
  if (!against.empty()) {
    auto snap = hostfacts::LoadSnapshotFile(against);
    if (!snap.ok()) {
      std::cerr << "hcashare validate: " << snap.status().message() << "\n";
      return 3;
    }
    if (out.config) coverage = CoverageOn(*out.config, *snap);
  }
  const bool empty = std::any_of(coverage.begin(), coverage.end(),
                                 [](const Coverage& c) { return c.devices == 0; });
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
        nlohmann::json r = {{"resource", rc.FullName()},
                            {"mode", config::PoolModeName(rc.mode)},
                            {"api", config::ResourceApiName(rc.api)}};
        if (rc.mode == config::PoolMode::kShared) r["rdmaHcaMax"] = rc.rdma_hca_max;
        res.push_back(std::move(r));
      }
      j["resources"] = res;
      j["periodicUpdateInterval"] = out.config->periodic_update_seconds;
      if (out.config->HasDra()) j["draDriver"] = out.config->dra_driver;
    }
    if (!against.empty()) {
      nlohmann::json cov = nlohmann::json::array();
      for (const auto& c : coverage) {
        cov.push_back({{"resource", c.resource}, {"devices", c.devices}, {"why_not", c.why_not}});
      }
      j["against"] = {{"snapshot", against}, {"resources", cov}};
    }
    std::cout << DumpJson(j, 2) << "\n";
  } else {
    std::cout << file << ": " << (out.ok() ? "valid" : "INVALID") << "\n"
              << config::FormatIssues(out);
    if (out.config) {
      for (const auto& rc : out.config->resources) {
        std::cout << "resource " << rc.FullName() << " " << Advertises(rc, out.config->dra_driver)
                  << "\n";
      }
    }
    for (const auto& c : coverage) {
      std::cout << "on " << against << ": " << c.resource << " selects " << c.devices
                << " device(s)" << (c.devices == 0 ? " -- WARNING: it will advertise nothing" : "")
                << "\n";
      for (const auto& w : c.why_not) std::cout << "  left out: " << w << "\n";
    }
  }
  if (!out.ok()) return 2;
  return empty ? 1 : 0;
}

}  // namespace hcashare::cli
