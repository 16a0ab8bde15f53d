// The networks annotation parser (issue 26): both Multus forms, default namespaces, the
// name rules Multus and Kubernetes apply, and the bounds.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "injector/networks.h"

namespace hcashare::injector {
namespace {

using Refs = std::vector<NetworkRef>;

std::string Show(const Refs& refs) {
  std::string out;
  for (const NetworkRef& r : refs) out += "[" + r.ns + "|" + r.name + "|" + r.interface + "]";
  return out;
}

struct GoodCase {
  const char* annotation;
  Refs want;
};

TEST(InjectorNetworksTest, ParsesBothForms) {
  const GoodCase cases[] = {
      {"net-a", {{"pods", "net-a", ""}}},
      {"  net-a  ", {{"pods", "net-a", ""}}},
      {"other/net-a", {{"other", "net-a", ""}}},
      {"net-a@rdma0", {{"pods", "net-a", "rdma0"}}},
      {"other/net-a@rdma0, net-b ,net-a",
       {{"other", "net-a", "rdma0"}, {"pods", "net-b", ""}, {"pods", "net-a", ""}}},
      {"net-a,net-a", {{"pods", "net-a", ""}, {"pods", "net-a", ""}}},
      {"\tnet-a,\n net-b", {{"pods", "net-a", ""}, {"pods", "net-b", ""}}},
      {"", {}},
      {"   ", {}},
      {"[]", {}},
      {R"([{"name":"net-a"}])", {{"pods", "net-a", ""}}},
      {R"( [ {"name":"net.a.v2","namespace":"other","interface":"Rdma_0"} ] )",
       {{"other", "net.a.v2", "Rdma_0"}}},
      {R"([{"name":"net-a","ips":["10.0.0.1/24"],"mac":"02:00:00:00:00:01",
          "cni-args":{"x":{"y":[1,2]}},"default-route":["10.0.0.254"]},
         {"name":"net-a","namespace":null}])",
       {{"pods", "net-a", ""}, {"pods", "net-a", ""}}},
  };
  for (const GoodCase& c : cases) {
    Result<Refs> refs = ParseNetworks(c.annotation, "pods");
    ASSERT_TRUE(refs.ok()) << c.annotation << ": " << refs.status().ToString();
    EXPECT_EQ(Show(*refs), Show(c.want)) << c.annotation;
  }
}

struct BadCase {
  const char* annotation;
  std::vector<const char*> message_parts;  // each must occur in the error message
};

TEST(InjectorNetworksTest, RefusesMalformedWithTheItemAndTheFix) {
  const BadCase cases[] = {
      {"net-a,,net-b", {"item 2 is empty", "remove the extra ','"}},
      {"net-a,", {"item 2 is empty"}},
      {"Net-A", {"item 1", "\"Net-A\"", "DNS-1123 label"}},
      {"net_a", {"network name \"net_a\"", "DNS-1123 label"}},
      {"net.a", {"network name \"net.a\"", "DNS-1123 label"}},
      {"a/b/c", {"more than one '/'"}},
      {"a@b@c", {"more than one '@'"}},
      {"ns/", {"network name \"\""}},
      {"/net-a", {"namespace \"\""}},
      {"net-a@", {"interface \"\""}},
      {"net-a@ETH0", {"interface \"ETH0\""}},
      {"net-a@interface-too-long", {"longer than 15 characters"}},
      {"-net", {"DNS-1123 label"}},
      {"[", {"is not valid JSON", "comma list"}},
      {R"([{"name":"a"},])", {"is not valid JSON"}},
      {R"({"name":"net-a"})", {"is a JSON object", "array of objects"}},
      {R"(["net-a"])", {"element 1 is string \"net-a\"", "must be an object"}},
      {R"([{"namespace":"x"}])", {"element 1 has no \"name\""}},
      {R"([{"name":""}])", {"element 1 has no \"name\""}},
      {R"([{"name":5}])", {"element 1 member \"name\" is number 5", "must be a string"}},
      {R"([{"name":"ns/net"}])", {"name \"ns/net\"", "DNS-1123 subdomain"}},
      {R"([{"name":"net","namespace":"a.b"}])", {"namespace \"a.b\"", "DNS-1123 label"}},
      {R"([{"name":"net","interface":"a/b"}])", {"interface \"a/b\"", "Linux interface name"}},
      {R"([{"name":"net","interface":"sixteen-chars-xx"}])", {"Linux interface name"}},
      {R"([{"name":"net","interface":".."}])", {"Linux interface name"}},
      {R"([[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]])",
       {"is not valid JSON", "nested deeper"}},
  };
  for (const BadCase& c : cases) {
    Result<Refs> refs = ParseNetworks(c.annotation, "pods");
    ASSERT_FALSE(refs.ok()) << c.annotation << " parsed as " << Show(*refs);
    EXPECT_EQ(refs.status().code(), StatusCode::kInvalidArgument) << c.annotation;
    EXPECT_NE(refs.status().message().find("k8s.v1.cni.cncf.io/networks"), std::string::npos)
        << refs.status().message();
    for (const char* part : c.message_parts) {
      EXPECT_NE(refs.status().message().find(part), std::string::npos)
          << c.annotation << " -> " << refs.status().message() << " (wanted: " << part << ")";
    }
  }
}

TEST(InjectorNetworksTest, NeedsANamespaceFromThePodOrTheItem) {
  EXPECT_EQ(Show(ParseNetworks("ns/net-a", "").value_or(Refs{})), "[ns|net-a|]");
  Result<Refs> refs = ParseNetworks("net-a", "");
  ASSERT_FALSE(refs.ok());
  EXPECT_NE(refs.status().message().find("write it as namespace/name"), std::string::npos);
  EXPECT_FALSE(ParseNetworks(R"([{"name":"net-a"}])", "").ok());
}

TEST(InjectorNetworksTest, BoundsTheCountInBothForms) {
  std::string comma, json = "[";
  for (size_t i = 0; i < kMaxNetworks; ++i) {
    comma += (i ? "," : "") + std::string("net-a");
    json += (i ? "," : "") + std::string(R"({"name":"net-a"})");
  }
  EXPECT_EQ(ParseNetworks(comma, "pods").value_or(Refs{}).size(), kMaxNetworks);
  EXPECT_EQ(ParseNetworks(json + "]", "pods").value_or(Refs{}).size(), kMaxNetworks);
  for (const std::string& over : {comma + ",net-b", json + R"(,{"name":"b"}])"}) {
    Result<Refs> refs = ParseNetworks(over, "pods");
    ASSERT_FALSE(refs.ok());
    EXPECT_NE(refs.status().message().find("at most 128"), std::string::npos)
        << refs.status().message();
  }
}

TEST(InjectorNetworksTest, RefusesAMebibyteAnnotationBeforeReadingIt) {
  const std::string huge(size_t{1} << 20, 'a');
  Result<Refs> refs = ParseNetworks(huge, "pods");
  ASSERT_FALSE(refs.ok());
  EXPECT_NE(refs.status().message().find("is 1048576 bytes; at most 262144"), std::string::npos)
      << refs.status().message();
  // Just under the cap, the value is read (and refused for its content, not its size).
  const std::string big(kMaxNetworksAnnotationBytes, 'a');
  Result<Refs> under = ParseNetworks(big, "pods");
  ASSERT_FALSE(under.ok());
  EXPECT_NE(under.status().message().find("DNS-1123 label"), std::string::npos);
}

TEST(InjectorNetworksTest, NameRules) {
  EXPECT_TRUE(IsDns1123Label("a"));
  EXPECT_TRUE(IsDns1123Label("a-0"));
  EXPECT_TRUE(IsDns1123Label(std::string(63, 'a')));
  EXPECT_FALSE(IsDns1123Label(std::string(64, 'a')));
  EXPECT_FALSE(IsDns1123Label(""));
  EXPECT_FALSE(IsDns1123Label("a-"));
  EXPECT_FALSE(IsDns1123Label("a.b"));
  EXPECT_TRUE(IsDns1123Subdomain("a.b-c.d"));
  EXPECT_TRUE(IsDns1123Subdomain(std::string(253, 'a')));
  EXPECT_FALSE(IsDns1123Subdomain(std::string(254, 'a')));
  EXPECT_FALSE(IsDns1123Subdomain("a..b"));
  EXPECT_FALSE(IsDns1123Subdomain(".a"));
  EXPECT_FALSE(IsDns1123Subdomain("a."));
  EXPECT_TRUE(IsInterfaceName("net1"));
  EXPECT_TRUE(IsInterfaceName("Rdma_0.100"));
  EXPECT_FALSE(IsInterfaceName("a:b"));
  EXPECT_FALSE(IsInterfaceName("a b"));
  EXPECT_FALSE(IsInterfaceName("."));
  EXPECT_FALSE(IsInterfaceName(std::string(16, 'a')));
}

TEST(InjectorNetworksTest, KeyNamesTheNetwork) {
  EXPECT_EQ((NetworkRef{"ns", "net", "eth1"}).Key(), "ns/net");
}

}  // namespace
}  // namespace hcashare::injector
