#include "testing/resource_slice_rules.h"

#include <cctype>
#include <regex>
#include <set>

namespace hcashare::testing {
namespace {

using json = nlohmann::json;

const size_t kMaxDevices = 128;
const size_t kMaxDevicesAdvanced = 64;
const size_t kMaxAttributesAndCapacities = 32;
const size_t kMaxAttributeText = 64;
const char* const kListValues[] = {"ints", "bools", "strings", "versions"};
const char* const kValues[] = {"int",  "bool",  "string",  "version",
                               "ints", "bools", "strings", "versions"};

bool IsDnsLabel(const std::string& s) {
  static const std::regex re("^[a-z0-9]([-a-z0-9]*[a-z0-9])?$");
  return s.size() <= 63 && std::regex_match(s, re);
}

bool IsDnsSubdomain(const std::string& s, size_t max) {
  static const std::regex re(
      R"(^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$)");
  return s.size() <= max && std::regex_match(s, re);
}

bool IsQualifiedName(const std::string& s) {
  static const std::regex id("^[A-Za-z_][A-Za-z0-9_]*$");
  const size_t slash = s.find('/');
  const std::string name = slash == std::string::npos ? s : s.substr(slash + 1);
  if (name.size() > 32 || !std::regex_match(name, id)) return false;
  return slash == std::string::npos || IsDnsSubdomain(s.substr(0, slash), 63);
}

bool IsSemver(const std::string& s) {
  static const std::regex re(
      R"(^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*))"
      R"((-(0|[1-9]\d*|\d*[A-Za-z-][0-9A-Za-z-]*)(\.(0|[1-9]\d*|\d*[A-Za-z-][0-9A-Za-z-]*))*)?)"
      R"((\+[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?$)");
  return std::regex_match(s, re);
}

bool IsQuantity(const json& q) {
  if (q.is_number()) return true;
  static const std::regex re(
      R"(^[+-]?(\d+(\.\d*)?|\.\d+)(Ki|Mi|Gi|Ti|Pi|Ei|m|k|M|G|T|P|E|[eE][+-]?\d+)?$)");
  return q.is_string() && std::regex_match(q.get<std::string>(), re);
}

class Rules {
 public:
  void Slice(const json& slice) {
    const json& spec = slice["spec"];
    // The server lower-cases the driver name before it checks it ("RDMA.example.com" passes).
    std::string driver = spec.value("driver", "");
    for (char& c : driver) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (!IsDnsSubdomain(driver, 63)) {
      Error("spec.driver", "not a DNS subdomain of at most 63 characters");
    }
    const std::string pool = spec["pool"].value("name", "");
    bool pool_ok = !pool.empty() && pool.size() <= 253;
    for (size_t start = 0; pool_ok && start <= pool.size();) {
      size_t end = pool.find('/', start);
      if (end == std::string::npos) end = pool.size();
      pool_ok = IsDnsSubdomain(pool.substr(start, end - start), 253);
      start = end + 1;
    }
    if (!pool_ok) Error("spec.pool.name", "not DNS subdomains joined by '/' (253 at most)");
    if (spec["pool"].value("resourceSliceCount", int64_t{0}) <= 0) {
      Error("spec.pool.resourceSliceCount", "must be above 0");
    }
    int placements = spec.contains("nodeName") + spec.contains("nodeSelector") +
                     spec.value("allNodes", false) + spec.value("perDeviceNodeSelection", false);
    if (placements != 1) {
      Error("spec", "exactly one of nodeName, nodeSelector, allNodes, perDeviceNodeSelection");
    }
    const json refs =
        slice.value("metadata", json::object()).value("ownerReferences", json::array());
    for (size_t i = 0; i < refs.size(); ++i) {
      if (refs[i].value("uid", "").empty()) {
        Error("metadata.ownerReferences[" + std::to_string(i) + "].uid", "must not be empty");
      }
    }
    const bool beta1 = slice["apiVersion"] == "resource.k8s.io/v1beta1";
    const json devices = spec.value("devices", json::array());
    bool advanced = false;
    std::set<std::string> names;
    for (size_t i = 0; i < devices.size(); ++i) {
      const std::string at = "spec.devices[" + std::to_string(i) + "]";
      const std::string name = devices[i].value("name", "");
      if (!IsDnsLabel(name)) Error(at + ".name", "\"" + name + "\" is not a DNS label");
      if (!names.insert(name).second) Error(at + ".name", "\"" + name + "\" is not unique");
      const json body = beta1 ? devices[i].value("basic", json::object()) : devices[i];
      advanced = Device(body, beta1 ? at + ".basic" : at) || advanced;
    }
    const size_t max = advanced ? kMaxDevicesAdvanced : kMaxDevices;
    if (devices.size() > max) {
      Error("spec.devices", std::to_string(devices.size()) + " devices, more than " +
                                std::to_string(max) +
                                (advanced ? " (taints, counters or list attributes)" : ""));
    }
  }

  std::vector<std::string> errors;

 private:
  void Error(const std::string& path, const std::string& what) {
    errors.push_back(path + ": " + what);
  }

  // The device's own rules; true when it counts for the smaller slice limit.
  bool Device(const json& d, const std::string& at) {
    bool advanced = d.contains("taints") || d.contains("consumesCounters");
    const json attrs = d.value("attributes", json::object());
    const json caps = d.value("capacity", json::object());
    if (attrs.size() + caps.size() > kMaxAttributesAndCapacities) {
      Error(at, std::to_string(attrs.size() + caps.size()) +
                    " attributes and capacities, more than " +
                    std::to_string(kMaxAttributesAndCapacities));
    }
    for (const auto& [name, value] : attrs.items()) {
      const std::string path = at + ".attributes." + name;
      if (!IsQualifiedName(name)) Error(path, "not a qualified name");
      int set = 0;
      for (const char* k : kValues) set += value.contains(k);
      if (set != 1) Error(path, "must have exactly one value, has " + std::to_string(set));
      for (const char* k : kListValues) advanced = advanced || value.contains(k);
      for (const char* k : {"string", "version"}) {
        if (value.contains(k) && value[k].get<std::string>().size() > kMaxAttributeText) {
          Error(path + "." + k, "longer than 64 characters");
        }
      }
      if (value.contains("version") && !IsSemver(value["version"].get<std::string>())) {
        Error(path + ".version",
              "\"" + value["version"].get<std::string>() + "\" is not a semantic version 2.0.0");
      }
    }
    for (const auto& [name, value] : caps.items()) {
      const std::string path = at + ".capacity." + name;
      if (!IsQualifiedName(name)) Error(path, "not a qualified name");
      if (!IsQuantity(value["value"]))
        Error(path + ".value", value["value"].dump() + " is not a quantity");
    }
    return advanced;
  }
};

}  // namespace

std::vector<std::string> ResourceSliceRuleProblems(const json& slice) {
  Rules rules;
  rules.Slice(slice);
  return rules.errors;
}

}  // namespace hcashare::testing
