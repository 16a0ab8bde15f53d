// Helpers shared by the config tests (config_fields_test.cc, config_selectors_test.cc,
// config_input_test.cc): the Mellanox example, one-entry configs and error checks.
#pragma once

#include <set>
#include <string>

#include <gtest/gtest.h>

#include "config/config.h"

namespace hcashare::config::test_util {

// The example from the Mellanox k8s-rdma-shared-dev-plugin README.
inline constexpr const char* kMellanoxJson = R"({
  "periodicUpdateInterval": 300,
  "configList": [
    {"resourceName": "hca_shared_devices_a", "rdmaHcaMax": 1000, "devices": ["ib0", "ib1"]},
    {"resourceName": "hca_shared_devices_b", "rdmaHcaMax": 500,
     "selectors": {"vendors": ["15b3"], "deviceIDs": ["1017"], "ifNames": ["ib3", "ib4"]}}
  ]
})";

// The same configuration written as YAML.
inline constexpr const char* kMellanoxYaml = R"(
periodicUpdateInterval: 300
configList:
  - resourceName: hca_shared_devices_a
    rdmaHcaMax: 1000
    devices: [ib0, ib1]
  - resourceName: hca_shared_devices_b
    rdmaHcaMax: 500
    selectors:
      vendors: ["15b3"]
      deviceIDs: ["1017"]
      ifNames:
        - ib3
        - ib4
)";

inline ParseOutcome Json(const std::string& text) { return ParseConfig(text, ConfigFormat::kJson); }
inline ParseOutcome Yaml(const std::string& text) { return ParseConfig(text, ConfigFormat::kYaml); }

// A config with one entry, given as the JSON text of that entry.
inline ParseOutcome Entry(const std::string& entry_json) {
  return Json(R"({"configList": [)" + entry_json + "]}");
}

// A config with one valid entry whose selectors object is `selectors_json`.
inline ParseOutcome WithSelectors(const std::string& selectors_json) {
  return Entry(R"({"resourceName": "r", "rdmaHcaMax": 10, "selectors": )" + selectors_json + "}");
}

inline std::set<std::string> ErrorPaths(const ParseOutcome& outcome) {
  std::set<std::string> paths;
  for (const ConfigIssue& e : outcome.errors) paths.insert(e.path);
  return paths;
}

// Asserts that there is exactly one error, at `path`, whose message contains `text`.
inline void ExpectOnlyError(const ParseOutcome& outcome, const std::string& path,
                            const std::string& text) {
  ASSERT_EQ(outcome.errors.size(), 1u) << FormatIssues(outcome);
  EXPECT_EQ(outcome.errors[0].path, path) << FormatIssues(outcome);
  EXPECT_NE(outcome.errors[0].message.find(text), std::string::npos)
      << "message: " << outcome.errors[0].message << "\nexpected to contain: " << text;
  EXPECT_FALSE(outcome.config.has_value());
  EXPECT_FALSE(outcome.ok());
}

// The single resource of a successful one-entry parse (a copy: outcomes are temporaries).
inline ResourceConfig OnlyResource(const ParseOutcome& outcome) {
  EXPECT_TRUE(outcome.ok()) << FormatIssues(outcome);
  if (!outcome.config || outcome.config->resources.size() != 1) {
    ADD_FAILURE() << "expected exactly one resource\n" << FormatIssues(outcome);
    return {};
  }
  return outcome.config->resources[0];
}

inline Selectors SelectorsOf(const ParseOutcome& outcome) {
  return OnlyResource(outcome).selectors;
}

// A YAML config with one entry whose body lines (indented by 4) are `fields`.
inline ParseOutcome YamlEntry(const std::string& fields) {
  return Yaml("configList:\n  - resourceName: r\n" + fields);
}

// One shared entry with `fields` (JSON members, comma-terminated) and valid selectors.
inline ParseOutcome SharedWith(const std::string& fields) {
  return Entry(R"({"resourceName": "r", "rdmaHcaMax": 8, )" + fields +
               R"( "selectors": {"ifNames": ["ib0"]}})");
}

// As SharedWith, for an exclusive entry.
inline ParseOutcome ExclusiveWith(const std::string& fields) {
  return Entry(R"({"resourceName": "r", "mode": "exclusive", )" + fields +
               R"( "selectors": {"ifNames": ["ib0"]}})");
}

}  // namespace hcashare::config::test_util
