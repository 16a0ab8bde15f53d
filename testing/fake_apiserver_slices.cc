// FakeApiServer's admission of ResourceSlices: the validation the API server applies to a
// slice (shared reference "kube-api-and-dra.md" §3.3, §3.4, §13), the fields it keeps
// immutable, and the fields a server without consumable capacity drops. Errors are 422
// Invalid Status objects naming each field, as the API server words them.
#include <cctype>
#include <set>
#include <string>
#include <vector>

#include "testing/fake_apiserver_impl.h"

namespace hcashare::fake {
namespace {

using json = nlohmann::json;

constexpr size_t kMaxDevices = 128;
constexpr size_t kMaxDevicesAdvanced = 64;  // with taints, counters or list attributes
constexpr size_t kMaxAttributesAndCapacities = 32;
constexpr size_t kMaxValueLength = 64;  // string and version attributes
constexpr size_t kMaxProblems = 20;

bool IsAlnumLower(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }

// [a-z0-9]([-a-z0-9]*[a-z0-9])?, at most 63.
bool IsDnsLabel(const std::string& s) {
  if (s.empty() || s.size() > 63 || !IsAlnumLower(s.front()) || !IsAlnumLower(s.back())) {
    return false;
  }
  for (char c : s) {
    if (!IsAlnumLower(c) && c != '-') return false;
  }
  return true;
}

// DNS labels joined by '.', at most `max` in all.
bool IsDnsSubdomain(const std::string& s, size_t max) {
  if (s.empty() || s.size() > max) return false;
  for (const std::string& label : SplitOn(s, '.')) {
    if (!IsDnsLabel(label)) return false;
  }
  return true;
}

// A C identifier of at most 32 characters.
bool IsCIdentifier(const std::string& s) {
  if (s.empty() || s.size() > 32) return false;
  if (!std::isalpha(static_cast<unsigned char>(s[0])) && s[0] != '_') return false;
  for (char c : s) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  }
  return true;
}

// Why `name` is no qualified name (a C identifier, or "<DNS subdomain <= 63>/<C identifier>"),
// or "".
std::string QualifiedNameProblem(const std::string& name) {
  const size_t slash = name.find('/');
  const std::string id = slash == std::string::npos ? name : name.substr(slash + 1);
  if (slash != std::string::npos && !IsDnsSubdomain(name.substr(0, slash), 63)) {
    return "the domain must be a DNS subdomain of at most 63 characters";
  }
  if (!IsCIdentifier(id)) return "the name must be a C identifier of at most 32 characters";
  return "";
}

// A number without leading zeros.
bool IsSemverNumber(const std::string& s) {
  if (s.empty() || (s.size() > 1 && s[0] == '0')) return false;
  for (char c : s) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

// MAJOR.MINOR.PATCH[-pre][+build] (semver 2.0, identifiers checked loosely).
bool IsSemver(const std::string& s) {
  const size_t end = s.find_first_of("-+");
  std::vector<std::string> core = SplitOn(s.substr(0, end), '.');
  if (core.size() != 3) return false;
  for (const std::string& n : core) {
    if (!IsSemverNumber(n)) return false;
  }
  if (end == std::string::npos) return true;
  for (char c : s.substr(end + 1)) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '.' && c != '+') {
      return false;
    }
  }
  return end + 1 < s.size();
}

// A Kubernetes quantity: a decimal number with an optional suffix (Ki, M, m, e3, ...).
bool IsQuantity(const std::string& s) {
  size_t i = (!s.empty() && (s[0] == '+' || s[0] == '-')) ? 1 : 0;
  size_t digits = 0;
  while (i < s.size() && (std::isdigit(static_cast<unsigned char>(s[i])) || s[i] == '.')) {
    digits += s[i] != '.';
    ++i;
  }
  if (digits == 0) return false;
  static const std::set<std::string> kSuffixes = {"",  "Ki", "Mi", "Gi", "Ti", "Pi", "Ei", "n",
                                                  "u", "m",  "k",  "M",  "G",  "T",  "P",  "E"};
  const std::string suffix = s.substr(i);
  if (kSuffixes.count(suffix)) return true;
  if (suffix.size() < 2 || (suffix[0] != 'e' && suffix[0] != 'E')) return false;
  size_t j = (suffix[1] == '+' || suffix[1] == '-') ? 2 : 1;
  if (j >= suffix.size()) return false;
  for (; j < suffix.size(); ++j) {
    if (!std::isdigit(static_cast<unsigned char>(suffix[j]))) return false;
  }
  return true;
}

std::string Quoted(const json& v) {
  return v.is_string() ? "\"" + v.get<std::string>() + "\"" : v.dump();
}

// The problems of one slice, each "<field>: <what>".
class SliceCheck {
 public:
  explicit SliceCheck(bool v1beta1) : v1beta1_(v1beta1) {}

  void Add(const std::string& field, const std::string& what) {
    if (problems_.size() < kMaxProblems) problems_.push_back({field, what});
  }
  void Invalid(const std::string& field, const json& value, const std::string& why) {
    Add(field, "Invalid value: " + Quoted(value) + ": " + why);
  }

  void Spec(const json& spec) {
    const json driver = spec.value("driver", json());
    if (!driver.is_string() || driver.get<std::string>().empty()) {
      Add("spec.driver", "Required value");
    } else if (!IsDnsSubdomain(driver.get<std::string>(), 63)) {
      Invalid("spec.driver", driver,
              "a lowercase DNS subdomain of at most 63 characters is required");
    }
    Pool(spec.value("pool", json()));
    int selectors = 0;
    selectors += spec.contains("nodeName") && spec["nodeName"] != "";
    selectors += spec.contains("nodeSelector");
    selectors += spec.value("allNodes", json()) == true;
    selectors += spec.value("perDeviceNodeSelection", json()) == true;
    if (selectors != 1) {
      Add("spec",
          "Invalid value: exactly one of `nodeName`, `nodeSelector`, `allNodes`, "
          "`perDeviceNodeSelection` is required");
    }
    if (spec.contains("nodeName") && spec["nodeName"].is_string() && spec["nodeName"] != "" &&
        !IsDnsSubdomain(spec["nodeName"].get<std::string>(), 253)) {
      Invalid("spec.nodeName", spec["nodeName"], "a lowercase DNS subdomain is required");
    }
    const json devices = spec.value("devices", json::array());
    if (!devices.is_array()) {
      Add("spec.devices", "Invalid value: must be a list");
      return;
    }
    Devices(devices);
  }

  void Pool(const json& pool) {
    if (!pool.is_object()) {
      Add("spec.pool", "Required value");
      return;
    }
    const json name = pool.value("name", json());
    if (!name.is_string() || name.get<std::string>().empty()) {
      Add("spec.pool.name", "Required value");
    } else {
      const std::string& n = name.get_ref<const std::string&>();
      bool ok = n.size() <= 253;
      for (const std::string& part : SplitOn(n, '/')) ok = ok && IsDnsSubdomain(part, 253);
      if (!ok) Invalid("spec.pool.name", name, "DNS subdomains joined by '/' (at most 253)");
    }
    const json generation = pool.value("generation", json(0));
    if (!generation.is_number_integer() || generation.get<int64_t>() < 0) {
      Invalid("spec.pool.generation", generation, "must be greater than or equal to 0");
    }
    const json count = pool.value("resourceSliceCount", json());
    if (!count.is_number_integer() || count.get<int64_t>() < 1) {
      Invalid("spec.pool.resourceSliceCount", count, "must be greater than zero");
    }
  }

  void Devices(const json& devices) {
    std::set<std::string> names;
    bool advanced = false;
    for (size_t i = 0; i < devices.size(); ++i) {
      const std::string field = "spec.devices[" + std::to_string(i) + "]";
      const json& d = devices[i];
      if (!d.is_object()) {
        Add(field, "Invalid value: must be an object");
        continue;
      }
      const json name = d.value("name", json());
      if (!name.is_string() || name.get<std::string>().empty()) {
        Add(field + ".name", "Required value");
      } else if (!IsDnsLabel(name.get<std::string>())) {
        Invalid(field + ".name", name,
                "a lowercase RFC 1123 label must consist of lower case alphanumeric characters "
                "or '-', start and end with one, at most 63 characters");
      } else if (!names.insert(name.get<std::string>()).second) {
        Add(field + ".name", "Duplicate value: " + Quoted(name));
      }
      if (v1beta1_ && !d.contains("basic")) Add(field + ".basic", "Required value");
      if (!v1beta1_ && d.contains("basic")) {
        Add(field + ".basic", "Forbidden: the v1beta1 shape; this version has no `basic`");
      }
      const json& body = v1beta1_ ? d.value("basic", json::object()) : d;
      if (!body.is_object()) {
        Add(field + ".basic", "Invalid value: must be an object");
        continue;
      }
      const std::string at = v1beta1_ ? field + ".basic" : field;
      advanced |= body.contains("taints") || body.contains("consumesCounters");
      advanced |= Attributes(at, body.value("attributes", json::object()));
      Capacity(at, body.value("capacity", json::object()));
      const size_t total = body.value("attributes", json::object()).size() +
                           body.value("capacity", json::object()).size();
      if (total > kMaxAttributesAndCapacities) {
        Add(at, "Too many: " + std::to_string(total) +
                    ": must have at most 32 attributes and capacities combined");
      }
    }
    const size_t max = advanced ? kMaxDevicesAdvanced : kMaxDevices;
    if (devices.size() > max) {
      Add("spec.devices", "Too many: " + std::to_string(devices.size()) + ": must have at most " +
                              std::to_string(max) + " items");
    }
  }

  // True when an attribute is list-typed.
  bool Attributes(const std::string& at, const json& attributes) {
    if (!attributes.is_object()) {
      Add(at + ".attributes", "Invalid value: must be a map");
      return false;
    }
    bool lists = false;
    for (const auto& [name, value] : attributes.items()) {
      const std::string field = at + ".attributes[" + name + "]";
      if (std::string why = QualifiedNameProblem(name); !why.empty()) {
        Invalid(at + ".attributes", name, why);
      }
      if (!value.is_object() || value.size() != 1) {
        Add(field, "Invalid value: exactly one value must be specified");
        continue;
      }
      // The one member (a structured binding to *items().begin() would dangle: the
      // iteration proxy is a temporary).
      const auto member = value.begin();
      const std::string type = member.key();
      const json& v = member.value();
      lists |= type == "ints" || type == "bools" || type == "strings" || type == "versions";
      Value(field + "." + type, type, v);
    }
    return lists;
  }

  void Value(const std::string& field, const std::string& type, const json& v) {
    if (type == "ints" || type == "bools" || type == "strings" || type == "versions") {
      if (!v.is_array() || v.empty()) {
        Add(field, "Invalid value: must be a non-empty list");
        return;
      }
      for (size_t i = 0; i < v.size(); ++i) {
        Value(field + "[" + std::to_string(i) + "]", type.substr(0, type.size() - 1), v[i]);
      }
    } else if (type == "int") {
      if (!v.is_number_integer()) Invalid(field, v, "must be an integer");
    } else if (type == "bool") {
      if (!v.is_boolean()) Invalid(field, v, "must be a boolean");
    } else if (type == "string" || type == "version") {
      if (!v.is_string()) {
        Invalid(field, v, "must be a string");
      } else if (v.get<std::string>().size() > kMaxValueLength) {
        Add(field, "Too long: may not be more than 64 bytes");
      } else if (type == "version" && !IsSemver(v.get<std::string>())) {
        Invalid(field, v, "must be a semantic version");
      }
    } else {
      Add(field, "Unsupported value: \"" + type + "\"");
    }
  }

  void Capacity(const std::string& at, const json& capacity) {
    if (!capacity.is_object()) {
      Add(at + ".capacity", "Invalid value: must be a map");
      return;
    }
    for (const auto& [name, value] : capacity.items()) {
      if (std::string why = QualifiedNameProblem(name); !why.empty()) {
        Invalid(at + ".capacity", name, why);
      }
      const json q = value.is_object() ? value.value("value", json()) : json();
      if (!q.is_string() || !IsQuantity(q.get<std::string>())) {
        Invalid(at + ".capacity[" + name + "].value", q, "must be a quantity");
      }
    }
  }

  struct Problem {
    std::string field;
    std::string what;
  };
  const std::vector<Problem>& problems() const { return problems_; }

 private:
  const bool v1beta1_;
  std::vector<Problem> problems_;
};

// The 422 answer for `problems` of the slice `name`.
Reply Invalid(const std::string& name, const std::vector<SliceCheck::Problem>& problems) {
  std::string list;
  json causes = json::array();
  for (const auto& p : problems) {
    if (!list.empty()) list += ", ";
    list += p.field + ": " + p.what;
    causes.push_back({{"reason", "FieldValueInvalid"}, {"message", p.what}, {"field", p.field}});
  }
  const std::string message = "ResourceSlice.resource.k8s.io \"" + name +
                              "\" is invalid: " + (problems.size() > 1 ? "[" + list + "]" : list);
  Reply r = ErrorReply(422, "Invalid", message);
  r.body["details"] = {{"name", name},
                       {"group", "resource.k8s.io"},
                       {"kind", "ResourceSlice"},
                       {"causes", std::move(causes)}};
  return r;
}

// Drops what a server without consumable capacity does not know from each device.
void DropConsumableCapacity(json& spec, bool v1beta1) {
  auto devices = spec.find("devices");
  if (devices == spec.end() || !devices->is_array()) return;
  for (json& d : *devices) {
    json* body = v1beta1 ? (d.contains("basic") ? &d["basic"] : nullptr) : &d;
    if (body == nullptr || !body->is_object()) continue;
    body->erase("allowMultipleAllocations");
    auto capacity = body->find("capacity");
    if (capacity == body->end() || !capacity->is_object()) continue;
    for (auto& [name, value] : capacity->items()) {
      (void)name;
      if (value.is_object()) value.erase("requestPolicy");
    }
  }
}

}  // namespace

std::optional<Reply> FakeApiServer::Impl::Admit(const Target& t, json& object, const json* old) {
  if (!IsResourceSlices(t)) return std::nullopt;
  const std::string version = SplitOn(t.kind_key, '/')[3];  // "", "apis", group, version
  const std::string want = "resource.k8s.io/" + version;
  const json api_version = object.value("apiVersion", json(want));
  if (api_version != want) {
    return ErrorReply(400, "BadRequest",
                      "the API version in the data (" + api_version.dump() +
                          ") does not match the expected API version (" + want + ")");
  }
  const json kind = object.value("kind", json("ResourceSlice"));
  if (kind != "ResourceSlice") {
    return ErrorReply(400, "BadRequest",
                      "the kind in the data (" + kind.dump() + ") is not ResourceSlice");
  }
  const std::string name = object["metadata"].value("name", "");
  SliceCheck check(version == "v1beta1");
  const json spec = object.value("spec", json());
  if (!spec.is_object()) {
    check.Add("spec", "Required value");
  } else {
    check.Spec(spec);
  }
  if (old != nullptr && spec.is_object()) {
    const json old_spec = old->value("spec", json::object());
    for (const auto& [field, pointer] :
         {std::pair<const char*, const char*>{"spec.driver", "/driver"},
          {"spec.pool.name", "/pool/name"},
          {"spec.nodeName", "/nodeName"}}) {
      const json::json_pointer p(pointer);
      const json before = old_spec.contains(p) ? old_spec[p] : json();
      const json after = spec.contains(p) ? spec[p] : json();
      if (before != after) check.Invalid(field, after, "field is immutable");
    }
  }
  if (!check.problems().empty()) return Invalid(name, check.problems());
  if (!consumable_capacity_) DropConsumableCapacity(object["spec"], version == "v1beta1");
  return std::nullopt;
}

}  // namespace hcashare::fake
