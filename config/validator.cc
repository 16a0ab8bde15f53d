#include "config/validator.h"

#include <algorithm>
#include <cctype>
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

#include "config/json_fields.h"
#include "config/names.h"
#include "config/selector_values.h"
#include "config/suggest.h"
#include "config/validator_impl.h"

namespace hcashare::config {
namespace detail {
namespace {

using nlohmann::json;

const std::vector<std::string>& TopLevelKeys() {
  static const std::vector<std::string> keys = {"periodicUpdateInterval", "configList", "draDriver",
                                                "draNumaNode"};
  return keys;
}

const std::vector<std::string>& EntryKeys() {
  static const std::vector<std::string> keys = {
      "resourceName",  "resourcePrefix",    "api",     "mode",           "rdmaHcaMax",
      "topologyAware", "excludeTopology",   "cdiKind", "allowPfWithVfs", "allowHostUplink",
      "setNcclIbHca",  "setRdmaDevicesEnv", "devices", "selectors"};
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

// The YAML hint for a string given where a boolean is expected: "true"/"false" were
// quoted; anything else (yes, on, ...) is a string under YAML 1.2.
std::string YamlBooleanHint(const std::string& text) {
  if (text == "true" || text == "false") return " (remove the quotes in YAML)";
  return " (YAML booleans are written true or false)";
}

// The YAML hint for a string given where an integer is expected: a quoted decimal number
// ("8"); a number YAML 1.2 reads as a string (0x10, 0o17, 1e3, 1_000) is written in decimal.
std::string YamlIntegerHint(const std::string& text) {
  const size_t digits = text.find_first_not_of("0123456789", text.rfind('-', 0) == 0 ? 1 : 0);
  if (!text.empty() && text != "-" && digits == std::string::npos) {
    return " (remove the quotes in YAML)";
  }
  if (!text.empty() && (std::isdigit(static_cast<unsigned char>(text[0])) != 0 || text[0] == '-')) {
    return " (write the number in decimal digits)";
  }
  return "";
}

// How the configuration words a value of the wrong type, in "must be <expected>, got
// <got>": its type, the value where it helps, and in YAML a quoting hint.
std::string DescribeMismatchIn(const json& value, std::string_view expected, bool yaml) {
  std::string got = value.type_name();
  const bool want_integer = expected == "an integer";
  const bool want_boolean = expected == "a boolean";
  if (want_integer && value.is_number_float()) {
    got = std::isfinite(value.get<double>()) ? value.dump() : "a non-finite number";
  } else if ((want_integer || want_boolean) && value.is_string()) {
    const std::string& text = value.get_ref<const std::string&>();
    got += " " + Quote(text);
    if (yaml) got += want_integer ? YamlIntegerHint(text) : YamlBooleanHint(text);
  } else if (yaml && expected == "a string" && (value.is_number() || value.is_boolean())) {
    got += " (quote the value in YAML)";
  }
  return got;
}

std::string DescribeMismatchInJson(const json& value, std::string_view expected) {
  return DescribeMismatchIn(value, expected, /*yaml=*/false);
}

std::string DescribeMismatchInYaml(const json& value, std::string_view expected) {
  return DescribeMismatchIn(value, expected, /*yaml=*/true);
}

}  // namespace

Validator::Validator(bool yaml)
    : describe_(yaml ? DescribeMismatchInYaml : DescribeMismatchInJson) {}

// Reports unknown keys of the object `reader` reads. Returns the known keys suggested for
// typos, so that "X is required" is not reported on top of "unknown key x (did you mean X?)".
std::set<std::string> Validator::CheckKeys(const FieldReader& reader,
                                           const std::vector<std::string>& known) {
  std::set<std::string> suggested;
  for (auto it = reader.object().begin(); it != reader.object().end(); ++it) {
    const std::string& key = it.key();
    if (std::find(known.begin(), known.end(), key) != known.end()) continue;
    std::string message = "unknown key " + Quote(key);
    if (std::optional<std::string> s = SuggestKey(key, known)) {
      message += " (did you mean " + Quote(*s) + "?)";
      suggested.insert(*s);
    } else {
      message += " (known keys: " + Join(known) + ")";
    }
    Error(reader.PathOf(key), std::move(message));
  }
  return suggested;
}

// The value as a non-empty string, or nullptr after reporting why it is not one.
const std::string* Validator::ExpectNonEmptyString(FieldReader& reader, const json& value,
                                                   const std::string& path) {
  if (!value.is_string()) {
    reader.Mismatch(value, path, "a string");
    return nullptr;
  }
  const std::string& text = value.get_ref<const std::string&>();
  if (text.empty()) {
    Error(path, "must not be empty");
    return nullptr;
  }
  return &text;
}

PluginConfig Validator::Validate(const json& root) {
  PluginConfig config;
  FieldReader top(root, "$", &errors_, describe_);
  if (!root.is_object()) {
    top.Mismatch(root, "$", "an object");
    return config;
  }
  const std::set<std::string> suggested = CheckKeys(top, TopLevelKeys());
  config.periodic_update_seconds = ParseInterval(top);
  config.resources = ParseConfigList(top, suggested.count("configList") > 0);
  ParseDraSettings(top, &config);
  return config;
}

// periodicUpdateInterval: seconds >= 0; absent or null -> the default; 0 disables.
int Validator::ParseInterval(FieldReader& root) {
  const std::string path = root.PathOf("periodicUpdateInterval");
  const std::optional<std::int64_t> seconds = root.Integer("periodicUpdateInterval");
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
std::vector<ResourceConfig> Validator::ParseConfigList(FieldReader& root, bool suppress_required) {
  const std::string path = root.PathOf("configList");
  std::vector<ResourceConfig> resources;
  if (root.Find("configList") == nullptr) {
    if (!suppress_required) Error(path, "is required: list the resources to advertise");
    return resources;
  }
  const json* list = root.Array("configList");
  if (list == nullptr) return resources;
  if (list->empty()) {
    Error(path, "no resources configured (the list is empty)");
    return resources;
  }
  std::map<std::string, size_t> first_index;  // resourceName -> index of first use
  std::map<std::string, size_t> kind_index;   // effective CDI kind -> index of first use
  size_t entries = 0;                         // the entries that are objects, kept or not
  int64_t total_ids = 0;                      // and their rdmaHcaMax
  for (size_t i = 0; i < list->size(); ++i) {
    const std::string entry_path = JoinIndex(path, i);
    const json& entry = (*list)[i];
    if (!entry.is_object()) {
      root.Mismatch(entry, entry_path, "an object");
      continue;
    }
    FieldReader entry_reader = root.At(entry, entry_path);
    ResourceConfig resource = ParseEntry(entry_reader);
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
    if (!resource.resource_name.empty() && !resource.resource_prefix.empty() &&
        resource.api != ResourceApi::kDra) {
      const std::string kind = resource.cdi_kind.empty() ? resource.FullName() : resource.cdi_kind;
      auto [it, inserted] = kind_index.emplace(kind, i);
      if (!inserted && first_index.count(resource.resource_name) &&
          first_index[resource.resource_name] == i) {
        Error(JoinKey(entry_path, "cdiKind"), "CDI kind " + Quote(kind) + " is already used by " +
                                                  JoinIndex(path, it->second) +
                                                  "; each resource needs its own kind");
      }
    }
    ++entries;
    // A DRA resource's rdmaHcaMax is one capacity value per device, not IDs held in memory.
    if (resource.api != ResourceApi::kDra) total_ids += resource.rdma_hca_max;
    // Past kMaxResources the config is refused (CheckTotals), so the rest are checked but not
    // kept: a ResourceConfig apiece took 170 MB for a 1 MiB list of `{}`.
    if (resources.size() < static_cast<size_t>(kMaxResources)) {
      resources.push_back(std::move(resource));
    }
  }
  CheckEnvNames(*list, path, &resources);
  CheckTotals(entries, total_ids, path);
  return resources;
}

// The limits on the whole list (kMaxResources, kMaxTotalDeviceIds): `entries` resources
// whose rdmaHcaMax add up to `total`.
void Validator::CheckTotals(size_t entries, int64_t total, const std::string& path) {
  if (entries > static_cast<size_t>(kMaxResources)) {
    Error(path, "has " + std::to_string(entries) + " resources; at most " +
                    std::to_string(kMaxResources) +
                    " are allowed (each is a gRPC server and a kubelet registration)");
  }
  if (total > kMaxTotalDeviceIds) {
    Error(path, "the resources' rdmaHcaMax add up to " + std::to_string(total) +
                    " device IDs; at most " + std::to_string(kMaxTotalDeviceIds) +
                    " are allowed in all: every ID is held in memory and listed to the "
                    "kubelet, and the daemon must stay inside its memory limit");
  }
}

// One configList entry. Fields with errors are left at their defaults.
ResourceConfig Validator::ParseEntry(FieldReader& entry) {
  const std::set<std::string> suggested = CheckKeys(entry, EntryKeys());
  ResourceConfig resource;
  resource.resource_name = ParseResourceName(entry, suggested.count("resourceName") == 0);
  resource.resource_prefix = ParseResourcePrefix(entry);
  // A misspelt "mode" key may have meant either mode: check nothing that depends on it.
  const ModeCheck mode = suggested.count("mode") > 0 ? ModeCheck::kUnknown : ParseMode(entry);
  resource.mode = mode == ModeCheck::kExclusive ? PoolMode::kExclusive : PoolMode::kShared;
  resource.rdma_hca_max = ParseRdmaHcaMax(entry, mode, suggested.count("rdmaHcaMax") == 0);
  const ApiCheck api = suggested.count("api") > 0 ? ApiCheck::kUnknown : ParseApi(entry);
  resource.api = api == ApiCheck::kDra ? ResourceApi::kDra : ResourceApi::kDevicePlugin;
  if (api == ApiCheck::kDra) {
    CheckDraEntry(entry);
  } else {
    ParseTopology(entry, mode, &resource);
    resource.cdi_kind = ParseCdiKind(entry);
  }
  resource.allow_pf_with_vfs = ParseExclusiveOptIn(entry, mode, "allowPfWithVfs");
  resource.allow_host_uplink = ParseExclusiveOptIn(entry, mode, "allowHostUplink");
  resource.set_nccl_ib_hca = entry.Bool("setNcclIbHca").value_or(false);
  // Its default depends on the whole list (CheckEnvNames).
  resource.set_rdma_devices_env = entry.Bool("setRdmaDevicesEnv").value_or(false);
  const bool selection_required =
      suggested.count("selectors") == 0 && suggested.count("devices") == 0;
  resource.selectors = ParseDeviceSelection(entry, selection_required);
  return resource;
}

// resourceName: required; see ResourceNameProblems. Returns the name when it is a string
// (even an invalid one), for the duplicate check.
std::string Validator::ParseResourceName(FieldReader& entry, bool required) {
  const std::string path = entry.PathOf("resourceName");
  if (entry.Find("resourceName") == nullptr) {
    if (required) Error(path, "is required");
    return "";
  }
  const std::optional<std::string> name = entry.String("resourceName");
  if (!name) return "";
  for (std::string& problem : ResourceNameProblems(*name)) Error(path, std::move(problem));
  return *name;
}

// resourcePrefix: optional DNS subdomain, default "rdma".
std::string Validator::ParseResourcePrefix(FieldReader& entry) {
  const std::optional<std::string> prefix = entry.String("resourcePrefix");
  if (!prefix) return kDefaultResourcePrefix;
  const std::string problem = ResourcePrefixProblem(*prefix);
  if (!problem.empty()) Error(entry.PathOf("resourcePrefix"), problem);
  return *prefix;
}

// cdiKind: optional CDI kind ("" when absent or invalid, which is reported).
std::string Validator::ParseCdiKind(FieldReader& entry) {
  const std::optional<std::string> kind = entry.String("cdiKind");
  if (!kind) return "";
  const std::string problem = CdiKindProblem(*kind);
  if (!problem.empty()) {
    Error(entry.PathOf("cdiKind"), problem);
    return "";
  }
  return *kind;
}

// mode: "shared" (default when absent or null) or "exclusive", case-sensitive. Never
// inferred from other keys. kUnknown when the value is invalid (reported).
ModeCheck Validator::ParseMode(FieldReader& entry) {
  if (entry.Find("mode") == nullptr) return ModeCheck::kShared;
  const std::optional<std::string> mode = entry.String("mode");
  if (!mode) return ModeCheck::kUnknown;
  if (*mode == "shared") return ModeCheck::kShared;
  if (*mode == "exclusive") return ModeCheck::kExclusive;
  Error(entry.PathOf("mode"),
        "unknown mode " + Quote(*mode) +
            "; accepted values: \"shared\" (the default), \"exclusive\" (case-sensitive)");
  return ModeCheck::kUnknown;
}

// rdmaHcaMax: in shared mode a required integer in 1..kMaxRdmaHcaMax; in exclusive mode
// not allowed. When `mode` is unknown (its own error) a given value is still range-checked
// but a missing one is not reported. Returns 0 unless a valid value was given.
int Validator::ParseRdmaHcaMax(FieldReader& entry, ModeCheck mode, bool required) {
  const std::string path = entry.PathOf("rdmaHcaMax");
  const bool given = entry.Find("rdmaHcaMax") != nullptr;
  if (mode == ModeCheck::kExclusive) {
    if (given) Error(path, kRdmaHcaMaxInExclusive);
    return 0;
  }
  if (!given) {
    if (required && mode == ModeCheck::kShared) {
      Error(path, "is required in shared mode: the number of pods that may share each device (1.." +
                      std::to_string(kMaxRdmaHcaMax) +
                      "); to give each pod whole devices use \"mode\": \"exclusive\" instead");
    }
    return 0;
  }
  const std::optional<std::int64_t> max = entry.Integer("rdmaHcaMax");
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
void Validator::ParseTopology(FieldReader& entry, ModeCheck mode, ResourceConfig* out) {
  const bool aware = entry.Bool("topologyAware").value_or(false);
  out->exclude_topology = entry.Bool("excludeTopology").value_or(false);
  if (!aware) return;
  if (mode == ModeCheck::kExclusive) {
    Error(entry.PathOf("topologyAware"),
          "is only allowed in shared mode: exclusive devices already carry their own NUMA "
          "node, so there is nothing to spread");
    return;
  }
  if (out->exclude_topology) {
    Error(entry.path(),
          "\"topologyAware\": true and \"excludeTopology\": true contradict each other: "
          "topology-aware IDs are spread over NUMA nodes, but excludeTopology hides the NUMA "
          "nodes from the kubelet; set only one");
    return;
  }
  out->topology_aware = true;
}

// allowPfWithVfs / allowHostUplink: booleans, default false, only for exclusive mode (a
// shared pool always uses the PF's HCA and never hands out its netdev).
bool Validator::ParseExclusiveOptIn(FieldReader& entry, ModeCheck mode, const std::string& key) {
  const bool on = entry.Bool(key).value_or(false);
  if (on && mode == ModeCheck::kShared) {
    Error(entry.PathOf(key),
          "is only allowed in exclusive mode: a shared pool grants the PF's RDMA device to "
          "every pod and never hands out a netdev, so there is nothing to opt in to");
    return false;
  }
  return on;
}

}  // namespace detail

Validation ValidateDocument(const nlohmann::json& root, bool yaml) {
  detail::Validator validator(yaml);
  Validation result;
  result.config = validator.Validate(root);
  result.errors = validator.TakeErrors();
  result.warnings = validator.TakeWarnings();
  return result;
}

}  // namespace hcashare::config
