// Fuzzes the device-plugin config parser and validator, ParseConfig, on JSON and YAML
// text (the format is chosen by content, as for a file without an extension: '{' first
// means JSON).
// Invariants beyond "no crash":
//  - a config is returned iff there are no errors, and every issue path starts with "$";
//  - a valid config, rendered back to JSON (canonical form), parses to the same config,
//    both as JSON and as YAML (so normalisation is idempotent and both syntaxes agree).
#include <cstddef>
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "config/config.h"
#include "fuzz/fuzz_check.h"

namespace {

using hcashare::config::ConfigFormat;
using hcashare::config::DraNumaNodeForm;
using hcashare::config::ParseConfig;
using hcashare::config::ParseOutcome;
using hcashare::config::PfNameSelector;
using hcashare::config::PluginConfig;
using hcashare::config::PoolMode;
using hcashare::config::ResourceApi;
using hcashare::config::ResourceApiName;
using hcashare::config::ResourceConfig;
using hcashare::config::Selectors;
using nlohmann::json;

// "pf", "pf#3" or "pf#2-7".
std::string RenderPfName(const PfNameSelector& s) {
  if (s.first_vf < 0) return s.pf;
  std::string out = s.pf + "#" + std::to_string(s.first_vf);
  if (s.last_vf != s.first_vf) out += "-" + std::to_string(s.last_vf);
  return out;
}

json RenderSelectors(const Selectors& s) {
  json j = json::object();
  auto list = [&j](const char* key, const auto& values) {
    if (!values.empty()) j[key] = values;
  };
  list("vendors", s.vendors);
  list("deviceIDs", s.device_ids);
  list("drivers", s.drivers);
  list("ifNames", s.if_names);
  list("linkTypes", s.link_types);
  list("pciAddresses", s.pci_addresses);
  list("rdmaDevices", s.rdma_devices);
  list("numaNodes", s.numa_nodes);
  json pf_names = json::array();
  for (const PfNameSelector& p : s.pf_names) pf_names.push_back(RenderPfName(p));
  list("pfNames", pf_names);
  if (s.is_vf) j["isVF"] = *s.is_vf;
  return j;
}

json RenderResource(const ResourceConfig& r) {
  json j = {{"resourceName", r.resource_name},
            {"resourcePrefix", r.resource_prefix},
            {"api", ResourceApiName(r.api)},
            {"selectors", RenderSelectors(r.selectors)}};
  // A DRA resource refuses the device-plugin-only keys, even when false.
  if (r.api == ResourceApi::kDevicePlugin) {
    j["topologyAware"] = r.topology_aware;
    j["excludeTopology"] = r.exclude_topology;
  }
  if (r.mode == PoolMode::kExclusive) {
    j["mode"] = "exclusive";
  } else {
    j["mode"] = "shared";
    j["rdmaHcaMax"] = r.rdma_hca_max;
  }
  if (!r.cdi_kind.empty()) j["cdiKind"] = r.cdi_kind;
  return j;
}

// The canonical JSON text of `config`.
std::string Render(const PluginConfig& config) {
  json list = json::array();
  for (const ResourceConfig& r : config.resources) list.push_back(RenderResource(r));
  json root = {{"periodicUpdateInterval", config.periodic_update_seconds},
               {"configList", list},
               {"draDriver", config.dra_driver},
               {"draNumaNode", config.dra_numa_node == DraNumaNodeForm::kList ? "list" : "scalar"}};
  return root.dump(1);
}

bool SameConfig(const PluginConfig& a, const PluginConfig& b) { return a == b; }

void CheckOutcome(const ParseOutcome& outcome) {
  FUZZ_CHECK(outcome.config.has_value() == outcome.errors.empty());
  for (const auto& issue : outcome.errors) FUZZ_CHECK(issue.path.rfind("$", 0) == 0);
  for (const auto& issue : outcome.warnings) FUZZ_CHECK(issue.path.rfind("$", 0) == 0);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  const ParseOutcome outcome = ParseConfig(text);
  CheckOutcome(outcome);
  if (!outcome.config) return 0;

  const std::string canonical = Render(*outcome.config);
  for (ConfigFormat format : {ConfigFormat::kJson, ConfigFormat::kYaml}) {
    const ParseOutcome again = ParseConfig(canonical, format);
    CheckOutcome(again);
    if (!again.config) {
      std::fprintf(stderr, "canonical form rejected:\n%s\n%s", canonical.c_str(),
                   hcashare::config::FormatIssues(again).c_str());
    }
    FUZZ_CHECK(again.config.has_value());
    FUZZ_CHECK(SameConfig(*again.config, *outcome.config));
  }
  return 0;
}
