// A small OpenAPI v3.0 schema validator for tests: the dialect of the documents the
// Kubernetes API server serves at /openapi/v3/apis/<group>/<version>, checked the way the
// server decodes an object sent with fieldValidation=Strict. A sibling of
// tests/json_schema_lite.h (JSON Schema draft-07), which knows neither components nor
// OpenAPI's keywords.
//
// Supported assertions: type (one name: object, array, string, integer, number, boolean),
// format (int32 and int64 on integers, byte and date-time on strings), enum, properties,
// required, additionalProperties (a boolean or a schema: maps), items, allOf, oneOf,
// nullable, minItems, maxItems, minLength, maxLength, pattern, minimum, maximum,
// $ref to "#/components/schemas/NAME", and the Kubernetes extensions
// x-kubernetes-list-type (atomic, set: items unique, map: the x-kubernetes-list-map-keys
// unique), x-kubernetes-preserve-unknown-fields and x-kubernetes-int-or-string.
// Annotations: description, title, default, example, deprecated, x-kubernetes-map-type,
// x-kubernetes-patch-merge-key, x-kubernetes-patch-strategy,
// x-kubernetes-group-version-kind, x-kubernetes-list-map-keys.
//
// Where OpenAPI leaves a choice, the server's strict decoding decides:
//  - an object schema with `properties` refuses keys it does not list, unless
//    additionalProperties or x-kubernetes-preserve-unknown-fields allows them ("unknown
//    field"); an object schema with neither properties nor additionalProperties is free
//    form (metav1.FieldsV1);
//  - `integer` takes JSON integers only (1.0 is refused, as Go's decoder refuses it);
//  - null is refused unless the schema says nullable (stricter than the server, which reads
//    null as "absent" for built-in types: an object we send should not carry nulls);
//  - list types set and map are enforced on every object (stricter than a v1.34.9 create,
//    which took two ownerReferences with one uid).
// Any other keyword or format is rejected (std::invalid_argument) instead of half-checked.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace hcashare::testing {

// Every way `instance` breaks the schema `root` of `document` (an OpenAPI v3 document: its
// schemas under components.schemas), one line each: "<path>: <what>", the path as the API
// server writes it ("spec.devices[0].attributes.rdmaDevice.string", "(root)"). Empty when
// the instance is valid. Throws std::invalid_argument when `root` is not in the document,
// or a schema reachable from it uses an unsupported keyword or format, a malformed value or
// a $ref that does not resolve (every reachable schema is checked, used or not).
std::vector<std::string> ValidateOpenApi(const nlohmann::json& document, const std::string& root,
                                         const nlohmann::json& instance);

}  // namespace hcashare::testing
