#include "testing/resource_slice_rules.h"

#include <cctype>
#include <regex>
#include <set>

#include "common/strings.h"

namespace hcashare::testing {
namespace {

using json = nlohmann::json;

constexpr size_t kMaxDevices = 128;
constexpr size_t kMaxDevicesAdvanced = 64;  // with taints, counters or list attributes
constexpr size_t kMaxAttributesAndCapacities = 32;
constexpr size_t kMaxValueLength = 64;  // string and version attributes

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

// MAJOR.MINOR.PATCH[-pre][+build], semantic versioning 2.0.0 exactly.
bool IsSemver(const std::string& s) {
  static const std::regex re(
      R"(^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*))"
      R"((-(0|[1-9]\d*|\d*[A-Za-z-][0-9A-Za-z-]*)(\.(0|[1-9]\d*|\d*[A-Za-z-][0-9A-Za-z-]*))*)?)"
      R"((\+[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?$)");
  return std::regex_match(s, re);
}

// A Kubernetes quantity: a decimal number with an optional suffix (Ki, M, m, e3, ...).
bool IsQuantity(const std::string& s) {
  static const std::regex re(
      R"(^[+-]?(\d+(\.\d*)?|\.\d+)(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E|[eE][+-]?\d+)?$)");
  return std::regex_match(s, re);
}

std::string Quoted(const json& v) {
  return v.is_string() ? "\"" + v.get<std::string>() + "\"" : v.dump();
}

// The problems of one slice, as the API server words them.
class SliceCheck {
 public:
  SliceCheck(bool v1beta1, size_t max) : v1beta1_(v1beta1), max_(max) {}

  void Add(const std::string& field, const std::string& what) {
    if (problems_.size() < max_) problems_.push_back({field, what});
  }
  void Invalid(const std::string& field, const json& value, const std::string& why) {
    Add(field, "Invalid value: " + Quoted(value) + ": " + why);
  }

  void Slice(const json& slice) {
    const json spec = slice.value("spec", json());
    if (!spec.is_object()) {
      Add("spec", "Required value");
    } else {
      Spec(spec);
    }
    const json metadata = slice.value("metadata", json::object());
    const json refs =
        metadata.is_object() ? metadata.value("ownerReferences", json::array()) : json::array();
    for (size_t i = 0; refs.is_array() && i < refs.size(); ++i) {
      const json uid = refs[i].is_object() ? refs[i].value("uid", json()) : json();
      if (!uid.is_string() || uid.get<std::string>().empty()) {
        Add("metadata.ownerReferences[" + std::to_string(i) + "].uid", "Required value");
      }
    }
  }

  void Spec(const json& spec) {
    const json driver = spec.value("driver", json());
    if (!driver.is_string() || driver.get<std::string>().empty()) {
      Add("spec.driver", "Required value");
    } else if (!IsDnsSubdomain(ToLowerAscii(driver.get<std::string>()),
                               63)) {  // checked lower-cased
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
      if (!q.is_number() && (!q.is_string() || !IsQuantity(q.get<std::string>()))) {
        Invalid(at + ".capacity[" + name + "].value", q, "must be a quantity");
      }
    }
  }

  std::vector<SliceProblem> problems_;

 private:
  const bool v1beta1_;
  const size_t max_;
};

}  // namespace

std::vector<SliceProblem> ResourceSliceProblems(const json& slice, bool v1beta1, size_t max) {
  SliceCheck check(v1beta1, max);
  check.Slice(slice);
  return std::move(check.problems_);
}

std::vector<std::string> ResourceSliceRuleProblems(const json& slice) {
  std::vector<std::string> out;
  for (const SliceProblem& p :
       ResourceSliceProblems(slice, slice.value("apiVersion", "") == "resource.k8s.io/v1beta1")) {
    out.push_back(p.field + ": " + p.what);
  }
  return out;
}

}  // namespace hcashare::testing
