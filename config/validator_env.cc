// The configuration's checks of the environment variables the resources set in a container
// (common/env_names.h): every resource's own names are distinct, and the names that are
// not per resource (HCASHARE_RDMA_DEVICES, NCCL_IB_HCA) are set where they cannot conflict.
#include <map>
#include <string>
#include <vector>

#include "common/env_names.h"
#include "config/json_fields.h"
#include "config/validator_impl.h"

namespace hcashare::config::detail {
namespace {

// The warning for a variable that is not per resource, set by `path`'s resource and by
// `first`'s: a container holding both resources gets one value only.
std::string SharedNameWarning(const std::string& var, const std::string& first,
                              const std::string& own) {
  return var + " is also set by " + first +
         ": in a container that holds both resources the kubelet keeps one of the two values "
         "(\"conflicting setting\"), so the container does not see the other resource's "
         "devices; use " +
         own + " (docs/device-plugin.md, \"What a pod gets\")";
}

}  // namespace

// Per-resource names: "HCASHARE_RDMA_DEVICES_<suffix>" (and PCIDEVICE_<...>, whose
// suffixes differ at most where these have '_') must differ between resources; a collision
// is reported at the later entry's resourceName. Resolves setRdmaDevicesEnv's default (true
// only for a list of one resource) and warns when two resources set one of the shared names.
void Validator::CheckEnvNames(const json& list, const std::string& path,
                              std::vector<ResourceConfig>* resources) {
  std::map<std::string, std::string> by_suffix;     // ResourceEnvSuffix -> path of first use
  std::map<std::string, size_t> by_name;            // resourceName -> index of first use
  std::string rdma_env_first, nccl_first;           // the first entry that sets each shared name
  std::map<std::string, std::string> full_name_at;  // entry path -> its resource's name
  size_t next = 0;  // ParseConfigList keeps only the entries that are objects
  for (size_t i = 0; i < list.size() && next < resources->size(); ++i) {
    if (!list[i].is_object()) continue;
    ResourceConfig& rc = (*resources)[next++];
    const std::string entry_path = JoinIndex(path, i);
    // Absent or null: the default.
    const auto given = list[i].find("setRdmaDevicesEnv");
    if (given == list[i].end() || given->is_null()) rc.set_rdma_devices_env = list.size() == 1;
    if (rc.set_rdma_devices_env && rdma_env_first.empty()) {
      rdma_env_first = entry_path;
    } else if (rc.set_rdma_devices_env) {
      warnings_.push_back(
          {JoinKey(entry_path, "setRdmaDevicesEnv"),
           SharedNameWarning(kRdmaDevicesEnv, rdma_env_first, RdmaDevicesEnvName(rc.FullName()))});
    }
    if (rc.set_nccl_ib_hca && nccl_first.empty()) {
      nccl_first = entry_path;
    } else if (rc.set_nccl_ib_hca) {
      warnings_.push_back(
          {JoinKey(entry_path, "setNcclIbHca"),
           SharedNameWarning("NCCL_IB_HCA", nccl_first,
                             "NCCL_IB_HCA composed from every HCASHARE_RDMA_DEVICES_* in the "
                             "container's command")});
    }
    if (rc.resource_name.empty() || rc.resource_prefix.empty()) continue;
    // A repeated resourceName is reported as such (ParseConfigList).
    if (!by_name.emplace(rc.resource_name, i).second) continue;
    full_name_at[entry_path] = rc.FullName();
    auto [it, inserted] = by_suffix.emplace(ResourceEnvSuffix(rc.FullName()), entry_path);
    if (inserted) continue;
    Error(JoinKey(entry_path, "resourceName"),
          "the environment variable " + RdmaDevicesEnvName(rc.FullName()) + " of " + rc.FullName() +
              " is also the one of " + full_name_at[it->second] + " (" + it->second +
              "): a container holding both would see one of them only; rename one of the two "
              "resources (the variable's suffix is the resource name upper-cased, with every "
              "character other than a letter or digit as '_')");
  }
}

}  // namespace hcashare::config::detail
