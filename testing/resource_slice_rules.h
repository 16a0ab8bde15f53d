// The API server's validation rules for a ResourceSlice that its OpenAPI schema cannot say
// (names, limits, one value per attribute), for tests: the one copy behind both
// ValidateResourceSlice (testing/resource_slice_schema.h) and the fake API server's
// admission (testing/fake_apiserver_slices.cc). Each rule below was seen refusing an object
// on kube-apiserver v1.34.9 (dry-run create), but one: v1.34.9 took 65 devices with taints
// or counters in a slice; newer servers allow 64 (upstream's
// ResourceSliceMaxDevicesWithTaintsOrConsumesCounters), as dra/slices.h splits, so the
// check keeps the newer limit. Facts: shared reference "kube-api-and-dra.md" §3.3–§3.4.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace hcashare::testing {

// One broken rule: the field and what is wrong with it, worded as kube-apiserver words a
// 422 cause ("Invalid value: ...", "Too many: ...", "Required value", ...).
struct SliceProblem {
  std::string field;
  std::string what;
  bool operator==(const SliceProblem& o) const { return field == o.field && what == o.what; }
};

// Every rule the ResourceSlice `slice` breaks (at most `max`), for a slice of the
// resource.k8s.io version the caller names (`v1beta1`: devices wrap their fields in
// `basic`):
//  - spec.driver, lower-cased, a DNS subdomain of at most 63 characters; spec.pool.name
//    at most 253, DNS subdomains joined by '/'; spec.pool.generation at least 0 and
//    resourceSliceCount above 0; exactly one of nodeName, nodeSelector, allNodes,
//    perDeviceNodeSelection; nodeName a DNS subdomain;
//  - ownerReferences with a non-empty uid;
//  - at most 128 devices, 64 when one uses taints, consumesCounters or a list attribute;
//    device names unique DNS labels;
//  - per device at most 32 attributes and capacities together; their names qualified
//    (a C identifier of at most 32 characters, optionally after "<DNS subdomain>/");
//    each attribute exactly one value of its type, strings and versions at most 64
//    characters, versions semantic versions 2.0.0; capacities valid quantities.
std::vector<SliceProblem> ResourceSliceProblems(const nlohmann::json& slice, bool v1beta1,
                                                size_t max = 20);

// ResourceSliceProblems for a slice that already matches the schema of its apiVersion
// (ValidateResourceSlice calls it then), one "field: what" line each.
std::vector<std::string> ResourceSliceRuleProblems(const nlohmann::json& slice);

}  // namespace hcashare::testing
