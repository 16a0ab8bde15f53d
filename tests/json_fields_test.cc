// json/fields.h in its two styles: JSONPath paths with null as absent (the config's and the
// CNI's inputs), and JSON Pointer paths with null as a wrong type (a host snapshot).
#include "json/fields.h"

#include <gtest/gtest.h>

#include <string>

#include "json/parse.h"

namespace hcashare::jsonin {
namespace {

const nlohmann::json kDoc =
    nlohmann::json::parse(R"({"name": null, "list": [{"n": 1}, {"n": "x"}], "map": {"a b": 5}})");

TEST(JsonFields, JsonPathStyleCountsNullAsAbsent) {
  IssueList issues;
  FieldReader in(kDoc, "$", &issues);
  EXPECT_FALSE(in.String("name").has_value());
  EXPECT_TRUE(issues.empty());
  ForEachObject(in, "list", Need::kOptional, [](FieldReader& item) { item.Integer("n"); });
  ASSERT_EQ(issues.size(), 1u);
  EXPECT_EQ(issues.listed()[0].ToString(), R"($.list[1].n: must be an integer, got string "x")");
  EXPECT_EQ(in.At(kDoc["map"], in.PathOf("map")).PathOf("a b"), R"($.map["a b"])");
}

TEST(JsonFields, JsonPointerStyleCountsNullAsAWrongType) {
  IssueList issues(1);
  FieldReader in(kDoc, "", &issues, {nullptr, PathSyntax::kJsonPointer, false});
  EXPECT_FALSE(in.String("name").has_value());
  ForEachObject(in, "list", Need::kOptional, [](FieldReader& item) { item.Integer("n"); });
  ASSERT_EQ(issues.size(), 2u);  // only the first is listed
  ASSERT_EQ(issues.listed().size(), 1u);
  EXPECT_EQ(issues.listed()[0].ToString(), "/name: must be a string, got null");
  EXPECT_EQ(in.PathOfElement(in.PathOf("list"), 1), "/list/1");
  EXPECT_EQ(in.At(kDoc["map"], in.PathOf("map")).PathOf("a b"), "/map/a b");
}

// max_values counts every value, containers and the root included, and stops the parse at
// the first one too many (a tree's memory follows its values, not its text).
TEST(JsonParse, MaxValuesBoundsTheTree) {
  JsonParseOptions o;
  o.max_values = 4;
  EXPECT_TRUE(ParseJson(R"({"a": [1, 2]})", o).ok());  // object, array, 1, 2
  Result<nlohmann::json> over = ParseJson(R"({"a": [1, 2, {}]})", o);
  ASSERT_FALSE(over.ok());
  EXPECT_EQ(over.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(over.status().message(), "more than 4 values");
  o.max_values = 0;  // no limit
  std::string many = "[0";
  for (int i = 0; i < 20000; ++i) many += ",0";
  EXPECT_TRUE(ParseJson(many + "]", o).ok());
}

}  // namespace
}  // namespace hcashare::jsonin
