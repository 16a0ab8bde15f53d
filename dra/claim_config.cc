#include "dra/claim_config.h"

#include <set>

#include "common/ip_text.h"
#include "common/strings.h"
#include "config/names.h"
#include "dra/cdi_claim.h"

namespace hcashare::dra {
namespace {

using nlohmann::json;

// Collects every problem with its JSON path.
class Problems {
 public:
  void Add(const std::string& path, const std::string& what) {
    if (list_.size() < 20) list_.push_back(path + ": " + what);
  }
  bool empty() const { return list_.empty(); }
  Status ToStatus() const {
    return Status::InvalidArgument("the claim's configuration for this driver is invalid: " +
                                   Join(list_, "; "));
  }

 private:
  std::vector<std::string> list_;
};

// Whether entry `requests` (absent or empty: every request) covers result request `r`.
bool Covers(const json& requests, const std::string& r) {
  if (!requests.is_array() || requests.empty()) return true;
  for (const auto& q : requests) {
    if (!q.is_string()) continue;
    const std::string name = q.get<std::string>();
    if (name == r || name == ParentRequest(r)) return true;
  }
  return false;
}

// interface.addresses: a list of at most kMaxPodInterfaceAddresses CIDR strings.
std::optional<std::vector<std::string>> ReadAddresses(const json& v, const std::string& path,
                                                      Problems* problems) {
  if (!v.is_array() || v.size() > kMaxPodInterfaceAddresses) {
    problems->Add(path, "must be a list of at most " + std::to_string(kMaxPodInterfaceAddresses) +
                            " addresses");
    return std::nullopt;
  }
  std::vector<std::string> out;
  for (size_t i = 0; i < v.size(); ++i) {
    if (!v[i].is_string() || !CidrFamily(v[i].get<std::string>())) {
      problems->Add(path + "[" + std::to_string(i) + "]",
                    "must be an address in CIDR form (10.0.0.5/24, fd00::5/64)");
      return std::nullopt;
    }
    out.push_back(v[i].get<std::string>());
  }
  return out;
}

// The parameters of one entry, checked; problems recorded under `path`.
PodInterfaceConfig ReadParameters(const json& p, const std::string& path, Problems* problems) {
  PodInterfaceConfig out;
  if (!p.is_object()) {
    problems->Add(path, "not an object");
    return out;
  }
  for (const auto& [key, value] : p.items()) {
    const std::string at = path + "." + key;
    if (key == "apiVersion" || key == "kind") {
      const char* want = key == "kind" ? kPodInterfaceKind : kPodInterfaceApiVersion;
      if (!value.is_string() || value.get<std::string>() != want) {
        problems->Add(at, std::string("must be \"") + want + "\"");
      }
    } else if (key == "interface") {
      if (!value.is_object()) {
        problems->Add(at, "not an object");
        continue;
      }
      for (const auto& [k, v] : value.items()) {
        const std::string sub = at + "." + k;
        if (k == "name") {
          if (!v.is_string()) {
            problems->Add(sub, "not a string");
          } else if (std::string why = CheckPodInterfaceName(v.get<std::string>()); !why.empty()) {
            problems->Add(sub, why);
          } else {
            out.name = v.get<std::string>();
          }
        } else if (k == "mtu") {
          if (!v.is_number_integer() || v.get<int64_t>() < 68 || v.get<int64_t>() > 65535) {
            problems->Add(sub, "must be an integer from 68 to 65535");
          } else {
            out.mtu = static_cast<int>(v.get<int64_t>());
          }
        } else if (k == "addresses") {
          out.addresses = ReadAddresses(v, sub, problems);
        } else {
          problems->Add(sub, "unknown key (known: name, mtu, addresses)");
        }
      }
    } else {
      problems->Add(at, "unknown key (known: apiVersion, kind, interface)");
    }
  }
  return out;
}

}  // namespace

std::string CheckPodInterfaceName(const std::string& name) {
  if (name == "lo" || name == "eth0") return "\"" + name + "\" is the pod's own interface";
  std::string problem = config::IfNameProblem(name);
  return problem.empty() ? "" : "it " + problem;
}

Result<std::vector<PodInterfaceConfig>> ResolvePodInterfaces(
    const json& config, const std::string& driver, const std::vector<ConfigTarget>& targets) {
  std::vector<PodInterfaceConfig> out(targets.size());
  if (config.is_null()) return out;
  Problems problems;
  const std::string base = "status.allocation.devices.config";
  if (!config.is_array()) return Status::InvalidArgument(base + ": not an array");
  if (config.size() > kMaxClaimConfigs) {
    return Status::InvalidArgument(base + ": more than " + std::to_string(kMaxClaimConfigs) +
                                   " entries");
  }
  for (size_t i = 0; i < config.size(); ++i) {
    const json& entry = config[i];
    const std::string path = base + "[" + std::to_string(i) + "]";
    if (!entry.is_object()) continue;  // the API server's shape; not ours to judge
    auto opaque = entry.find("opaque");
    if (opaque == entry.end() || !opaque->is_object()) continue;
    auto drv = opaque->find("driver");
    if (drv == opaque->end() || !drv->is_string() || drv->get<std::string>() != driver) continue;
    auto params = opaque->find("parameters");
    if (params == opaque->end()) continue;
    const json requests = entry.value("requests", json::array());
    const PodInterfaceConfig c = ReadParameters(*params, path + ".opaque.parameters", &problems);
    std::set<std::string> named;
    for (size_t t = 0; t < targets.size(); ++t) {
      if (!Covers(requests, targets[t].request)) continue;
      if (c.name || c.addresses) named.insert(targets[t].device);
      if (c.name) out[t].name = c.name;
      if (c.mtu) out[t].mtu = c.mtu;
      if (c.addresses) out[t].addresses = c.addresses;
    }
    if (named.size() > 1) {
      problems.Add(path + ".opaque.parameters.interface." + (c.name ? "name" : "addresses"),
                   std::string(c.name ? "names one interface" : "are one interface's") +
                       " but applies to " + std::to_string(named.size()) +
                       " devices; give each request its own entry");
    }
  }
  // Two devices under one name (from two entries) cannot both enter the pod.
  std::set<std::pair<std::string, std::string>> seen;  // (name, device)
  std::set<std::string> names;
  for (size_t t = 0; t < targets.size(); ++t) {
    if (!out[t].name || !seen.insert({*out[t].name, targets[t].device}).second) continue;
    if (!names.insert(*out[t].name).second) {
      problems.Add(base, "interface name \"" + *out[t].name + "\" is given to two devices");
    }
  }
  if (!problems.empty()) return problems.ToStatus();
  return out;
}

}  // namespace hcashare::dra
