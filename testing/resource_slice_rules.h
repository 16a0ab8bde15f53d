// The API server's validation rules for a ResourceSlice that its OpenAPI schema cannot say
// (names, limits, one value per attribute), for tests. Each rule below was seen refusing an
// object on kube-apiserver v1.34.9 (dry-run create), but one: v1.34.9 took 65 devices with
// taints or counters in a slice; newer servers allow 64 (upstream's
// ResourceSliceMaxDevicesWithTaintsOrConsumesCounters), as dra/slices.h splits, so the
// check keeps the newer limit. Facts: shared reference "kube-api-and-dra.md" §3.3–§3.4.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace hcashare::testing {

// Every rule `slice` breaks, one line each ("spec.devices[2].name: ..."), for a slice that
// already matches the schema of its version (ValidateResourceSlice calls it then):
//  - spec.driver, lower-cased, a DNS subdomain of at most 63 characters; spec.pool.name
//    at most 253, DNS subdomains joined by '/'; spec.pool.resourceSliceCount above 0;
//    exactly one of nodeName, nodeSelector, allNodes, perDeviceNodeSelection;
//  - ownerReferences with a non-empty uid;
//  - at most 128 devices, 64 when one uses taints, consumesCounters or a list attribute;
//    device names unique DNS labels;
//  - per device at most 32 attributes and capacities together; their names qualified
//    (a C identifier of at most 32 characters, optionally after "<DNS subdomain>/");
//    each attribute exactly one value, strings and versions at most 64 characters,
//    versions semantic versions 2.0.0; capacities valid quantities.
std::vector<std::string> ResourceSliceRuleProblems(const nlohmann::json& slice);

}  // namespace hcashare::testing
