#include "config/validator.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "config/document.h"
#include "config/names.h"
#include "config/selector_values.h"
#include "config/suggest.h"

namespace hcashare::config {
namespace {

using nlohmann::json;

// A selector list of strings: its key, where it goes, and how values are normalised.
struct StringSelector {
  const char* key;
  std::vector<std::string> Selectors::*field;
  Normalizer normalize;
};

const StringSelector kStringSelectors[] = {
    {"vendors", &Selectors::vendors, NormalizeHexId},
    {"deviceIDs", &Selectors::device_ids, NormalizeHexId},
    {"drivers", &Selectors::drivers, KeepAsIs},
    {"ifNames", &Selectors::if_names, KeepAsIs},
    {"linkTypes", &Selectors::link_types, NormalizeLinkType},
    {"pciAddresses", &Selectors::pci_addresses, NormalizePciAddress},
    {"rdmaDevices", &Selectors::rdma_devices, KeepAsIs},
};
constexpr const char* kPfNamesKey = "pfNames";
constexpr const char* kNumaNodesKey = "numaNodes";
constexpr const char* kIsVfKey = "isVF";

const std::vector<std::string>& TopLevelKeys() {
  static const std::vector<std::string> keys = {"periodicUpdateInterval", "configList"};
  return keys;
}

const std::vector<std::string>& EntryKeys() {
  static const std::vector<std::string> keys = {"resourceName", "resourcePrefix", "mode",
                                                "rdmaHcaMax",   "topologyAware",  "excludeTopology",
                                                "cdiKind",      "allowPfWithVfs", "allowHostUplink",
                                                "setNcclIbHca", "devices",        "selectors"};
  return keys;
}

// In the order of the documentation; "did you mean" ties go to the earlier key.
const std::vector<std::string>& SelectorKeys() {
  static const std::vector<std::string> keys = {
      "vendors",      "deviceIDs", "drivers",     "ifNames",     "linkTypes",
      "pciAddresses", kPfNamesKey, "rdmaDevices", kNumaNodesKey, kIsVfKey};
  return keys;
}

// The explanation given when rdmaHcaMax is set on an exclusive resource.
constexpr const char* kRdmaHcaMaxInExclusive =
    "is not allowed in exclusive mode: an exclusive resource advertises one device per PCI "
    "function (its ID is the PCI address), so there is no share count; remove it, or use "
    "\"mode\": \"shared\"";

std::string Join(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& item : items) out += (out.empty() ? "" : ", ") + item;
  return out;
}

// Appends values to a selector list, skipping ones already in it (lists are sets; the
// first occurrence keeps its place). O(n log n) in the list size, even for huge lists.
template <typename T, typename Less = std::less<T>>
class UniqueAppender {
 public:
  explicit UniqueAppender(std::vector<T>* list) : list_(list), seen_(list->begin(), list->end()) {}
  void Append(const T& value) {
    if (seen_.insert(value).second) list_->push_back(value);
  }

 private:
  std::vector<T>* list_;
  std::set<T, Less> seen_;
};

// The mode as far as the checks of the keys that depend on it are concerned. kUnknown when
// `mode` is invalid or misspelt: those keys then get no mode-specific complaints.
// (Not std::optional<PoolMode>, on which GCC 12 reports a false -Wmaybe-uninitialized.)
enum class ModeCheck { kShared, kExclusive, kUnknown };

// A strict weak order on PfNameSelector, for de-duplicating pfNames.
struct PfNameSelectorLess {
  bool operator()(const PfNameSelector& a, const PfNameSelector& b) const {
    return std::tie(a.pf, a.first_vf, a.last_vf) < std::tie(b.pf, b.first_vf, b.last_vf);
  }
};

// The member `key` of `object`, or nullptr when it is absent or null (null means unset).
const json* FindSet(const json& object, const std::string& key) {
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) return nullptr;
  return &*it;
}

// Walks a parsed document, collecting every problem, and builds the config.
class Validator {
 public:
  explicit Validator(bool yaml) : yaml_(yaml) {}

  PluginConfig Validate(const json& root);

  std::vector<ConfigIssue> TakeErrors() { return std::move(errors_); }
  std::vector<ConfigIssue> TakeWarnings() { return std::move(warnings_); }

 private:
  void Error(const std::string& path, std::string message) {
    errors_.push_back({path, std::move(message)});
  }

  std::set<std::string> CheckKeys(const json& object, const std::string& path,
                                  const std::vector<std::string>& known);
  void TypeError(const json& value, const std::string& path, const std::string& expected);
  bool ExpectString(const json& value, const std::string& path);
  const std::string* ExpectNonEmptyString(const json& value, const std::string& path);
  std::optional<std::int64_t> ExpectInteger(const json& value, const std::string& path);
  std::optional<bool> ParseOptionalBool(const json& object, const std::string& object_path,
                                        const std::string& key);

  int ParseInterval(const json& root);
  std::vector<ResourceConfig> ParseConfigList(const json& root, bool suppress_required);
  ResourceConfig ParseEntry(const json& entry, const std::string& path);
  void CheckTotals(const std::vector<ResourceConfig>& resources, const std::string& path);
  std::string ParseResourceName(const json& entry, const std::string& path, bool required);
  std::string ParseResourcePrefix(const json& entry, const std::string& path);
  std::string ParseCdiKind(const json& entry, const std::string& path);
  ModeCheck ParseMode(const json& entry, const std::string& path);
  int ParseRdmaHcaMax(const json& entry, const std::string& path, ModeCheck mode, bool required);
  int CheckRdmaHcaMax(const json& value, const std::string& path);
  void ParseTopology(const json& entry, const std::string& path, ModeCheck mode,
                     ResourceConfig* out);
  bool ParseExclusiveOptIn(const json& entry, const std::string& path, ModeCheck mode,
                           const std::string& key);
  Selectors ParseDeviceSelection(const json& entry, const std::string& path, bool required);
  bool ParseSelectorObject(const json& object, const std::string& path, Selectors* out);
  void ParseStringList(const json& list, const std::string& path, Normalizer normalize,
                       std::vector<std::string>* out);
  void ParsePfNames(const json& list, const std::string& path, std::vector<PfNameSelector>* out);
  void ParseNumaNodes(const json& list, const std::string& path, std::vector<int>* out);

  const bool yaml_;
  std::vector<ConfigIssue> errors_;
  std::vector<ConfigIssue> warnings_;
};

// Reports unknown keys of `object`. Returns the known keys suggested for typos, so that
// "X is required" is not reported on top of "unknown key x (did you mean X?)".
std::set<std::string> Validator::CheckKeys(const json& object, const std::string& path,
                                           const std::vector<std::string>& known) {
  std::set<std::string> suggested;
  for (auto it = object.begin(); it != object.end(); ++it) {
    const std::string& key = it.key();
    if (std::find(known.begin(), known.end(), key) != known.end()) continue;
    std::string message = "unknown key " + Quote(key);
    if (std::optional<std::string> s = SuggestKey(key, known)) {
      message += " (did you mean " + Quote(*s) + "?)";
      suggested.insert(*s);
    } else {
      message += " (known keys: " + Join(known) + ")";
    }
    Error(JoinKey(path, key), std::move(message));
  }
  return suggested;
}

// The YAML hint for a string given where a boolean is expected: "true"/"false" were
// quoted; anything else (yes, on, ...) is a string under YAML 1.2.
std::string YamlBooleanHint(const std::string& text) {
  if (text == "true" || text == "false") return " (remove the quotes in YAML)";
  return " (YAML booleans are written true or false)";
}

// "must be <expected>, got <what>", with the value when it helps and a YAML quoting hint.
void Validator::TypeError(const json& value, const std::string& path, const std::string& expected) {
  std::string got = value.type_name();
  const bool want_integer = expected == "an integer";
  const bool want_boolean = expected == "a boolean";
  if (want_integer && value.is_number_float()) {
    got = std::isfinite(value.get<double>()) ? value.dump() : "a non-finite number";
  } else if ((want_integer || want_boolean) && value.is_string()) {
    const std::string& text = value.get_ref<const std::string&>();
    got += " " + Quote(text);
    if (yaml_) got += want_integer ? " (remove the quotes in YAML)" : YamlBooleanHint(text);
  } else if (yaml_ && expected == "a string" && (value.is_number() || value.is_boolean())) {
    got += " (quote the value in YAML)";
  }
  Error(path, "must be " + expected + ", got " + got);
}

bool Validator::ExpectString(const json& value, const std::string& path) {
  if (value.is_string()) return true;
  TypeError(value, path, "a string");
  return false;
}

// The value as a non-empty string, or nullptr after reporting why it is not one.
const std::string* Validator::ExpectNonEmptyString(const json& value, const std::string& path) {
  if (!ExpectString(value, path)) return nullptr;
  const std::string& text = value.get_ref<const std::string&>();
  if (text.empty()) {
    Error(path, "must not be empty");
    return nullptr;
  }
  return &text;
}

// The boolean member `key` of `object`; std::nullopt when it is absent, null or (reported)
// not a boolean.
std::optional<bool> Validator::ParseOptionalBool(const json& object, const std::string& object_path,
                                                 const std::string& key) {
  const json* value = FindSet(object, key);
  if (value == nullptr) return std::nullopt;
  if (value->is_boolean()) return value->get<bool>();
  TypeError(*value, JoinKey(object_path, key), "a boolean");
  return std::nullopt;
}

// The value as an integer; floats (even 1000.0), strings and booleans are type errors.
std::optional<std::int64_t> Validator::ExpectInteger(const json& value, const std::string& path) {
  if (value.is_number_unsigned()) {
    const std::uint64_t u = value.get<std::uint64_t>();
    return u > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())
               ? std::numeric_limits<std::int64_t>::max()
               : static_cast<std::int64_t>(u);
  }
  if (value.is_number_integer()) return value.get<std::int64_t>();
  TypeError(value, path, "an integer");
  return std::nullopt;
}

PluginConfig Validator::Validate(const json& root) {
  PluginConfig config;
  if (!root.is_object()) {
    TypeError(root, "$", "an object");
    return config;
  }
  const std::set<std::string> suggested = CheckKeys(root, "$", TopLevelKeys());
  config.periodic_update_seconds = ParseInterval(root);
  config.resources = ParseConfigList(root, suggested.count("configList") > 0);
  return config;
}

// periodicUpdateInterval: seconds >= 0; absent or null -> the default; 0 disables.
int Validator::ParseInterval(const json& root) {
  const std::string path = "$.periodicUpdateInterval";
  const json* value = FindSet(root, "periodicUpdateInterval");
  if (value == nullptr) return kDefaultPeriodicUpdateSeconds;
  const std::optional<std::int64_t> seconds = ExpectInteger(*value, path);
  if (!seconds) return kDefaultPeriodicUpdateSeconds;
  if (*seconds < 0) {
    Error(path, "must be >= 0 seconds, got " + std::to_string(*seconds) +
                    " (use 0 to disable periodic updates)");
    return kDefaultPeriodicUpdateSeconds;
  }
  if (*seconds > std::numeric_limits<int>::max()) {
    Error(path, "must be at most " + std::to_string(std::numeric_limits<int>::max()) +
                    " seconds, got " + std::to_string(*seconds));
    return kDefaultPeriodicUpdateSeconds;
  }
  return static_cast<int>(*seconds);
}

// configList: a non-empty array of resource entries with unique names.
std::vector<ResourceConfig> Validator::ParseConfigList(const json& root, bool suppress_required) {
  const std::string path = "$.configList";
  std::vector<ResourceConfig> resources;
  const json* list = FindSet(root, "configList");
  if (list == nullptr) {
    if (!suppress_required) Error(path, "is required: list the resources to advertise");
    return resources;
  }
  if (!list->is_array()) {
    TypeError(*list, path, "an array");
    return resources;
  }
  if (list->empty()) {
    Error(path, "no resources configured (the list is empty)");
    return resources;
  }
  std::map<std::string, size_t> first_index;  // resourceName -> index of first use
  std::map<std::string, size_t> kind_index;   // effective CDI kind -> index of first use
  for (size_t i = 0; i < list->size(); ++i) {
    const std::string entry_path = JoinIndex(path, i);
    const json& entry = (*list)[i];
    if (!entry.is_object()) {
      TypeError(entry, entry_path, "an object");
      continue;
    }
    ResourceConfig resource = ParseEntry(entry, entry_path);
    if (!resource.resource_name.empty()) {
      auto [it, inserted] = first_index.emplace(resource.resource_name, i);
      if (!inserted) {
        Error(JoinKey(entry_path, "resourceName"),
              "duplicate resourceName " + Quote(resource.resource_name) + " (already used by " +
                  JoinIndex(path, it->second) + ")");
      }
    }
    // Two specs of one CDI kind would both define "all" (or the same node names), which
    // CDI registries refuse: each resource needs a kind of its own.
    if (!resource.resource_name.empty() && !resource.resource_prefix.empty()) {
      const std::string kind = resource.cdi_kind.empty() ? resource.FullName() : resource.cdi_kind;
      auto [it, inserted] = kind_index.emplace(kind, i);
      if (!inserted && first_index.count(resource.resource_name) &&
          first_index[resource.resource_name] == i) {
        Error(JoinKey(entry_path, "cdiKind"), "CDI kind " + Quote(kind) + " is already used by " +
                                                  JoinIndex(path, it->second) +
                                                  "; each resource needs its own kind");
      }
    }
    resources.push_back(std::move(resource));
  }
  CheckTotals(resources, path);
  return resources;
}

// The limits on the whole list (kMaxResources, kMaxTotalDeviceIds).
void Validator::CheckTotals(const std::vector<ResourceConfig>& resources, const std::string& path) {
  if (resources.size() > static_cast<size_t>(kMaxResources)) {
    Error(path, "has " + std::to_string(resources.size()) + " resources; at most " +
                    std::to_string(kMaxResources) +
                    " are allowed (each is a gRPC server and a kubelet registration)");
  }
  int64_t total = 0;
  for (const auto& r : resources) total += r.rdma_hca_max;
  if (total > kMaxTotalDeviceIds) {
    Error(path, "the resources' rdmaHcaMax add up to " + std::to_string(total) +
                    " device IDs; at most " + std::to_string(kMaxTotalDeviceIds) +
                    " are allowed in all: every ID is held in memory and listed to the "
                    "kubelet, and the daemon must stay inside its memory limit");
  }
}

// One configList entry. Fields with errors are left at their defaults.
ResourceConfig Validator::ParseEntry(const json& entry, const std::string& path) {
  const std::set<std::string> suggested = CheckKeys(entry, path, EntryKeys());
  ResourceConfig resource;
  resource.resource_name = ParseResourceName(entry, path, suggested.count("resourceName") == 0);
  resource.resource_prefix = ParseResourcePrefix(entry, path);
  // A misspelt "mode" key may have meant either mode: check nothing that depends on it.
  const ModeCheck mode = suggested.count("mode") > 0 ? ModeCheck::kUnknown : ParseMode(entry, path);
  resource.mode = mode == ModeCheck::kExclusive ? PoolMode::kExclusive : PoolMode::kShared;
  resource.rdma_hca_max = ParseRdmaHcaMax(entry, path, mode, suggested.count("rdmaHcaMax") == 0);
  ParseTopology(entry, path, mode, &resource);
  resource.cdi_kind = ParseCdiKind(entry, path);
  resource.allow_pf_with_vfs = ParseExclusiveOptIn(entry, path, mode, "allowPfWithVfs");
  resource.allow_host_uplink = ParseExclusiveOptIn(entry, path, mode, "allowHostUplink");
  resource.set_nccl_ib_hca = ParseOptionalBool(entry, path, "setNcclIbHca").value_or(false);
  const bool selection_required =
      suggested.count("selectors") == 0 && suggested.count("devices") == 0;
  resource.selectors = ParseDeviceSelection(entry, path, selection_required);
  return resource;
}

// resourceName: required; see ResourceNameProblems. Returns the name when it is a string
// (even an invalid one), for the duplicate check.
std::string Validator::ParseResourceName(const json& entry, const std::string& entry_path,
                                         bool required) {
  const std::string path = JoinKey(entry_path, "resourceName");
  const json* value = FindSet(entry, "resourceName");
  if (value == nullptr) {
    if (required) Error(path, "is required");
    return "";
  }
  if (!ExpectString(*value, path)) return "";
  const std::string& name = value->get_ref<const std::string&>();
  for (std::string& problem : ResourceNameProblems(name)) Error(path, std::move(problem));
  return name;
}

// resourcePrefix: optional DNS subdomain, default "rdma".
std::string Validator::ParseResourcePrefix(const json& entry, const std::string& entry_path) {
  const std::string path = JoinKey(entry_path, "resourcePrefix");
  const json* value = FindSet(entry, "resourcePrefix");
  if (value == nullptr) return kDefaultResourcePrefix;
  if (!ExpectString(*value, path)) return kDefaultResourcePrefix;
  const std::string& prefix = value->get_ref<const std::string&>();
  const std::string problem = ResourcePrefixProblem(prefix);
  if (!problem.empty()) Error(path, problem);
  return prefix;
}

// cdiKind: optional CDI kind ("" when absent or invalid, which is reported).
std::string Validator::ParseCdiKind(const json& entry, const std::string& entry_path) {
  const std::string path = JoinKey(entry_path, "cdiKind");
  const json* value = FindSet(entry, "cdiKind");
  if (value == nullptr || !ExpectString(*value, path)) return "";
  const std::string& kind = value->get_ref<const std::string&>();
  const std::string problem = CdiKindProblem(kind);
  if (!problem.empty()) {
    Error(path, problem);
    return "";
  }
  return kind;
}

// mode: "shared" (default when absent or null) or "exclusive", case-sensitive. Never
// inferred from other keys. kUnknown when the value is invalid (reported).
ModeCheck Validator::ParseMode(const json& entry, const std::string& entry_path) {
  const std::string path = JoinKey(entry_path, "mode");
  const json* value = FindSet(entry, "mode");
  if (value == nullptr) return ModeCheck::kShared;
  if (!ExpectString(*value, path)) return ModeCheck::kUnknown;
  const std::string& mode = value->get_ref<const std::string&>();
  if (mode == "shared") return ModeCheck::kShared;
  if (mode == "exclusive") return ModeCheck::kExclusive;
  Error(path, "unknown mode " + Quote(mode) +
                  "; accepted values: \"shared\" (the default), \"exclusive\" (case-sensitive)");
  return ModeCheck::kUnknown;
}

// rdmaHcaMax: in shared mode a required integer in 1..kMaxRdmaHcaMax; in exclusive mode
// not allowed. When `mode` is unknown (its own error) a given value is still range-checked
// but a missing one is not reported. Returns 0 unless a valid value was given.
int Validator::ParseRdmaHcaMax(const json& entry, const std::string& entry_path, ModeCheck mode,
                               bool required) {
  const std::string path = JoinKey(entry_path, "rdmaHcaMax");
  const json* value = FindSet(entry, "rdmaHcaMax");
  if (mode == ModeCheck::kExclusive) {
    if (value != nullptr) Error(path, kRdmaHcaMaxInExclusive);
    return 0;
  }
  if (value == nullptr) {
    if (required && mode == ModeCheck::kShared) {
      Error(path, "is required in shared mode: the number of pods that may share each device (1.." +
                      std::to_string(kMaxRdmaHcaMax) +
                      "); to give each pod whole devices use \"mode\": \"exclusive\" instead");
    }
    return 0;
  }
  return CheckRdmaHcaMax(*value, path);
}

// A given rdmaHcaMax value: an integer in 1..kMaxRdmaHcaMax, else 0 (reported).
int Validator::CheckRdmaHcaMax(const json& value, const std::string& path) {
  const std::optional<std::int64_t> max = ExpectInteger(value, path);
  if (!max) return 0;
  if (*max < 1) {
    Error(path, "must be at least 1, got " + std::to_string(*max));
    return 0;
  }
  if (*max > kMaxRdmaHcaMax) {
    Error(path, "must be at most " + std::to_string(kMaxRdmaHcaMax) + ", got " +
                    std::to_string(*max) +
                    ": every share is a separate device ID in the ListAndWatch response, and "
                    "the kubelet rejects gRPC messages larger than 4 MiB");
    return 0;
  }
  return static_cast<int>(*max);
}

// topologyAware and excludeTopology: booleans, default false. topologyAware is only for
// shared mode and contradicts excludeTopology; when it is rejected it stays false.
void Validator::ParseTopology(const json& entry, const std::string& path, ModeCheck mode,
                              ResourceConfig* out) {
  const bool aware = ParseOptionalBool(entry, path, "topologyAware").value_or(false);
  out->exclude_topology = ParseOptionalBool(entry, path, "excludeTopology").value_or(false);
  if (!aware) return;
  if (mode == ModeCheck::kExclusive) {
    Error(JoinKey(path, "topologyAware"),
          "is only allowed in shared mode: exclusive devices already carry their own NUMA "
          "node, so there is nothing to spread");
    return;
  }
  if (out->exclude_topology) {
    Error(path,
          "\"topologyAware\": true and \"excludeTopology\": true contradict each other: "
          "topology-aware IDs are spread over NUMA nodes, but excludeTopology hides the NUMA "
          "nodes from the kubelet; set only one");
    return;
  }
  out->topology_aware = true;
}

// allowPfWithVfs / allowHostUplink: booleans, default false, only for exclusive mode (a
// shared pool always uses the PF's HCA and never hands out its netdev).
bool Validator::ParseExclusiveOptIn(const json& entry, const std::string& path, ModeCheck mode,
                                    const std::string& key) {
  const bool on = ParseOptionalBool(entry, path, key).value_or(false);
  if (on && mode == ModeCheck::kShared) {
    Error(JoinKey(path, key),
          "is only allowed in exclusive mode: a shared pool grants the PF's RDMA device to "
          "every pod and never hands out a netdev, so there is nothing to opt in to");
    return false;
  }
  return on;
}

// `devices` (deprecated, folded into ifNames) and `selectors`: exactly one must select
// something. `required` is false when a misspelt key already explains the absence.
Selectors Validator::ParseDeviceSelection(const json& entry, const std::string& path,
                                          bool required) {
  Selectors selectors;
  bool devices_set = false, selectors_set = false, shape_error = false;
  const std::string devices_path = JoinKey(path, "devices");
  if (const json* devices = FindSet(entry, "devices")) {
    warnings_.push_back({devices_path,
                         "\"devices\" is deprecated; list the interfaces in "
                         "\"selectors\": {\"ifNames\": [...]} instead"});
    if (devices->is_array()) {
      devices_set = !devices->empty();
      ParseStringList(*devices, devices_path, KeepAsIs, &selectors.if_names);
    } else {
      TypeError(*devices, devices_path, "an array");
      shape_error = true;
    }
  }
  if (const json* object = FindSet(entry, "selectors")) {
    if (object->is_object()) {
      selectors_set = ParseSelectorObject(*object, JoinKey(path, "selectors"), &selectors);
    } else {
      TypeError(*object, JoinKey(path, "selectors"), "an object");
      shape_error = true;
    }
  }
  if (devices_set && selectors_set) {
    Error(path,
          "both \"devices\" and \"selectors\" are set; move the devices into "
          "\"selectors.ifNames\"");
  } else if (!devices_set && !selectors_set && !shape_error && required) {
    Error(path,
          "selects no devices: set at least one list in \"selectors\" (for example "
          "\"ifNames\" or \"vendors\")");
  }
  return selectors;
}

// Fills `out` from a selectors object. Returns true when any list was given a value (or a
// non-list value, already reported) or isVF is set, i.e. the user did try to select
// something.
bool Validator::ParseSelectorObject(const json& object, const std::string& path, Selectors* out) {
  // A misspelt list name counts as an attempt to select (its error is enough).
  bool any = !CheckKeys(object, path, SelectorKeys()).empty();
  auto visit = [&](const std::string& key, auto&& parse) {
    const json* list = FindSet(object, key);
    if (list == nullptr) return;
    const std::string list_path = JoinKey(path, key);
    if (!list->is_array()) {
      TypeError(*list, list_path, "an array");
    } else {
      parse(*list, list_path);
    }
    any = any || !list->is_array() || !list->empty();
  };
  for (const StringSelector& s : kStringSelectors) {
    visit(s.key, [&](const json& list, const std::string& list_path) {
      ParseStringList(list, list_path, s.normalize, &(out->*s.field));
    });
  }
  visit(kPfNamesKey, [&](const json& list, const std::string& list_path) {
    ParsePfNames(list, list_path, &out->pf_names);
  });
  visit(kNumaNodesKey, [&](const json& list, const std::string& list_path) {
    ParseNumaNodes(list, list_path, &out->numa_nodes);
  });
  out->is_vf = ParseOptionalBool(object, path, kIsVfKey);
  return any || FindSet(object, kIsVfKey) != nullptr;
}

// An array of non-empty strings, each normalised; duplicates collapse into one.
void Validator::ParseStringList(const json& list, const std::string& path, Normalizer normalize,
                                std::vector<std::string>* out) {
  UniqueAppender<std::string> appender(out);
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string item_path = JoinIndex(path, i);
    const std::string* value = ExpectNonEmptyString(list[i], item_path);
    if (value == nullptr) continue;
    std::string normalized;
    std::string problem = normalize(*value, &normalized);
    if (!problem.empty()) {
      Error(item_path, std::move(problem));
      continue;
    }
    appender.Append(normalized);
  }
}

// pfNames: an array of "NAME" or "NAME#RANGES" strings (see ParsePfNameSelectors);
// entries that parse to the same selector collapse into one.
void Validator::ParsePfNames(const json& list, const std::string& path,
                             std::vector<PfNameSelector>* out) {
  UniqueAppender<PfNameSelector, PfNameSelectorLess> appender(out);
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string item_path = JoinIndex(path, i);
    const std::string* value = ExpectNonEmptyString(list[i], item_path);
    if (value == nullptr) continue;
    std::vector<PfNameSelector> selectors;
    std::string problem = ParsePfNameSelectors(*value, &selectors);
    if (!problem.empty()) {
      Error(item_path, std::move(problem));
      continue;
    }
    for (const auto& selector : selectors) appender.Append(selector);
  }
}

// An array of NUMA node numbers (non-negative integers); duplicates collapse into one.
void Validator::ParseNumaNodes(const json& list, const std::string& path, std::vector<int>* out) {
  UniqueAppender<int> appender(out);
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string item_path = JoinIndex(path, i);
    const std::optional<std::int64_t> node = ExpectInteger(list[i], item_path);
    if (!node) continue;
    if (*node < 0 || *node > std::numeric_limits<int>::max()) {
      Error(item_path, "must be a NUMA node number >= 0, got " + std::to_string(*node));
      continue;
    }
    appender.Append(static_cast<int>(*node));
  }
}

}  // namespace

Validation ValidateDocument(const json& root, bool yaml) {
  Validator validator(yaml);
  Validation result;
  result.config = validator.Validate(root);
  result.errors = validator.TakeErrors();
  result.warnings = validator.TakeWarnings();
  return result;
}

}  // namespace hcashare::config
