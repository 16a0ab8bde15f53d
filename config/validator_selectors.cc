// The device selection of a configList entry: `devices` and the `selectors` lists.
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "config/json_fields.h"
#include "config/selector_values.h"
#include "config/validator_impl.h"

namespace hcashare::config::detail {
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

// In the order of the documentation; "did you mean" ties go to the earlier key.
const std::vector<std::string>& SelectorKeys() {
  static const std::vector<std::string> keys = {
      "vendors",      "deviceIDs", "drivers",     "ifNames",     "linkTypes",
      "pciAddresses", kPfNamesKey, "rdmaDevices", kNumaNodesKey, kIsVfKey};
  return keys;
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

// A strict weak order on PfNameSelector, for de-duplicating pfNames.
struct PfNameSelectorLess {
  bool operator()(const PfNameSelector& a, const PfNameSelector& b) const {
    return std::tie(a.pf, a.first_vf, a.last_vf) < std::tie(b.pf, b.first_vf, b.last_vf);
  }
};

}  // namespace

// `devices` (deprecated, folded into ifNames) and `selectors`: exactly one must select
// something. `required` is false when a misspelt key already explains the absence.
Selectors Validator::ParseDeviceSelection(FieldReader& entry, bool required) {
  Selectors selectors;
  bool devices_set = false, selectors_set = false, shape_error = false;
  const std::string devices_path = entry.PathOf("devices");
  if (entry.Find("devices") != nullptr) {
    warnings_.push_back({devices_path,
                         "\"devices\" is deprecated; list the interfaces in "
                         "\"selectors\": {\"ifNames\": [...]} instead"});
    if (const json* devices = entry.Array("devices")) {
      devices_set = !devices->empty();
      ParseStringList(entry, *devices, devices_path, KeepAsIs, &selectors.if_names);
    } else {
      shape_error = true;
    }
  }
  if (entry.Find("selectors") != nullptr) {
    if (const json* object = entry.Object("selectors")) {
      FieldReader selectors_reader = entry.At(*object, entry.PathOf("selectors"));
      selectors_set = ParseSelectorObject(selectors_reader, &selectors);
    } else {
      shape_error = true;
    }
  }
  if (devices_set && selectors_set) {
    Error(entry.path(),
          "both \"devices\" and \"selectors\" are set; move the devices into "
          "\"selectors.ifNames\"");
  } else if (!devices_set && !selectors_set && !shape_error && required) {
    Error(entry.path(),
          "selects no devices: set at least one list in \"selectors\" (for example "
          "\"ifNames\" or \"vendors\")");
  }
  return selectors;
}

// Fills `out` from a selectors object. Returns true when any list was given a value (or a
// non-list value, already reported) or isVF is set, i.e. the user did try to select
// something.
bool Validator::ParseSelectorObject(FieldReader& selectors, Selectors* out) {
  // A misspelt list name counts as an attempt to select (its error is enough).
  bool any = !CheckKeys(selectors, SelectorKeys()).empty();
  auto visit = [&](const std::string& key, auto&& parse) {
    const json* value = selectors.Find(key);
    if (value == nullptr) return;
    if (const json* list = selectors.Array(key)) parse(*list, selectors.PathOf(key));
    any = any || !value->is_array() || !value->empty();
  };
  for (const StringSelector& s : kStringSelectors) {
    visit(s.key, [&](const json& list, const std::string& list_path) {
      ParseStringList(selectors, list, list_path, s.normalize, &(out->*s.field));
    });
  }
  visit(kPfNamesKey, [&](const json& list, const std::string& list_path) {
    ParsePfNames(selectors, list, list_path, &out->pf_names);
  });
  visit(kNumaNodesKey, [&](const json& list, const std::string& list_path) {
    ParseNumaNodes(selectors, list, list_path, &out->numa_nodes);
  });
  out->is_vf = selectors.Bool(kIsVfKey);
  return any || selectors.Find(kIsVfKey) != nullptr;
}

// An array of non-empty strings, each normalised; duplicates collapse into one.
void Validator::ParseStringList(FieldReader& reader, const json& list, const std::string& path,
                                Normalizer normalize, std::vector<std::string>* out) {
  UniqueAppender<std::string> appender(out);
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string item_path = JoinIndex(path, i);
    const std::string* value = ExpectNonEmptyString(reader, list[i], item_path);
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
void Validator::ParsePfNames(FieldReader& reader, const json& list, const std::string& path,
                             std::vector<PfNameSelector>* out) {
  UniqueAppender<PfNameSelector, PfNameSelectorLess> appender(out);
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string item_path = JoinIndex(path, i);
    const std::string* value = ExpectNonEmptyString(reader, list[i], item_path);
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
void Validator::ParseNumaNodes(FieldReader& reader, const json& list, const std::string& path,
                               std::vector<int>* out) {
  UniqueAppender<int> appender(out);
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string item_path = JoinIndex(path, i);
    const std::optional<std::int64_t> node = reader.IntegerAt(list[i], item_path);
    if (!node) continue;
    if (*node < 0 || *node > std::numeric_limits<int>::max()) {
      Error(item_path, "must be a NUMA node number >= 0, got " + std::to_string(*node));
      continue;
    }
    appender.Append(static_cast<int>(*node));
  }
}

}  // namespace hcashare::config::detail
