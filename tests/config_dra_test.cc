// Tests for the config's DRA keys (issue 27): a resource's `api`, the top-level `draDriver`
// and `draNumaNode`, and the device-plugin keys a DRA resource refuses.
#include <string>

#include <gtest/gtest.h>

#include "config/config.h"
#include "config/names.h"
#include "tests/config_test_util.h"

namespace hcashare::config {
namespace {

using namespace test_util;  // the shared helpers, unqualified

// One valid exclusive DRA entry plus `extra` keys (",\"key\": value" form).
std::string DraEntry(const std::string& extra = "") {
  return R"({"resourceName": "hca_dra", "mode": "exclusive", "api": "dra",
             "selectors": {"vendors": ["15b3"]})" +
         extra + "}";
}

// A config of one DRA entry with top-level keys `top` ("\"key\": value, " form).
ParseOutcome WithTop(const std::string& top) {
  return Json("{" + top + R"("configList": [)" + DraEntry() + "]}");
}

// --- api --------------------------------------------------------------------------------

TEST(ConfigApi, DefaultsToDevicePlugin) {
  const ResourceConfig rc = OnlyResource(Entry(R"({"resourceName": "r", "rdmaHcaMax": 10,
                                                   "selectors": {"vendors": ["15b3"]}})"));
  EXPECT_EQ(rc.api, ResourceApi::kDevicePlugin);
}

TEST(ConfigApi, NullIsTheDefault) {
  const ResourceConfig rc = OnlyResource(Entry(R"({"resourceName": "r", "rdmaHcaMax": 10,
                                                   "api": null, "selectors": {"vendors": ["15b3"]}})"));
  EXPECT_EQ(rc.api, ResourceApi::kDevicePlugin);
}

TEST(ConfigApi, DraIsKeptForBothModes) {
  EXPECT_EQ(OnlyResource(Entry(DraEntry())).api, ResourceApi::kDra);
  const ResourceConfig shared = OnlyResource(Entry(
      R"({"resourceName": "s", "rdmaHcaMax": 8, "api": "dra", "selectors": {"vendors": ["15b3"]}})"));
  EXPECT_EQ(shared.api, ResourceApi::kDra);
  EXPECT_EQ(shared.mode, PoolMode::kShared);
  EXPECT_EQ(shared.rdma_hca_max, 8);
}

TEST(ConfigApi, ExplicitDevicePlugin) {
  const ResourceConfig rc = OnlyResource(Entry(R"({"resourceName": "r", "rdmaHcaMax": 10,
      "api": "devicePlugin", "selectors": {"vendors": ["15b3"]}})"));
  EXPECT_EQ(rc.api, ResourceApi::kDevicePlugin);
  EXPECT_STREQ(ResourceApiName(rc.api), "devicePlugin");
  EXPECT_STREQ(ResourceApiName(ResourceApi::kDra), "dra");
}

TEST(ConfigApi, UnknownValueNamesTheAcceptedOnes) {
  ExpectOnlyError(Entry(R"({"resourceName": "r", "mode": "exclusive", "api": "DRA",
                            "selectors": {"vendors": ["15b3"]}})"),
                  "$.configList[0].api",
                  "accepted values: \"devicePlugin\" (the default), \"dra\"");
}

TEST(ConfigApi, WrongTypeIsATypeError) {
  const ParseOutcome out = Entry(R"({"resourceName": "r", "rdmaHcaMax": 10, "api": true,
                                     "selectors": {"vendors": ["15b3"]}})");
  ExpectOnlyError(out, "$.configList[0].api", "must be a string");
}

TEST(ConfigApi, MisspeltKeyIsSuggested) {
  const ParseOutcome out = Entry(R"({"resourceName": "r", "rdmaHcaMax": 10, "apl": "dra",
                                     "selectors": {"vendors": ["15b3"]}})");
  ExpectOnlyError(out, "$.configList[0].apl", "did you mean \"api\"?");
}

// The keys that shape a device plugin's kubelet view mean nothing for a DRA resource: each
// is an error at its own path naming why, even when false or empty.
TEST(ConfigApi, DevicePluginOnlyKeysAreRefusedWithTheReason) {
  ExpectOnlyError(Entry(R"({"resourceName": "s", "rdmaHcaMax": 8, "api": "dra",
                            "topologyAware": true, "selectors": {"vendors": ["15b3"]}})"),
                  "$.configList[0].topologyAware", "resource.kubernetes.io/numaNode");
  ExpectOnlyError(Entry(DraEntry(R"(, "excludeTopology": false)")),
                  "$.configList[0].excludeTopology", "draNumaNode");
  ExpectOnlyError(Entry(DraEntry(R"(, "cdiKind": "example.com/rdma")")), "$.configList[0].cdiKind",
                  "\"<draDriver>/claim\"");
  const ParseOutcome all =
      Entry(DraEntry(R"(, "topologyAware": false, "excludeTopology": true, "cdiKind": "a.b/c")"));
  EXPECT_EQ(ErrorPaths(all),
            (std::set<std::string>{"$.configList[0].topologyAware",
                                   "$.configList[0].excludeTopology", "$.configList[0].cdiKind"}));
  for (const ConfigIssue& e : all.errors) {
    EXPECT_NE(e.message.find("is not used by a DRA resource"), std::string::npos) << e.message;
  }
}

// The exclusive opt-ins keep their meaning: the DRA driver selects as the device plugin does.
TEST(ConfigApi, ExclusiveOptInsStayAllowed) {
  const ResourceConfig rc =
      OnlyResource(Entry(DraEntry(R"(, "allowPfWithVfs": true, "allowHostUplink": true)")));
  EXPECT_TRUE(rc.allow_pf_with_vfs);
  EXPECT_TRUE(rc.allow_host_uplink);
}

// A DRA resource's rdmaHcaMax is a capacity value, not IDs: it does not count toward the
// total of device IDs, and a device-plugin resource keeps its own CDI kind check.
TEST(ConfigApi, DraSharesDoNotCountAsDeviceIds) {
  std::string list;
  for (int i = 0; i < 9; ++i) {
    list += std::string(i ? "," : "") + R"({"resourceName": "r)" + std::to_string(i) +
            R"(", "api": "dra", "rdmaHcaMax": 50000, "selectors": {"vendors": ["15b3"]}})";
  }
  const ParseOutcome out = Json(R"({"configList": [)" + list + "]}");
  EXPECT_TRUE(out.ok()) << FormatIssues(out);
}

TEST(ConfigApi, ApiIsPartOfEquality) {
  ResourceConfig a = OnlyResource(Entry(DraEntry()));
  ResourceConfig b = a;
  EXPECT_EQ(a, b);
  b.api = ResourceApi::kDevicePlugin;
  EXPECT_FALSE(a == b);
}

// --- draDriver ------------------------------------------------------------------------

TEST(ConfigDraDriver, DefaultsToTheDriversName) {
  const ParseOutcome out = WithTop("");
  ASSERT_TRUE(out.ok()) << FormatIssues(out);
  EXPECT_EQ(out.config->dra_driver, "rdma.hcashare.io");
  EXPECT_EQ(out.config->dra_driver, kDefaultDraDriver);
  EXPECT_TRUE(out.config->HasDra());
}

TEST(ConfigDraDriver, ValidNameIsKept) {
  const ParseOutcome out = WithTop(R"("draDriver": "rdma.example.com", )");
  ASSERT_TRUE(out.ok()) << FormatIssues(out);
  EXPECT_EQ(out.config->dra_driver, "rdma.example.com");
}

TEST(ConfigDraDriver, InvalidNamesAreErrorsAtTheirPath) {
  ExpectOnlyError(WithTop(R"("draDriver": "RDMA.example.com", )"), "$.draDriver",
                  "must be lower case");
  ExpectOnlyError(WithTop(R"("draDriver": "", )"), "$.draDriver", "must not be empty");
  ExpectOnlyError(WithTop(R"("draDriver": "rdma..example.com", )"), "$.draDriver",
                  "not a DNS subdomain");
  ExpectOnlyError(WithTop(R"("draDriver": "rdma_x.example.com", )"), "$.draDriver",
                  "may contain only");
  ExpectOnlyError(WithTop(R"("draDriver": 5, )"), "$.draDriver", "must be a string");
}

TEST(ConfigDraDriver, AtMost63Characters) {
  const std::string ok = std::string(59, 'a') + ".com";  // 63
  ASSERT_EQ(ok.size(), 63u);
  EXPECT_TRUE(WithTop("\"draDriver\": \"" + ok + "\", ").ok());
  ExpectOnlyError(WithTop("\"draDriver\": \"a" + ok + "\", "), "$.draDriver",
                  "64 characters long; a DRA driver name has at most 63");
  EXPECT_EQ(DraDriverProblem(ok), "");
}

// --- draNumaNode ----------------------------------------------------------------------

TEST(ConfigDraNumaNode, DefaultsToScalar) {
  const ParseOutcome out = WithTop("");
  ASSERT_TRUE(out.ok()) << FormatIssues(out);
  EXPECT_EQ(out.config->dra_numa_node, DraNumaNodeForm::kScalar);
}

TEST(ConfigDraNumaNode, ScalarAndList) {
  const ParseOutcome scalar = WithTop(R"("draNumaNode": "scalar", )");
  ASSERT_TRUE(scalar.ok()) << FormatIssues(scalar);
  EXPECT_EQ(scalar.config->dra_numa_node, DraNumaNodeForm::kScalar);
  const ParseOutcome list = WithTop(R"("draNumaNode": "list", )");
  ASSERT_TRUE(list.ok()) << FormatIssues(list);
  EXPECT_EQ(list.config->dra_numa_node, DraNumaNodeForm::kList);
}

TEST(ConfigDraNumaNode, UnknownFormAndWrongType) {
  ExpectOnlyError(WithTop(R"("draNumaNode": "ints", )"), "$.draNumaNode",
                  "accepted values: \"scalar\"");
  ExpectOnlyError(WithTop(R"("draNumaNode": 1, )"), "$.draNumaNode", "must be a string");
}

TEST(ConfigDraNumaNode, SettingsArePartOfEquality) {
  const ParseOutcome a = WithTop(R"("draNumaNode": "list", )");
  const ParseOutcome b = WithTop("");
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_NE(*a.config, *b.config);
  EXPECT_EQ(*b.config, *WithTop("").config);
}

// Every problem is reported at once, each at its path.
TEST(ConfigDra, AllProblemsAtOnce) {
  const ParseOutcome out = Json(R"({"draDriver": "X", "draNumaNode": "both", "configList": [
      {"resourceName": "a", "api": "dra", "rdmaHcaMax": 4, "topologyAware": true,
       "selectors": {"vendors": ["15b3"]}},
      {"resourceName": "b", "api": "grpc", "rdmaHcaMax": 4, "selectors": {"vendors": ["15b3"]}}]})");
  EXPECT_EQ(ErrorPaths(out),
            (std::set<std::string>{"$.draDriver", "$.draNumaNode", "$.configList[0].topologyAware",
                                   "$.configList[1].api"}));
}

TEST(ConfigDra, YamlForm) {
  const ParseOutcome out = Yaml(R"(
draDriver: rdma.example.com
draNumaNode: list
configList:
  - resourceName: hca_dra
    mode: exclusive
    api: dra
    selectors: {vendors: ["15b3"]}
)");
  ASSERT_TRUE(out.ok()) << FormatIssues(out);
  EXPECT_EQ(out.config->dra_driver, "rdma.example.com");
  EXPECT_EQ(out.config->dra_numa_node, DraNumaNodeForm::kList);
  EXPECT_EQ(out.config->resources.at(0).api, ResourceApi::kDra);
}

}  // namespace
}  // namespace hcashare::config
