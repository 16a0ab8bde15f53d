// testing/openapi_lite: the OpenAPI v3 dialect of the API server's documents, and schemas it
// must refuse rather than half-check.
#include "testing/openapi_lite.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

namespace hcashare::testing {
namespace {

using json = nlohmann::json;

// A document whose schemas are `schemas`, validated from "Root".
std::vector<std::string> Check(const json& schemas, const json& instance) {
  return ValidateOpenApi({{"openapi", "3.0.0"}, {"components", {{"schemas", schemas}}}}, "Root",
                         instance);
}

std::vector<std::string> CheckRoot(const json& root, const json& instance) {
  return Check({{"Root", root}}, instance);
}

using Problems = std::vector<std::string>;

TEST(OpenApiLiteTest, RefsAllOfAndRequired) {
  json schemas = {
      {"Root",
       {{"type", "object"},
        {"required", {"spec"}},
        {"properties",
         {{"spec",
           {{"default", json::object()}, {"allOf", {{{"$ref", "#/components/schemas/Spec"}}}}}}}}}},
      {"Spec",
       {{"type", "object"},
        {"required", {"n"}},
        {"properties", {{"n", {{"type", "integer"}, {"format", "int32"}}}}}}}};
  EXPECT_EQ(Check(schemas, {{"spec", {{"n", 1}}}}), Problems{});
  EXPECT_EQ(Check(schemas, json::object()), Problems{"(root): required field \"spec\" is missing"});
  EXPECT_EQ(Check(schemas, {{"spec", {{"n", 4294967296}}}}),
            Problems{"spec.n: 4294967296 does not fit format int32"});
  EXPECT_EQ(Check(schemas, {{"spec", {{"n", 1.0}}}}),
            Problems{"spec.n: expected integer, got number 1.0"});
  EXPECT_EQ(Check(schemas, {{"spec", {{"n", 1}, {"m", 2}}}}), Problems{"spec.m: unknown field"});
}

TEST(OpenApiLiteTest, MapsFreeFormAndPreservedObjects) {
  json map = {{"type", "object"}, {"additionalProperties", {{"type", "string"}}}};
  EXPECT_EQ(CheckRoot(map, {{"a", "x"}, {"b", "y"}}), Problems{});
  EXPECT_EQ(CheckRoot(map, {{"a", 1}}), Problems{"a: expected string, got integer 1"});
  // No properties, no additionalProperties: free form (metav1.FieldsV1).
  EXPECT_EQ(CheckRoot({{"type", "object"}}, {{"f:spec", {{".", json::object()}}}}), Problems{});
  json closed = {{"type", "object"},
                 {"properties", {{"a", {{"type", "string"}}}}},
                 {"additionalProperties", false}};
  EXPECT_EQ(CheckRoot(closed, {{"z", 1}}), Problems{"z: unknown field"});
  json preserve = {{"type", "object"},
                   {"properties", {{"a", {{"type", "string"}}}}},
                   {"x-kubernetes-preserve-unknown-fields", true}};
  EXPECT_EQ(CheckRoot(preserve, {{"z", 1}}), Problems{});
}

TEST(OpenApiLiteTest, NullableOneOfAndIntOrString) {
  json s = {{"type", "string"}, {"nullable", true}};
  EXPECT_EQ(CheckRoot(s, nullptr), Problems{});
  EXPECT_EQ(CheckRoot({{"type", "string"}}, nullptr),
            Problems{"(root): null is not allowed (the schema is not nullable)"});
  json quantity = {{"oneOf", {{{"type", "string"}}, {{"type", "number"}}}}};
  EXPECT_EQ(CheckRoot(quantity, "1Gi"), Problems{});
  EXPECT_EQ(CheckRoot(quantity, 3), Problems{});
  ASSERT_EQ(CheckRoot(quantity, true).size(), 1u);
  EXPECT_NE(CheckRoot(quantity, true)[0].find("matches none of the 2 oneOf schemas"),
            std::string::npos);
  json both = {{"oneOf", {{{"type", "integer"}}, {{"type", "number"}}}}};
  EXPECT_EQ(CheckRoot(both, 3), Problems{"(root): matches 2 oneOf schemas, not one"});
  json ios = {{"type", "string"}, {"format", "int-or-string"}};
  EXPECT_EQ(CheckRoot(ios, 80), Problems{});
  EXPECT_EQ(CheckRoot(ios, "http"), Problems{});
  EXPECT_EQ(CheckRoot(ios, 1.5), Problems{"(root): expected string, got number 1.5"});
}

TEST(OpenApiLiteTest, ListTypesFormatsAndBounds) {
  json set = {
      {"type", "array"}, {"items", {{"type", "string"}}}, {"x-kubernetes-list-type", "set"}};
  EXPECT_EQ(CheckRoot(set, {"a", "b"}), Problems{});
  EXPECT_EQ(CheckRoot(set, {"a", "a"}),
            Problems{"[1]: duplicate entry \"a\" in a list of type set"});
  json map = {{"type", "array"},
              {"items", {{"type", "object"}}},
              {"x-kubernetes-list-type", "map"},
              {"x-kubernetes-list-map-keys", {"k"}}};
  EXPECT_EQ(CheckRoot(map, {{{"k", 1}}, {{"k", 2}}}), Problems{});
  EXPECT_EQ(CheckRoot(map, {{{"k", 1}, {"v", 1}}, {{"k", 1}, {"v", 2}}}),
            Problems{"[1]: duplicate entry [1] in a list of type map"});
  json bytes = {{"type", "string"}, {"format", "byte"}};
  EXPECT_EQ(CheckRoot(bytes, "aGVsbG8="), Problems{});
  EXPECT_EQ(CheckRoot(bytes, "hello!"), Problems{"(root): \"hello!\" is not base64 (format byte)"});
  json time = {{"type", "string"}, {"format", "date-time"}};
  EXPECT_EQ(CheckRoot(time, "2026-12-02T19:00:00Z"), Problems{});
  EXPECT_EQ(CheckRoot(time, "2026-13-02T19:00:00Z").size(), 1u);
  json bounded = {
      {"type", "array"}, {"maxItems", 2}, {"items", {{"type", "string"}, {"maxLength", 3}}}};
  EXPECT_EQ(CheckRoot(bounded, {"abc", "é"}), Problems{});
  EXPECT_EQ(CheckRoot(bounded, {"abcd", "a", "b"}),
            (Problems{"(root): more than 2 items", "[0]: \"abcd\" is longer than 3"}));
  json e = {{"type", "string"}, {"enum", {"NoSchedule", "NoExecute"}}};
  EXPECT_EQ(CheckRoot(e, "PreferNoSchedule"),
            Problems{"(root): \"PreferNoSchedule\" is not one of [\"NoSchedule\",\"NoExecute\"]"});
}

// A schema the validator cannot check fully is an error, even where the instance never goes.
TEST(OpenApiLiteTest, UnsupportedSchemasThrow) {
  const json unreached = json::object();
  auto throws = [&](const json& sub) {
    json root = {{"type", "object"}, {"properties", {{"x", sub}}}};
    EXPECT_THROW(CheckRoot(root, unreached), std::invalid_argument) << sub.dump();
  };
  throws({{"anyOf", {{{"type", "string"}}}}});
  throws({{"not", {{"type", "string"}}}});
  throws({{"type", "object"}, {"x-kubernetes-embedded-resource", true}});
  throws({{"type", "string"}, {"format", "uuid"}});
  throws({{"type", "string"}, {"format", "int64"}});
  throws({{"type", {"string", "null"}}});
  throws({{"type", "null"}});
  throws({{"$ref", "#/definitions/Spec"}});
  throws({{"$ref", "#/components/schemas/Missing"}});
  throws({{"$ref", "#/components/schemas/Root"}, {"type", "object"}});
  throws({{"type", "array"}, {"x-kubernetes-list-type", "map"}});
  throws({{"type", "array"}, {"x-kubernetes-list-type", "bag"}});
  throws({{"type", "string"}, {"pattern", "("}});
  throws({{"type", "string"}, {"nullable", "yes"}});
  throws({{"allOf", json::array()}});
  // A bad schema reached only through a $ref is found too.
  json schemas = {
      {"Root", {{"type", "object"}, {"properties", {{"x", {{"$ref", "#/components/schemas/B"}}}}}}},
      {"B", {{"type", "object"}, {"discriminator", {{"propertyName", "k"}}}}}};
  EXPECT_THROW(Check(schemas, unreached), std::invalid_argument);
  EXPECT_THROW(ValidateOpenApi(json::object(), "Root", unreached), std::invalid_argument);
  json doc = {{"components", {{"schemas", {{"Root", {{"type", "object"}}}}}}}};
  EXPECT_THROW(ValidateOpenApi(doc, "Other", unreached), std::invalid_argument);
}

}  // namespace
}  // namespace hcashare::testing
