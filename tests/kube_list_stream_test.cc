// kube::ListSplitter (kube/list_stream.h): a list answer split into its items as its bytes
// arrive, in whatever pieces they come, with strings holding brackets, quotes and escapes,
// an "items" key nested elsewhere, and every malformed or oversized answer refused.
#include "kube/list_stream.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace hcashare::kube {
namespace {

using json = nlohmann::json;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

struct Split {
  std::vector<std::string> items;
  Status fed;
  Result<json> rest = Status::Internal("not finished");
};

// Splits `body` fed in pieces of `piece` bytes.
Split SplitIn(const std::string& body, size_t piece, size_t max_item = 1 << 20) {
  Split out;
  ListSplitter s(max_item, [&](std::string_view item) {
    out.items.emplace_back(item);
    return Status::Ok();
  });
  for (size_t at = 0; at < body.size() && out.fed.ok(); at += piece) {
    out.fed = s.Feed(std::string_view(body).substr(at, piece));
  }
  if (out.fed.ok()) out.rest = s.Finish();
  return out;
}

const char kList[] = R"({"kind": "ConfigMapList", "apiVersion": "v1",
  "metadata": {"resourceVersion": "42", "continue": "abc", "items": [1, 2]},
  "items": [
    {"metadata": {"name": "a"}, "data": {"k": "}]\"{["}},
    {"metadata": {"name": "b\\"}, "items": [{"x": "]"}]}
  ]})";

TEST(ListSplitterTest, ItemsComeOneByOneWhateverThePieces) {
  for (size_t piece : {1u, 2u, 7u, 64u, 4096u}) {
    Split s = SplitIn(kList, piece);
    ASSERT_TRUE(s.fed.ok()) << piece << ": " << s.fed.ToString();
    ASSERT_TRUE(s.rest.ok()) << s.rest.status().ToString();
    ASSERT_EQ(s.items.size(), 2u) << piece;
    EXPECT_EQ(json::parse(s.items[0])["data"]["k"], "}]\"{[");
    EXPECT_EQ(json::parse(s.items[1])["metadata"]["name"], "b\\");
    EXPECT_EQ((*s.rest)["items"], json::array());
    EXPECT_EQ((*s.rest)["metadata"]["continue"], "abc");
    EXPECT_EQ((*s.rest)["metadata"]["items"], json::parse("[1, 2]")) << "not the list's items";
  }
}

TEST(ListSplitterTest, NullAndEmptyItems) {
  Split n = SplitIn(R"({"items": null, "metadata": {}})", 3);
  ASSERT_TRUE(n.rest.ok());
  EXPECT_TRUE((*n.rest)["items"].is_null());
  EXPECT_TRUE(n.items.empty());
  Split e = SplitIn(R"({"items":[]})", 1);
  ASSERT_TRUE(e.rest.ok());
  EXPECT_TRUE(e.items.empty());
}

TEST(ListSplitterTest, MalformedAnswersAreRefused) {
  EXPECT_FALSE(SplitIn(R"([{"a": 1}])", 4).fed.ok()) << "not an object";
  EXPECT_FALSE(SplitIn(R"({"items": [1, 2]})", 4).fed.ok()) << "items that are not objects";
  // Found by fuzz/kube_list_stream_fuzz.cc: an item closed by ']' was handed over.
  EXPECT_FALSE(SplitIn(R"({"items": [{"b": [1, {"c": null}]]})", 4).fed.ok()) << "{ ... ]";
  EXPECT_FALSE(SplitIn(R"({"items": [{"a": 1})", 4).rest.ok()) << "ended early";
  EXPECT_FALSE(SplitIn(R"({"items": [{"a": "x}]})", 4).rest.ok()) << "ended in a string";
  EXPECT_FALSE(SplitIn(R"({"items": [], "metadata": {"a" 1}})", 4).rest.ok()) << "bad JSON";
}

TEST(ListSplitterTest, AnItemOverItsBoundIsRefusedAndStopsTheSplit) {
  const std::string big = R"({"items": [{"a": ")" + std::string(5000, 'x') + R"("}]})";
  Split s = SplitIn(big, 100, 4096);
  EXPECT_EQ(s.fed.code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(s.fed.message(), HasSubstr("larger than 4096 bytes"));
  EXPECT_TRUE(s.items.empty());
  // The list's own members are bounded too.
  const std::string meta =
      R"({"metadata": {"a": ")" + std::string(ListSplitter::kMaxSkeletonBytes, 'y') + R"("}})";
  EXPECT_EQ(SplitIn(meta, 4096).fed.code(), StatusCode::kFailedPrecondition);
}

TEST(ListSplitterTest, AnItemsErrorStopsTheSplit) {
  int calls = 0;
  ListSplitter s(1024, [&](std::string_view) {
    ++calls;
    return Status::FailedPrecondition("enough");
  });
  EXPECT_FALSE(s.Feed(R"({"items": [{}, {}, {}]})").ok());
  EXPECT_EQ(calls, 1);
  EXPECT_FALSE(s.Feed("]").ok()) << "an error is final";
  EXPECT_FALSE(s.Finish().ok());
}

}  // namespace
}  // namespace hcashare::kube
