// The public entry points of the config module (see config.h). Text becomes an
// nlohmann::json tree (json/document.h), which config/validator.h checks and converts.
#include <cctype>
#include <cerrno>
#include <exception>
#include <string_view>
#include <utility>

#include "common/safe_file.h"
#include "common/status.h"
#include "config/config.h"
#include "config/json_fields.h"
#include "config/validator.h"

namespace hcashare::config {
namespace {

// Removes a leading UTF-8 byte-order mark, which some editors add.
std::string_view StripBom(std::string_view text) {
  constexpr std::string_view kBom = "\xEF\xBB\xBF";
  if (text.substr(0, kBom.size()) == kBom) text.remove_prefix(kBom.size());
  return text;
}

// The format implied by a file name's extension (case-insensitive), else kAuto.
ConfigFormat FormatFromPath(const std::string& path) {
  const size_t dot = path.find_last_of("./");
  if (dot == std::string::npos || path[dot] != '.') return ConfigFormat::kAuto;
  std::string ext = path.substr(dot + 1);
  for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (ext == "json") return ConfigFormat::kJson;
  if (ext == "yaml" || ext == "yml") return ConfigFormat::kYaml;
  return ConfigFormat::kAuto;
}

// Parses and validates; may throw only on allocation failure (caught by ParseConfig).
ParseOutcome ParseConfigUnchecked(std::string_view text, ConfigFormat format) {
  ParseOutcome outcome;
  text = StripBom(text);
  if (text.size() > kMaxConfigBytes) {
    outcome.errors.push_back({"$", "config is " + std::to_string(text.size()) +
                                       " bytes; the limit is " + std::to_string(kMaxConfigBytes) +
                                       " bytes (what a ConfigMap can hold)"});
    return outcome;
  }
  const size_t first = text.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) {
    outcome.errors.push_back({"$", "config is empty"});
    return outcome;
  }
  if (format == ConfigFormat::kAuto) {
    format = text[first] == '{' ? ConfigFormat::kJson : ConfigFormat::kYaml;
  }
  const bool yaml = format == ConfigFormat::kYaml;
  const std::string input(text);
  // Each list holds the first kMaxListedIssues and counts the rest (IssueList).
  Document doc = yaml ? ParseYamlText(input) : ParseJsonText(input);
  if (!doc.parsed) {
    outcome.errors = std::move(doc.errors).Take("errors");
    return outcome;
  }
  Validation validation = ValidateDocument(doc.root, yaml);
  doc.errors.Append(std::move(validation.errors));
  if (doc.errors.empty()) outcome.config = std::move(validation.config);
  outcome.errors = std::move(doc.errors).Take("errors");
  outcome.warnings = std::move(validation.warnings).Take("warnings");
  return outcome;
}

}  // namespace

bool Selectors::Empty() const {
  return vendors.empty() && device_ids.empty() && drivers.empty() && if_names.empty() &&
         link_types.empty() && pci_addresses.empty() && pf_names.empty() && rdma_devices.empty() &&
         numa_nodes.empty() && !is_vf.has_value();
}

bool Selectors::operator==(const Selectors& o) const {
  return vendors == o.vendors && device_ids == o.device_ids && drivers == o.drivers &&
         if_names == o.if_names && link_types == o.link_types && pci_addresses == o.pci_addresses &&
         pf_names == o.pf_names && rdma_devices == o.rdma_devices && numa_nodes == o.numa_nodes &&
         is_vf == o.is_vf;
}

const char* PoolModeName(PoolMode mode) {
  return mode == PoolMode::kExclusive ? "exclusive" : "shared";
}

const char* ResourceApiName(ResourceApi api) {
  return api == ResourceApi::kDra ? "dra" : "devicePlugin";
}

bool ResourceConfig::operator==(const ResourceConfig& o) const {
  return resource_name == o.resource_name && resource_prefix == o.resource_prefix &&
         mode == o.mode && api == o.api && rdma_hca_max == o.rdma_hca_max &&
         topology_aware == o.topology_aware && exclude_topology == o.exclude_topology &&
         cdi_kind == o.cdi_kind && allow_pf_with_vfs == o.allow_pf_with_vfs &&
         allow_host_uplink == o.allow_host_uplink && set_nccl_ib_hca == o.set_nccl_ib_hca &&
         set_rdma_devices_env == o.set_rdma_devices_env && selectors == o.selectors;
}

bool PluginConfig::HasDra() const {
  for (const ResourceConfig& rc : resources) {
    if (rc.api == ResourceApi::kDra) return true;
  }
  return false;
}

bool PluginConfig::operator==(const PluginConfig& o) const {
  return periodic_update_seconds == o.periodic_update_seconds && resources == o.resources &&
         dra_driver == o.dra_driver && dra_numa_node == o.dra_numa_node;
}

ParseOutcome ParseConfig(const std::string& text, ConfigFormat format) {
  try {
    return ParseConfigUnchecked(text, format);
  } catch (const std::exception& e) {
    ParseOutcome outcome;
    outcome.errors.push_back({"$", std::string("internal error while parsing: ") + e.what()});
    return outcome;
  } catch (...) {
    ParseOutcome outcome;
    outcome.errors.push_back({"$", "internal error while parsing"});
    return outcome;
  }
}

ParseOutcome LoadConfigFile(const std::string& path) {
  // Written by the node's administrator, often as a ConfigMap (config.json is a symlink
  // into ..data/), so symlinks are followed; a FIFO or a huge file is still refused.
  SafeReadOptions read;
  read.max_bytes = kMaxConfigBytes;
  read.follow_symlinks = true;
  read.what = "config file";
  Result<std::string> text = Status::Internal("not read");
  try {
    text = ReadFileSafely(path, read);
  } catch (const std::exception& e) {
    text = Status::IoError("cannot read config file " + path + ": " + e.what());
  }
  if (!text.ok()) {
    ParseOutcome outcome;
    outcome.errors.push_back({"$", text.status().message()});
    return outcome;
  }
  return ParseConfig(*text, FormatFromPath(path));
}

std::string FormatIssues(const ParseOutcome& outcome) {
  std::string out = std::to_string(outcome.errors.size()) + " error(s), " +
                    std::to_string(outcome.warnings.size()) + " warning(s)\n";
  for (const ConfigIssue& e : outcome.errors) out += "error: " + e.ToString() + "\n";
  for (const ConfigIssue& w : outcome.warnings) out += "warning: " + w.ToString() + "\n";
  return out;
}

}  // namespace hcashare::config