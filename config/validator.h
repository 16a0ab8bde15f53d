// Schema validation of a parsed configuration document (see config.h for the rules):
// walks the known keys, records every problem with its JSON path, and builds the
// PluginConfig. Internal to the config module.
#pragma once

#include <vector>

#include <nlohmann/json.hpp>

#include "config/config.h"
#include "config/json_fields.h"

namespace hcashare::config {

// What validation found. `config` is meaningful only when `errors` is empty.
struct Validation {
  PluginConfig config;
  IssueList errors{kMaxListedIssues};
  IssueList warnings{kMaxListedIssues};
};

// Validates `root`. `yaml` adds YAML-specific hints (about quoting) to type errors.
// Throws only std::bad_alloc.
Validation ValidateDocument(const nlohmann::json& root, bool yaml);

}  // namespace hcashare::config
