// A small JSON Schema (draft-07) validator for tests: the subset that
// deploy/helm/hcashare/values.schema.json uses, which is what Helm checks a chart's values
// against before rendering. Debian 12 has neither helm nor a JSON Schema library for C++.
//
// Supported keywords: type (a name or a list of names), enum, const, properties,
// required, additionalProperties (false or a schema), items (one schema), minItems,
// maxItems, minLength, maxLength, pattern (ECMAScript, unanchored, as draft-07 says),
// minimum, maximum, $ref to "#/definitions/NAME", and the annotations $schema, $id,
// $comment, title, description, default, examples and definitions. A schema that uses
// any other keyword is rejected instead of half-checked: validation would silently pass.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace hcashare::deploy {

// Every way `instance` breaks `schema`, one line each: "<path>: <what>", the path as
// dotted keys and [indexes] ("metrics.port", "tolerations[0].effect", "(root)"). Empty
// when the instance is valid. Throws std::invalid_argument when the schema itself uses an
// unsupported keyword, a malformed value or a $ref that does not resolve.
std::vector<std::string> ValidateJsonSchema(const nlohmann::json& schema,
                                            const nlohmann::json& instance);

}  // namespace hcashare::deploy
