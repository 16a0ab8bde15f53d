// The Kubernetes OpenAPI schema of ResourceSlice, per version of resource.k8s.io, for tests:
// "every object sent validates against the schema of its version" (issue 27). The schemas
// are the ones kube-apiserver v1.34.9 serves, trimmed to ResourceSlice and what it
// references (tests/data/openapi/, README.md there; scripts/openapi-extract.sh), and checked
// by testing/openapi_lite.h as the server decodes with fieldValidation=Strict.
//
// v1.34.9 lacks one field the design uses: DeviceAttribute `ints` (KEP-5491, alpha in
// 1.36, for `"draNumaNode": "list"`). A test that sends it asks for it by name
// (SliceSchemaExtension::kListAttributes), which adds exactly that field to the v1 schema;
// v1beta2 and v1beta1 never get it (servers that know list attributes serve v1).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace hcashare::testing {

// What a check accepts beyond the v1.34.9 schemas.
enum class SliceSchemaExtension {
  kNone,            // the schemas exactly as served
  kListAttributes,  // + v1 DeviceAttribute.ints (array of int64, list type atomic)
};

// Every way `slice` breaks the ResourceSlice schema of its apiVersion
// ("resource.k8s.io/v1", "resource.k8s.io/v1beta2", "resource.k8s.io/v1beta1"), one line
// each ("spec.devices[0].basic: unknown field"); a missing or other apiVersion, or a kind
// other than ResourceSlice, is a problem too. A slice that matches the schema is then held
// to the server's rules the schema cannot say (ResourceSliceRuleProblems in
// testing/resource_slice_rules.h). Empty when valid. Throws std::runtime_error
// when the vendored schema files cannot be read (a broken checkout, not a bad slice).
std::vector<std::string> ValidateResourceSlice(
    const nlohmann::json& slice, SliceSchemaExtension extension = SliceSchemaExtension::kNone);

// The OpenAPI document for `version` ("v1", "v1beta2", "v1beta1") with `extension` applied;
// its root schema is io.k8s.api.resource.<version>.ResourceSlice. Throws
// std::invalid_argument for another version, std::runtime_error as above.
const nlohmann::json& ResourceSliceSchema(const std::string& version,
                                          SliceSchemaExtension extension);

}  // namespace hcashare::testing
