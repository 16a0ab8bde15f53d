// The configuration validator's walker, shared by validator.cc (the document, its entries
// and their scalar keys) and validator_selectors.cc (the device selection). Internal to
// config/; the interface is config/validator.h.
#pragma once

#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/config.h"
#include "config/json_fields.h"
#include "config/selector_values.h"
#include "config/validator.h"

namespace hcashare::config::detail {

using nlohmann::json;

// The mode as far as the checks of the keys that depend on it are concerned. kUnknown when
// `mode` is invalid or misspelt: those keys then get no mode-specific complaints.
// (Not std::optional<PoolMode>, on which GCC 12 reports a false -Wmaybe-uninitialized.)
enum class ModeCheck { kShared, kExclusive, kUnknown };
// The same for `api`: kUnknown when it is invalid or misspelt.
enum class ApiCheck { kDevicePlugin, kDra, kUnknown };

// Walks a parsed document, collecting every problem, and builds the config.
class Validator {
 public:
  // `yaml`: the document was YAML (type mismatches then get quoting hints).
  explicit Validator(bool yaml);

  PluginConfig Validate(const json& root);

  IssueList TakeErrors() { return std::move(errors_); }
  IssueList TakeWarnings() { return std::move(warnings_); }

 private:
  void Error(const std::string& path, std::string message) {
    errors_.push_back({path, std::move(message)});
  }

  std::set<std::string> CheckKeys(const FieldReader& object, const std::vector<std::string>& known);
  const std::string* ExpectNonEmptyString(FieldReader& reader, const json& value,
                                          const std::string& path);

  int ParseInterval(FieldReader& root);
  std::vector<ResourceConfig> ParseConfigList(FieldReader& root, bool suppress_required);
  ResourceConfig ParseEntry(FieldReader& entry);
  void CheckTotals(size_t entries, int64_t total, const std::string& path);
  void CheckEnvNames(const json& list, const std::string& path,
                     std::vector<ResourceConfig>* resources);
  std::string ParseResourceName(FieldReader& entry, bool required);
  std::string ParseResourcePrefix(FieldReader& entry);
  std::string ParseCdiKind(FieldReader& entry);
  ModeCheck ParseMode(FieldReader& entry);
  ApiCheck ParseApi(FieldReader& entry);
  void CheckDraEntry(FieldReader& entry);
  void ParseDraSettings(FieldReader& root, PluginConfig* out);
  int ParseRdmaHcaMax(FieldReader& entry, ModeCheck mode, bool required);
  void ParseTopology(FieldReader& entry, ModeCheck mode, ResourceConfig* out);
  bool ParseExclusiveOptIn(FieldReader& entry, ModeCheck mode, const std::string& key);
  Selectors ParseDeviceSelection(FieldReader& entry, bool required);
  bool ParseSelectorObject(FieldReader& selectors, Selectors* out);
  void ParseStringList(FieldReader& reader, const json& list, const std::string& path,
                       Normalizer normalize, std::vector<std::string>* out);
  void ParsePfNames(FieldReader& reader, const json& list, const std::string& path,
                    std::vector<PfNameSelector>* out);
  void ParseNumaNodes(FieldReader& reader, const json& list, const std::string& path,
                      std::vector<int>* out);

  const DescribeMismatch describe_;
  IssueList errors_{kMaxListedIssues};
  IssueList warnings_{kMaxListedIssues};
};

}  // namespace hcashare::config::detail
