// The configuration's DRA keys (issue 27): a resource's `api`, and the top-level `draDriver`
// and `draNumaNode`. A DRA resource's devices are named objects in ResourceSlices, so the
// keys that shape a device plugin's kubelet view (topology hints, the CDI kind of its spec)
// mean nothing for it and are refused with the reason.
#include <string>

#include "config/json_fields.h"
#include "config/names.h"
#include "config/validator_impl.h"

namespace hcashare::config::detail {
namespace {

// The keys a DRA resource refuses, and why each means nothing there.
struct DevicePluginOnlyKey {
  const char* key;
  const char* why;
};

constexpr DevicePluginOnlyKey kDevicePluginOnlyKeys[] = {
    {"topologyAware",
     "a DRA device carries its own NUMA node (resource.kubernetes.io/numaNode) and a claim "
     "aligns devices with matchAttribute, so there are no IDs to spread over NUMA nodes"},
    {"excludeTopology",
     "DRA devices give the kubelet no topology hints; the numaNode attribute's form is the "
     "top-level \"draNumaNode\""},
    {"cdiKind",
     "the kubelet side of the DRA driver writes one CDI spec per claim, of kind "
     "\"<draDriver>/claim\""},
};

}  // namespace

// api: "devicePlugin" (default when absent or null) or "dra", case-sensitive. kUnknown when
// the value is invalid (reported).
ApiCheck Validator::ParseApi(FieldReader& entry) {
  if (entry.Find("api") == nullptr) return ApiCheck::kDevicePlugin;
  const std::optional<std::string> api = entry.String("api");
  if (!api) return ApiCheck::kUnknown;
  if (*api == "devicePlugin") return ApiCheck::kDevicePlugin;
  if (*api == "dra") return ApiCheck::kDra;
  Error(entry.PathOf("api"), "unknown api " + Quote(*api) +
                                 "; accepted values: \"devicePlugin\" (the default), \"dra\" "
                                 "(case-sensitive)");
  return ApiCheck::kUnknown;
}

// Every device-plugin-only key a DRA resource gives (any value, even false) is an error.
void Validator::CheckDraEntry(FieldReader& entry) {
  for (const DevicePluginOnlyKey& k : kDevicePluginOnlyKeys) {
    if (entry.Find(k.key) == nullptr) continue;
    Error(entry.PathOf(k.key), std::string("is not used by a DRA resource (\"api\": \"dra\"): ") +
                                   k.why + "; remove it");
  }
}

// draDriver: optional DraDriverProblem-valid name, default kDefaultDraDriver; draNumaNode:
// "scalar" (default) or "list".
void Validator::ParseDraSettings(FieldReader& root, PluginConfig* out) {
  if (const std::optional<std::string> driver = root.String("draDriver")) {
    const std::string problem = DraDriverProblem(*driver);
    if (problem.empty()) {
      out->dra_driver = *driver;
    } else {
      Error(root.PathOf("draDriver"), problem);
    }
  }
  if (root.Find("draNumaNode") == nullptr) return;
  const std::optional<std::string> form = root.String("draNumaNode");
  if (!form) return;
  if (*form == "scalar") {
    out->dra_numa_node = DraNumaNodeForm::kScalar;
  } else if (*form == "list") {
    out->dra_numa_node = DraNumaNodeForm::kList;
  } else {
    Error(root.PathOf("draNumaNode"),
          "unknown form " + Quote(*form) +
              "; accepted values: \"scalar\" (the default: {\"int\": N}), \"list\" ({\"ints\": "
              "[N]}, for clusters with the DRAListTypeAttributes feature gate)");
  }
}

}  // namespace hcashare::config::detail
