// The keyword checks JSON Schema and OpenAPI share, for the two test validators
// (tests/json_schema_lite.h, testing/openapi_lite.h): a schema whose enum, length, bound or
// pattern keyword is malformed is refused rather than half-checked.
#pragma once

#include <cstdint>
#include <regex>
#include <string>

#include <nlohmann/json.hpp>

namespace hcashare::testing {

// Calls `bad(what)` (which must not return) for the first malformed one of `schema`'s enum,
// minItems, maxItems, minLength, maxLength, minimum, maximum and pattern keywords.
template <typename Bad>
void CheckSharedKeywords(const nlohmann::json& schema, Bad&& bad) {
  if (schema.contains("enum") && (!schema["enum"].is_array() || schema["enum"].empty())) {
    bad("enum must be a non-empty array");
  }
  for (const char* k : {"minItems", "maxItems", "minLength", "maxLength"}) {
    if (schema.contains(k) && !(schema[k].is_number_integer() && schema[k].get<int64_t>() >= 0)) {
      bad(std::string(k) + " must be a non-negative integer");
    }
  }
  for (const char* k : {"minimum", "maximum"}) {
    if (schema.contains(k) && !schema[k].is_number()) bad(std::string(k) + " must be a number");
  }
  if (schema.contains("pattern")) {
    if (!schema["pattern"].is_string()) bad("pattern must be a string");
    try {
      std::regex(schema["pattern"].get<std::string>(), std::regex::ECMAScript);
    } catch (const std::regex_error& e) {
      bad("pattern " + schema["pattern"].dump() + ": " + e.what());
    }
  }
}

}  // namespace hcashare::testing
