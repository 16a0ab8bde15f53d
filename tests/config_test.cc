// Tests for the config module: the Mellanox schema, hcashare's extra selectors, strict
// validation with JSON paths, JSON and YAML input, and LoadConfigFile.
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "config/config.h"
#include "config/names.h"
#include "config/suggest.h"

namespace hcashare::config {
namespace {

// The example from the Mellanox k8s-rdma-shared-dev-plugin README.
constexpr const char* kMellanoxJson = R"({
  "periodicUpdateInterval": 300,
  "configList": [
    {"resourceName": "hca_shared_devices_a", "rdmaHcaMax": 1000, "devices": ["ib0", "ib1"]},
    {"resourceName": "hca_shared_devices_b", "rdmaHcaMax": 500,
     "selectors": {"vendors": ["15b3"], "deviceIDs": ["1017"], "ifNames": ["ib3", "ib4"]}}
  ]
})";

// The same configuration written as YAML.
constexpr const char* kMellanoxYaml = R"(
periodicUpdateInterval: 300
configList:
  - resourceName: hca_shared_devices_a
    rdmaHcaMax: 1000
    devices: [ib0, ib1]
  - resourceName: hca_shared_devices_b
    rdmaHcaMax: 500
    selectors:
      vendors: ["15b3"]
      deviceIDs: ["1017"]
      ifNames:
        - ib3
        - ib4
)";

ParseOutcome Json(const std::string& text) { return ParseConfig(text, ConfigFormat::kJson); }
ParseOutcome Yaml(const std::string& text) { return ParseConfig(text, ConfigFormat::kYaml); }

// A config with one entry, given as the JSON text of that entry.
ParseOutcome Entry(const std::string& entry_json) {
  return Json(R"({"configList": [)" + entry_json + "]}");
}

// A config with one valid entry whose selectors object is `selectors_json`.
ParseOutcome WithSelectors(const std::string& selectors_json) {
  return Entry(R"({"resourceName": "r", "rdmaHcaMax": 10, "selectors": )" + selectors_json + "}");
}

std::set<std::string> ErrorPaths(const ParseOutcome& outcome) {
  std::set<std::string> paths;
  for (const ConfigIssue& e : outcome.errors) paths.insert(e.path);
  return paths;
}

// Asserts that there is exactly one error, at `path`, whose message contains `text`.
void ExpectOnlyError(const ParseOutcome& outcome, const std::string& path,
                     const std::string& text) {
  ASSERT_EQ(outcome.errors.size(), 1u) << FormatIssues(outcome);
  EXPECT_EQ(outcome.errors[0].path, path) << FormatIssues(outcome);
  EXPECT_NE(outcome.errors[0].message.find(text), std::string::npos)
      << "message: " << outcome.errors[0].message << "\nexpected to contain: " << text;
  EXPECT_FALSE(outcome.config.has_value());
  EXPECT_FALSE(outcome.ok());
}

// The single resource of a successful one-entry parse (a copy: outcomes are temporaries).
ResourceConfig OnlyResource(const ParseOutcome& outcome) {
  EXPECT_TRUE(outcome.ok()) << FormatIssues(outcome);
  if (!outcome.config || outcome.config->resources.size() != 1) {
    ADD_FAILURE() << "expected exactly one resource\n" << FormatIssues(outcome);
    return {};
  }
  return outcome.config->resources[0];
}

Selectors SelectorsOf(const ParseOutcome& outcome) { return OnlyResource(outcome).selectors; }

// A fresh directory under the test temp dir.
std::string MakeTempDir() {
  std::string tmpl = ::testing::TempDir() + "/config_test.XXXXXX";
  const char* dir = ::mkdtemp(tmpl.data());
  EXPECT_NE(dir, nullptr);
  return tmpl;
}

std::string WriteFile(const std::string& dir, const std::string& name, const std::string& content) {
  const std::string path = dir + "/" + name;
  std::ofstream(path) << content;
  return path;
}

// --- The Mellanox example ------------------------------------------------------------

TEST(ConfigMellanox, JsonExampleParses) {
  const ParseOutcome outcome = Json(kMellanoxJson);
  ASSERT_TRUE(outcome.ok()) << FormatIssues(outcome);
  ASSERT_TRUE(outcome.config.has_value());
  const PluginConfig& config = *outcome.config;
  EXPECT_EQ(config.periodic_update_seconds, 300);
  ASSERT_EQ(config.resources.size(), 2u);

  const ResourceConfig& a = config.resources[0];
  EXPECT_EQ(a.resource_name, "hca_shared_devices_a");
  EXPECT_EQ(a.resource_prefix, "rdma");
  EXPECT_EQ(a.FullName(), "rdma/hca_shared_devices_a");
  EXPECT_EQ(a.rdma_hca_max, 1000);
  EXPECT_EQ(a.selectors.if_names, (std::vector<std::string>{"ib0", "ib1"}));
  EXPECT_TRUE(a.selectors.vendors.empty());

  const ResourceConfig& b = config.resources[1];
  EXPECT_EQ(b.resource_name, "hca_shared_devices_b");
  EXPECT_EQ(b.resource_prefix, "rdma");
  EXPECT_EQ(b.rdma_hca_max, 500);
  EXPECT_EQ(b.selectors.vendors, std::vector<std::string>{"15b3"});
  EXPECT_EQ(b.selectors.device_ids, std::vector<std::string>{"1017"});
  EXPECT_EQ(b.selectors.if_names, (std::vector<std::string>{"ib3", "ib4"}));

  ASSERT_EQ(outcome.warnings.size(), 1u);
  EXPECT_EQ(outcome.warnings[0].path, "$.configList[0].devices");
  EXPECT_NE(outcome.warnings[0].message.find("deprecated"), std::string::npos);
}

TEST(ConfigMellanox, YamlExampleMatchesJson) {
  const ParseOutcome json = Json(kMellanoxJson);
  const ParseOutcome yaml = Yaml(kMellanoxYaml);
  ASSERT_TRUE(yaml.ok()) << FormatIssues(yaml);
  ASSERT_TRUE(json.ok());
  EXPECT_EQ(yaml.config->periodic_update_seconds, 300);
  EXPECT_EQ(yaml.config->resources, json.config->resources);
  ASSERT_EQ(yaml.warnings.size(), 1u);
  EXPECT_EQ(yaml.warnings[0].path, "$.configList[0].devices");
}

TEST(ConfigFormat, AutoPicksJsonForBraceAndYamlOtherwise) {
  EXPECT_TRUE(ParseConfig(std::string("\n  \t") + kMellanoxJson).ok());
  EXPECT_TRUE(ParseConfig(kMellanoxYaml).ok());
  // Auto-detected JSON is parsed strictly as JSON (a trailing comma is a JSON error).
  const ParseOutcome bad = ParseConfig(R"({"configList": [],})");
  ExpectOnlyError(bad, "$", "invalid JSON");
}

TEST(ConfigFormat, Utf8ByteOrderMarkIsIgnored) {
  EXPECT_TRUE(ParseConfig(std::string("\xEF\xBB\xBF") + kMellanoxJson).ok());
  EXPECT_TRUE(ParseConfig(std::string("\xEF\xBB\xBF") + kMellanoxYaml).ok());
}

// --- periodicUpdateInterval ------------------------------------------------------------

TEST(ConfigInterval, AbsentDefaultsTo60) {
  const ParseOutcome outcome =
      Entry(R"({"resourceName": "r", "rdmaHcaMax": 1, "devices": ["ib0"]})");
  ASSERT_TRUE(outcome.ok()) << FormatIssues(outcome);
  EXPECT_EQ(outcome.config->periodic_update_seconds, kDefaultPeriodicUpdateSeconds);
  EXPECT_EQ(outcome.config->periodic_update_seconds, 60);
}

TEST(ConfigInterval, NullDefaultsTo60) {
  const ParseOutcome outcome = Json(
      R"({"periodicUpdateInterval": null,
          "configList": [{"resourceName": "r", "rdmaHcaMax": 1, "devices": ["ib0"]}]})");
  ASSERT_TRUE(outcome.ok()) << FormatIssues(outcome);
  EXPECT_EQ(outcome.config->periodic_update_seconds, 60);
}

TEST(ConfigInterval, ZeroDisablesAndIsKept) {
  const ParseOutcome outcome = Json(
      R"({"periodicUpdateInterval": 0,
          "configList": [{"resourceName": "r", "rdmaHcaMax": 1, "devices": ["ib0"]}]})");
  ASSERT_TRUE(outcome.ok()) << FormatIssues(outcome);
  EXPECT_EQ(outcome.config->periodic_update_seconds, 0);
}

// A valid config whose interval is the JSON text `interval`.
ParseOutcome WithInterval(const std::string& interval) {
  return Json(R"({"periodicUpdateInterval": )" + interval +
              R"(, "configList": [{"resourceName": "r", "rdmaHcaMax": 1, "devices": ["ib0"]}]})");
}

TEST(ConfigInterval, NegativeIsAnError) {
  ExpectOnlyError(WithInterval("-10"), "$.periodicUpdateInterval", "must be >= 0 seconds, got -10");
}

TEST(ConfigInterval, StringIsATypeError) {
  ExpectOnlyError(WithInterval(R"("300")"), "$.periodicUpdateInterval",
                  "must be an integer, got string \"300\"");
}

TEST(ConfigInterval, FloatIsATypeError) {
  ExpectOnlyError(WithInterval("1.5"), "$.periodicUpdateInterval", "must be an integer, got 1.5");
}

TEST(ConfigInterval, BoolIsATypeError) {
  ExpectOnlyError(WithInterval("true"), "$.periodicUpdateInterval",
                  "must be an integer, got boolean");
}

TEST(ConfigInterval, HugeValueIsAnError) {
  ExpectOnlyError(WithInterval("99999999999"), "$.periodicUpdateInterval", "must be at most");
}

// --- configList and the top level ----------------------------------------------------

TEST(ConfigList, EmptyListIsAnError) {
  ExpectOnlyError(Json(R"({"configList": []})"), "$.configList", "no resources configured");
}

TEST(ConfigList, MissingListIsAnError) {
  ExpectOnlyError(Json(R"({"periodicUpdateInterval": 10})"), "$.configList", "is required");
}

TEST(ConfigList, NullListIsMissing) {
  ExpectOnlyError(Json(R"({"configList": null})"), "$.configList", "is required");
}

TEST(ConfigList, NonArrayIsATypeError) {
  ExpectOnlyError(Json(R"({"configList": {"resourceName": "r"}})"), "$.configList",
                  "must be an array, got object");
}

TEST(ConfigList, NonObjectEntryIsATypeError) {
  ExpectOnlyError(Json(R"({"configList": ["ib0"]})"), "$.configList[0]",
                  "must be an object, got string");
}

TEST(ConfigTopLevel, MustBeAnObject) {
  ExpectOnlyError(Json("[1, 2]"), "$", "must be an object, got array");
  ExpectOnlyError(Json("null"), "$", "must be an object, got null");
  ExpectOnlyError(Yaml("just a string"), "$", "must be an object, got string");
  ExpectOnlyError(Yaml("- a\n- b\n"), "$", "must be an object, got array");
}

// --- resourceName --------------------------------------------------------------------

// One entry with the given resourceName JSON value and otherwise valid fields.
ParseOutcome WithName(const std::string& name_json) {
  return Entry(R"({"resourceName": )" + name_json + R"(, "rdmaHcaMax": 1, "devices": ["ib0"]})");
}

TEST(ConfigResourceName, Missing) {
  ExpectOnlyError(Entry(R"({"rdmaHcaMax": 1, "devices": ["ib0"]})"), "$.configList[0].resourceName",
                  "is required");
}

TEST(ConfigResourceName, InvalidCharacters) {
  ExpectOnlyError(WithName(R"("$$")"), "$.configList[0].resourceName",
                  "may contain only letters, digits and '_'");
  ExpectOnlyError(WithName(R"("a-b")"), "$.configList[0].resourceName",
                  "may contain only letters, digits and '_'");
}

TEST(ConfigResourceName, MustStartAndEndAlphanumeric) {
  ExpectOnlyError(WithName(R"("_shared")"), "$.configList[0].resourceName",
                  "must start and end with a letter or digit (the kubelet rejects");
  ExpectOnlyError(WithName(R"("shared_")"), "$.configList[0].resourceName",
                  "must start and end with a letter or digit");
}

// resourceName keeps the Mellanox schema's characters ([A-Za-z0-9_]) inside the kubelet's
// rule for the name part of an extended resource name (config/names.h), which also allows
// '-' and '.': the CNI accepts "rdma/a-b" for another plugin's resource.
TEST(ConfigResourceName, NarrowerThanTheKubeletRule) {
  EXPECT_EQ(ExtendedResourceNameProblem("rdma/a-b"), "");
  EXPECT_EQ(ExtendedResourceNameProblem("rdma/a.b"), "");
  ExpectOnlyError(WithName(R"("a.b")"), "$.configList[0].resourceName",
                  "may contain only letters, digits and '_'");
  EXPECT_NE(ExtendedResourceNameProblem("rdma/_shared").find("must start and end"),
            std::string::npos);
  EXPECT_NE(ExtendedResourceNameProblem("rdma/" + std::string(64, 'a')).find("at most 63"),
            std::string::npos);
}

TEST(ConfigResourceName, AtMost63Characters) {
  EXPECT_TRUE(WithName("\"" + std::string(63, 'a') + "\"").ok());
  ExpectOnlyError(WithName("\"" + std::string(64, 'a') + "\""), "$.configList[0].resourceName",
                  "is 64 characters long; the kubelet allows at most 63");
}

TEST(ConfigResourceName, EmptyAndWrongType) {
  ExpectOnlyError(WithName(R"("")"), "$.configList[0].resourceName", "must not be empty");
  ExpectOnlyError(WithName("7"), "$.configList[0].resourceName", "must be a string, got number");
}

TEST(ConfigResourceName, DuplicateNamesNameTheFirstIndex) {
  const ParseOutcome outcome = Json(R"({"configList": [
      {"resourceName": "a", "rdmaHcaMax": 1, "selectors": {"ifNames": ["ib0"]}},
      {"resourceName": "b", "rdmaHcaMax": 1, "selectors": {"ifNames": ["ib1"]}},
      {"resourceName": "a", "rdmaHcaMax": 1, "selectors": {"ifNames": ["ib2"]}}]})");
  ExpectOnlyError(outcome, "$.configList[2].resourceName", "duplicate resourceName \"a\"");
  EXPECT_NE(outcome.errors[0].message.find("$.configList[0]"), std::string::npos);
}

// --- resourcePrefix ------------------------------------------------------------------

// One entry with the given resourcePrefix JSON value and otherwise valid fields.
ParseOutcome WithPrefix(const std::string& prefix_json) {
  return Entry(R"({"resourceName": "r", "resourcePrefix": )" + prefix_json +
               R"(, "rdmaHcaMax": 1, "devices": ["ib0"]})");
}

TEST(ConfigResourcePrefix, DefaultsToRdma) {
  EXPECT_EQ(OnlyResource(WithName(R"("r")")).resource_prefix, "rdma");
  EXPECT_EQ(OnlyResource(WithPrefix("null")).resource_prefix, "rdma");
  EXPECT_STREQ(kDefaultResourcePrefix, "rdma");
}

TEST(ConfigResourcePrefix, ValidSubdomainsAreKept) {
  const ResourceConfig& r = OnlyResource(WithPrefix(R"("rdma.example-corp.com")"));
  EXPECT_EQ(r.resource_prefix, "rdma.example-corp.com");
  EXPECT_EQ(r.FullName(), "rdma.example-corp.com/r");
  EXPECT_TRUE(WithPrefix(R"("nvidia.com")").ok());
  EXPECT_TRUE(WithPrefix(R"("a1")").ok());
}

TEST(ConfigResourcePrefix, InvalidSubdomains) {
  const std::string path = "$.configList[0].resourcePrefix";
  ExpectOnlyError(WithPrefix(R"("-rdma")"), path, "must start and end with a letter or digit");
  ExpectOnlyError(WithPrefix(R"("rdma-")"), path, "must start and end with a letter or digit");
  ExpectOnlyError(WithPrefix(R"("a..b")"), path, "empty label");
  ExpectOnlyError(WithPrefix(R"(".rdma")"), path, "empty label");
  ExpectOnlyError(WithPrefix(R"("rdma.")"), path, "empty label");
  ExpectOnlyError(WithPrefix(R"("rd_ma")"), path, "may contain only lower-case letters");
  ExpectOnlyError(WithPrefix(R"("rd/ma")"), path, "may contain only lower-case letters");
  ExpectOnlyError(WithPrefix("\"" + std::string(64, 'a') + ".com\""), path,
                  "has a label of 64 characters");
}

TEST(ConfigResourcePrefix, UpperCaseIsAnError) {
  ExpectOnlyError(WithPrefix(R"("Example.com")"), "$.configList[0].resourcePrefix",
                  "must be lower case");
}

TEST(ConfigResourcePrefix, KubernetesIoIsRefused) {
  const std::string path = "$.configList[0].resourcePrefix";
  ExpectOnlyError(WithPrefix(R"("kubernetes.io")"), path, "kubernetes.io domain");
  ExpectOnlyError(WithPrefix(R"("rdma.kubernetes.io")"), path, "kubernetes.io domain");
  EXPECT_TRUE(WithPrefix(R"("kubernetes.io.example.com")").ok());
}

TEST(ConfigResourcePrefix, EmptyAndWrongType) {
  const std::string path = "$.configList[0].resourcePrefix";
  ExpectOnlyError(WithPrefix(R"("")"), path, "must not be empty");
  ExpectOnlyError(WithPrefix("1"), path, "must be a string, got number");
}

TEST(ConfigResourcePrefix, LengthLimits) {
  const std::string path = "$.configList[0].resourcePrefix";
  // Labels of 60 characters joined by dots.
  auto prefix_of_length = [](size_t n) {
    std::string s;
    while (s.size() < n) s += (s.empty() ? "" : ".") + std::string(60, 'a');
    s.resize(n);
    if (s.back() == '.') s.back() = 'b';
    return "\"" + s + "\"";
  };
  EXPECT_TRUE(WithPrefix(prefix_of_length(244)).ok());
  ExpectOnlyError(WithPrefix(prefix_of_length(245)), path, "requests.<prefix>");
  ExpectOnlyError(WithPrefix(prefix_of_length(254)), path, "at most 253");
  ExpectOnlyError(WithPrefix(R"("requests.example.com")"), path, "starts with \"requests.\"");
}

// --- rdmaHcaMax ----------------------------------------------------------------------

// One entry with the given rdmaHcaMax JSON value and otherwise valid fields.
ParseOutcome WithMax(const std::string& max_json) {
  return Entry(R"({"resourceName": "r", "rdmaHcaMax": )" + max_json + R"(, "devices": ["ib0"]})");
}

TEST(ConfigRdmaHcaMax, MissingIsAnError) {
  ExpectOnlyError(Entry(R"({"resourceName": "r", "devices": ["ib0"]})"),
                  "$.configList[0].rdmaHcaMax", "is required");
  ExpectOnlyError(WithMax("null"), "$.configList[0].rdmaHcaMax", "is required");
}

TEST(ConfigRdmaHcaMax, BoundsAreInclusive) {
  EXPECT_EQ(OnlyResource(WithMax("1")).rdma_hca_max, 1);
  EXPECT_EQ(OnlyResource(WithMax("50000")).rdma_hca_max, kMaxRdmaHcaMax);
}

TEST(ConfigRdmaHcaMax, ZeroAndNegativeAreErrors) {
  ExpectOnlyError(WithMax("0"), "$.configList[0].rdmaHcaMax", "must be at least 1, got 0");
  ExpectOnlyError(WithMax("-1"), "$.configList[0].rdmaHcaMax", "must be at least 1, got -1");
}

TEST(ConfigRdmaHcaMax, AboveCapExplainsTheKubeletLimit) {
  const ParseOutcome outcome = WithMax("50001");
  ExpectOnlyError(outcome, "$.configList[0].rdmaHcaMax", "must be at most 50000, got 50001");
  EXPECT_NE(outcome.errors[0].message.find("4 MiB"), std::string::npos);
}

TEST(ConfigRdmaHcaMax, NonIntegersAreTypeErrors) {
  const std::string path = "$.configList[0].rdmaHcaMax";
  ExpectOnlyError(WithMax("1.5"), path, "must be an integer, got 1.5");
  ExpectOnlyError(WithMax("1e3"), path, "must be an integer, got 1000.0");
  ExpectOnlyError(WithMax("10.0"), path, "must be an integer");
  ExpectOnlyError(WithMax(R"("10")"), path, "must be an integer, got string \"10\"");
  ExpectOnlyError(WithMax("false"), path, "must be an integer, got boolean");
  ExpectOnlyError(WithMax("[10]"), path, "must be an integer, got array");
}

// --- devices and selectors -----------------------------------------------------------

TEST(ConfigDevices, BecomeIfNamesWithAWarning) {
  const ParseOutcome outcome =
      Entry(R"({"resourceName": "r", "rdmaHcaMax": 5, "devices": ["ib0", "ib1", "ib0"]})");
  EXPECT_EQ(SelectorsOf(outcome).if_names, (std::vector<std::string>{"ib0", "ib1"}));
  ASSERT_EQ(outcome.warnings.size(), 1u);
  EXPECT_EQ(outcome.warnings[0].path, "$.configList[0].devices");
  EXPECT_NE(outcome.warnings[0].message.find("ifNames"), std::string::npos);
}

TEST(ConfigDevices, WrongTypes) {
  ExpectOnlyError(Entry(R"({"resourceName": "r", "rdmaHcaMax": 5, "devices": "ib0"})"),
                  "$.configList[0].devices", "must be an array, got string");
  ExpectOnlyError(Entry(R"({"resourceName": "r", "rdmaHcaMax": 5, "devices": ["ib0", 3]})"),
                  "$.configList[0].devices[1]", "must be a string, got number");
  ExpectOnlyError(Entry(R"({"resourceName": "r", "rdmaHcaMax": 5, "devices": [""]})"),
                  "$.configList[0].devices[0]", "must not be empty");
}

TEST(ConfigDevices, BothDevicesAndSelectorsIsAnError) {
  const ParseOutcome outcome = Entry(R"({"resourceName": "r", "rdmaHcaMax": 5,
      "devices": ["ib0"], "selectors": {"vendors": ["15b3"]}})");
  ExpectOnlyError(outcome, "$.configList[0]", "both \"devices\" and \"selectors\"");
  EXPECT_EQ(outcome.warnings.size(), 1u);  // warnings survive errors
}

TEST(ConfigDevices, EmptyDevicesWithSelectorsIsFine) {
  const ParseOutcome outcome = Entry(R"({"resourceName": "r", "rdmaHcaMax": 5,
      "devices": [], "selectors": {"vendors": ["15b3"]}})");
  EXPECT_EQ(SelectorsOf(outcome).vendors, std::vector<std::string>{"15b3"});
}

TEST(ConfigDevices, NeitherDevicesNorSelectorsIsAnError) {
  const std::string path = "$.configList[0]";
  ExpectOnlyError(Entry(R"({"resourceName": "r", "rdmaHcaMax": 5})"), path, "selects no devices");
  ExpectOnlyError(WithSelectors("{}"), path, "selects no devices");
  ExpectOnlyError(WithSelectors(R"({"vendors": [], "ifNames": [], "numaNodes": []})"), path,
                  "selects no devices");
  ExpectOnlyError(Entry(R"({"resourceName": "r", "rdmaHcaMax": 5, "devices": []})"), path,
                  "selects no devices");
}

TEST(ConfigSelectors, WrongTypes) {
  ExpectOnlyError(Entry(R"({"resourceName": "r", "rdmaHcaMax": 5, "selectors": ["ib0"]})"),
                  "$.configList[0].selectors", "must be an object, got array");
  ExpectOnlyError(WithSelectors(R"({"vendors": "15b3"})"), "$.configList[0].selectors.vendors",
                  "must be an array, got string");
}

TEST(ConfigSelectors, NonStringElementHasExactMessage) {
  const ParseOutcome outcome = WithSelectors(R"({"vendors": ["15b3", 4099]})");
  ASSERT_EQ(outcome.errors.size(), 1u);
  EXPECT_EQ(outcome.errors[0].ToString(),
            "$.configList[0].selectors.vendors[1]: must be a string, got number");
}

TEST(ConfigSelectors, EmptyStringElementsAreErrors) {
  for (const char* key : {"vendors", "deviceIDs", "drivers", "ifNames", "linkTypes", "pciAddresses",
                          "pfNames", "rdmaDevices"}) {
    SCOPED_TRACE(key);
    ExpectOnlyError(WithSelectors(std::string(R"({")") + key + R"(": [""]})"),
                    std::string("$.configList[0].selectors.") + key + "[0]", "must not be empty");
  }
}

TEST(ConfigSelectors, PlainStringListsAreKeptAsIs) {
  const Selectors& s = SelectorsOf(WithSelectors(
      R"({"drivers": ["mlx5_core"], "pfNames": ["ens1f0", "ens1f0"], "rdmaDevices": ["mlx5_0"],
          "ifNames": ["ib0"]})"));
  EXPECT_EQ(s.drivers, std::vector<std::string>{"mlx5_core"});
  EXPECT_EQ(s.pf_names, (std::vector<PfNameSelector>{{"ens1f0", -1, -1}}));
  EXPECT_EQ(s.rdma_devices, std::vector<std::string>{"mlx5_0"});
  EXPECT_EQ(s.if_names, std::vector<std::string>{"ib0"});
}

TEST(ConfigSelectors, NullListIsUnset) {
  const Selectors& s = SelectorsOf(WithSelectors(R"({"vendors": null, "ifNames": ["ib0"]})"));
  EXPECT_TRUE(s.vendors.empty());
}

TEST(ConfigSelectors, HexIdsAreNormalised) {
  const Selectors& s = SelectorsOf(WithSelectors(
      R"({"vendors": ["15B3", "0x15b3", "0X15B3", "8086"], "deviceIDs": ["0x1017", "101D"]})"));
  EXPECT_EQ(s.vendors, (std::vector<std::string>{"15b3", "8086"}));
  EXPECT_EQ(s.device_ids, (std::vector<std::string>{"1017", "101d"}));
}

TEST(ConfigSelectors, BadHexIdsAreErrors) {
  const ParseOutcome outcome = WithSelectors(
      R"({"vendors": ["15b", "0x15b", "15b3a", "zzzz", "0x"], "deviceIDs": ["1017 "]})");
  EXPECT_EQ(ErrorPaths(outcome), (std::set<std::string>{
                                     "$.configList[0].selectors.vendors[0]",
                                     "$.configList[0].selectors.vendors[1]",
                                     "$.configList[0].selectors.vendors[2]",
                                     "$.configList[0].selectors.vendors[3]",
                                     "$.configList[0].selectors.vendors[4]",
                                     "$.configList[0].selectors.deviceIDs[0]",
                                 }));
  EXPECT_NE(outcome.errors[0].message.find("\"15b\""), std::string::npos);
  EXPECT_NE(outcome.errors[0].message.find("4 hex digits"), std::string::npos);
}

TEST(ConfigSelectors, LinkTypeAliases) {
  const Selectors& s = SelectorsOf(WithSelectors(
      R"({"linkTypes": ["ether", "ETH", "Ethernet", "ib", "InfiniBand", "INFINIBAND"]})"));
  EXPECT_EQ(s.link_types, (std::vector<std::string>{"ether", "infiniband"}));
}

TEST(ConfigSelectors, BadLinkTypeListsAcceptedValues) {
  const ParseOutcome outcome = WithSelectors(R"({"linkTypes": ["roce"]})");
  ExpectOnlyError(outcome, "$.configList[0].selectors.linkTypes[0]", "unknown link type \"roce\"");
  for (const char* accepted : {"ether", "eth", "ethernet", "infiniband", "ib"}) {
    EXPECT_NE(outcome.errors[0].message.find(std::string("\"") + accepted + "\""),
              std::string::npos);
  }
}

TEST(ConfigSelectors, PciAddressesAreNormalised) {
  const Selectors& s = SelectorsOf(
      WithSelectors(R"({"pciAddresses": ["3b:00.0", "0000:3B:00.0", "0001:AF:1f.7", "00:00.1"]})"));
  EXPECT_EQ(s.pci_addresses,
            (std::vector<std::string>{"0000:3b:00.0", "0001:af:1f.7", "0000:00:00.1"}));
}

TEST(ConfigSelectors, BadPciAddressesAreErrors) {
  const std::vector<std::string> bad = {
      "3b:20.0",         // device > 0x1f
      "3b:00.8",         // function > 7
      "3b:00",           // no function
      "000:3b:00.0",     // short domain
      "gg:00.0",         // not hex
      "0000-3b:00.0",    // wrong separator
      "0000:3b:00.0.1",  // too long
      "3b.00.0",         // wrong separator
  };
  for (const std::string& value : bad) {
    SCOPED_TRACE(value);
    ExpectOnlyError(WithSelectors(R"({"pciAddresses": [")" + value + R"("]})"),
                    "$.configList[0].selectors.pciAddresses[0]", "\"" + value + "\"");
  }
  const ParseOutcome device = WithSelectors(R"({"pciAddresses": ["3b:20.0"]})");
  EXPECT_NE(device.errors[0].message.find("0x1f"), std::string::npos);
}

TEST(ConfigSelectors, NumaNodes) {
  EXPECT_EQ(SelectorsOf(WithSelectors(R"({"numaNodes": [1, 0, 1]})")).numa_nodes,
            (std::vector<int>{1, 0}));
  const std::string path = "$.configList[0].selectors.numaNodes";
  ExpectOnlyError(WithSelectors(R"({"numaNodes": [-1]})"), path + "[0]", ">= 0");
  ExpectOnlyError(WithSelectors(R"({"numaNodes": [0, "1"]})"), path + "[1]",
                  "must be an integer, got string");
  ExpectOnlyError(WithSelectors(R"({"numaNodes": [0.5]})"), path + "[0]", "must be an integer");
  ExpectOnlyError(WithSelectors(R"({"numaNodes": 0})"), path, "must be an array, got number");
}

TEST(ConfigSelectors, EqualityAndEmpty) {
  Selectors a;
  EXPECT_TRUE(a.Empty());
  Selectors b;
  EXPECT_TRUE(a == b);
  b.numa_nodes = {0};
  EXPECT_FALSE(b.Empty());
  EXPECT_FALSE(a == b);
  a.numa_nodes = {0};
  EXPECT_TRUE(a == b);
  a.pf_names = {{"ens1f0", -1, -1}};
  EXPECT_FALSE(a.Empty());
  EXPECT_FALSE(a == b);

  ResourceConfig r1;
  r1.resource_name = "n";
  r1.resource_prefix = "rdma";
  r1.rdma_hca_max = 5;
  r1.selectors = a;
  ResourceConfig r2 = r1;
  EXPECT_TRUE(r1 == r2);
  r2.rdma_hca_max = 6;
  EXPECT_FALSE(r1 == r2);
}

// --- unknown keys --------------------------------------------------------------------

TEST(ConfigUnknownKeys, TopLevelWithSuggestion) {
  const ParseOutcome outcome = Json(R"({"periodicUpdateIntervall": 5,
      "configList": [{"resourceName": "r", "rdmaHcaMax": 1, "devices": ["ib0"]}]})");
  ExpectOnlyError(
      outcome, "$.periodicUpdateIntervall",
      R"(unknown key "periodicUpdateIntervall" (did you mean "periodicUpdateInterval"?))");
}

TEST(ConfigUnknownKeys, EntryWithSuggestion) {
  const ParseOutcome outcome =
      Entry(R"({"resourceName": "r", "rdmaHCAmax": 1, "devices": ["ib0"]})");
  // The misspelling explains the missing rdmaHcaMax; it is not reported twice.
  ExpectOnlyError(outcome, "$.configList[0].rdmaHCAmax",
                  R"(unknown key "rdmaHCAmax" (did you mean "rdmaHcaMax"?))");
}

TEST(ConfigUnknownKeys, SelectorsWithSuggestion) {
  ExpectOnlyError(WithSelectors(R"({"deviceIds": ["1017"]})"),
                  "$.configList[0].selectors.deviceIds",
                  R"(unknown key "deviceIds" (did you mean "deviceIDs"?))");
  ExpectOnlyError(WithSelectors(R"({"ifNames": ["ib0"], "vendor": ["15b3"]})"),
                  "$.configList[0].selectors.vendor", R"((did you mean "vendors"?))");
}

TEST(ConfigUnknownKeys, FarKeyListsKnownKeys) {
  const ParseOutcome outcome = Json(R"({"color": "blue",
      "configList": [{"resourceName": "r", "rdmaHcaMax": 1, "devices": ["ib0"]}]})");
  ExpectOnlyError(outcome, "$.color", "unknown key \"color\" (known keys: ");
  EXPECT_EQ(outcome.errors[0].message.find("did you mean"), std::string::npos);
}

TEST(ConfigUnknownKeys, OddKeysUseBracketPaths) {
  const ParseOutcome outcome = Json(R"({"a b": 1,
      "configList": [{"resourceName": "r", "rdmaHcaMax": 1, "devices": ["ib0"]}]})");
  ExpectOnlyError(outcome, R"($["a b"])", "unknown key \"a b\"");
}

TEST(ConfigUnknownKeys, SuggestionHelpers) {
  EXPECT_EQ(CaseInsensitiveEditDistance("rdmaHCAmax", "rdmaHcaMax"), 0);
  EXPECT_EQ(CaseInsensitiveEditDistance("vendros", "vendors"), 1);  // a swap costs 1
  EXPECT_EQ(CaseInsensitiveEditDistance("", "abc"), 3);
  EXPECT_EQ(SuggestKey("ifname", {"ifNames", "pfNames"}), "ifNames");
  EXPECT_EQ(SuggestKey("resourcename", {"resourceName", "resourcePrefix"}), "resourceName");
  EXPECT_EQ(SuggestKey("xyz", {"vendors"}), std::nullopt);
  EXPECT_EQ(SuggestKey("a", {"ab"}), std::nullopt);  // too short to be a typo of anything
}

// --- all errors at once --------------------------------------------------------------

TEST(ConfigErrors, AllErrorsAreReportedTogether) {
  const ParseOutcome outcome = Json(R"({
    "periodicUpdateInterval": -1,
    "extra": true,
    "configList": [
      {"resourceName": "_bad", "rdmaHcaMax": 0, "devices": ["ib0"]},
      {"resourceName": "ok", "resourcePrefix": "Bad", "rdmaHcaMax": 10,
       "selectors": {"vendors": ["xyz", 5], "linkTypes": ["roce"], "pciAddresses": ["1:2"],
                     "numaNodes": [-2], "deviceIds": ["1017"]}},
      {"resourceName": "ok", "rdmaHcaMax": "3"},
      7
    ]
  })");
  EXPECT_EQ(ErrorPaths(outcome), (std::set<std::string>{
                                     "$.periodicUpdateInterval",
                                     "$.extra",
                                     "$.configList[0].resourceName",
                                     "$.configList[0].rdmaHcaMax",
                                     "$.configList[1].resourcePrefix",
                                     "$.configList[1].selectors.vendors[0]",
                                     "$.configList[1].selectors.vendors[1]",
                                     "$.configList[1].selectors.linkTypes[0]",
                                     "$.configList[1].selectors.pciAddresses[0]",
                                     "$.configList[1].selectors.numaNodes[0]",
                                     "$.configList[1].selectors.deviceIds",
                                     "$.configList[2].resourceName",
                                     "$.configList[2].rdmaHcaMax",
                                     "$.configList[2]",
                                     "$.configList[3]",
                                 }))
      << FormatIssues(outcome);
  EXPECT_EQ(outcome.errors.size(), 15u);
  EXPECT_EQ(outcome.warnings.size(), 1u);
  EXPECT_FALSE(outcome.config.has_value());
}

TEST(ConfigErrors, FormatIssuesReport) {
  const ParseOutcome outcome = Json(R"({"configList": [
      {"resourceName": "r", "rdmaHcaMax": 0, "devices": ["ib0"]}]})");
  EXPECT_EQ(FormatIssues(outcome),
            "1 error(s), 1 warning(s)\n"
            "error: $.configList[0].rdmaHcaMax: must be at least 1, got 0\n"
            "warning: $.configList[0].devices: \"devices\" is deprecated; list the interfaces "
            "in \"selectors\": {\"ifNames\": [...]} instead\n");
  EXPECT_EQ(FormatIssues(Json(kMellanoxJson)).rfind("0 error(s), 1 warning(s)\n", 0), 0u);
}

TEST(ConfigErrors, DuplicateJsonKeysAreErrors) {
  const ParseOutcome outcome =
      Entry(R"({"resourceName": "r", "rdmaHcaMax": 1, "rdmaHcaMax": 2, "devices": ["ib0"]})");
  ExpectOnlyError(outcome, "$.configList[0].rdmaHcaMax", "duplicate key \"rdmaHcaMax\"");
}

TEST(ConfigErrors, DuplicateJsonKeysInLaterArrayElements) {
  const ParseOutcome outcome = Json(R"({"configList": [
      {"resourceName": "a", "rdmaHcaMax": 1, "selectors": {"ifNames": ["ib0"]}},
      [1, [2, 3]],
      {"resourceName": "b", "rdmaHcaMax": 1,
       "selectors": {"ifNames": ["ib1"], "ifNames": ["ib2"]}}]})");
  EXPECT_EQ(ErrorPaths(outcome),
            (std::set<std::string>{"$.configList[1]", "$.configList[2].selectors.ifNames"}))
      << FormatIssues(outcome);
}

// --- malformed and empty input -------------------------------------------------------

TEST(ConfigMalformed, JsonSyntaxErrorHasPosition) {
  const ParseOutcome outcome = Json("{\n  \"configList\": [\n    {\"resourceName\": }\n  ]\n}");
  ExpectOnlyError(outcome, "$", "invalid JSON");
  EXPECT_NE(outcome.errors[0].message.find("line 3"), std::string::npos)
      << outcome.errors[0].message;
  EXPECT_EQ(outcome.errors[0].message.find("[json.exception"), std::string::npos);
}

TEST(ConfigMalformed, JsonNumberOverflow) {
  ExpectOnlyError(Json(R"({"periodicUpdateInterval": 1e400, "configList": []})"), "$",
                  "invalid JSON");
}

TEST(ConfigMalformed, YamlSyntaxErrorHasPosition) {
  const ParseOutcome outcome = Yaml("configList:\n  - resourceName: [a\n    rdmaHcaMax: 1\n");
  ExpectOnlyError(outcome, "$", "invalid YAML at line");
}

TEST(ConfigMalformed, YamlBadIndentation) {
  const ParseOutcome outcome = Yaml("configList:\n  - resourceName: a\n   rdmaHcaMax: 1\n");
  ExpectOnlyError(outcome, "$", "invalid YAML");
}

TEST(ConfigMalformed, EmptyInput) {
  ExpectOnlyError(ParseConfig(""), "$", "empty");
  ExpectOnlyError(ParseConfig("  \n\t\n"), "$", "empty");
  ExpectOnlyError(Json(""), "$", "empty");
  ExpectOnlyError(Yaml("# just a comment\n"), "$", "empty");
}

TEST(ConfigMalformed, MultipleYamlDocuments) {
  ExpectOnlyError(Yaml("configList: []\n---\nconfigList: []\n"), "$", "one YAML document");
}

// Regression (fuzz/config_fuzz.cc): yaml-cpp 0.7's LoadAll never returned on a ',' outside
// a flow collection and grew memory until killed; a ConfigMap like this hung the daemon.
TEST(ConfigMalformed, StrayYamlCommaIsASyntaxError) {
  ExpectOnlyError(Yaml(","), "$", "invalid YAML at line 1, column 1: unexpected content");
  ExpectOnlyError(ParseConfig("[a],"), "$", "invalid YAML at line 1, column 4");
  ExpectOnlyError(Yaml("configList: []\n,\n"), "$", "invalid YAML");
  // The fuzzer's input, a mangled mix of the JSON and YAML seeds.
  ExpectOnlyError(
      ParseConfig(
          R"(# anchors, qliases, block scalars and a BOM-free YAML 0.2 document3"], pfNames: [ens1f0#0-rdmaHca resouigList": [
    { "resourceName": "hca_shared_devices_a", "rdmaHcaMax": 1000, "devicer": ["ib0", "ib1"] },
    { "resourceName": "hca_shared_devices_b", "rdmaHcaMax": 500,
      "selectors": { "vendors": ["15b@"], "deviceIDs": ["0508"], "ifNames": ["ib2", "ib4"] } },rceName: "hca_b"
    rdmaHcaMax: 0x10
    mode: shared
    selectors:
  #   drivers: [mlx5_core]
      numaNodes: [-1]
      isVF: yes
)"),
      "$", "invalid YAML");
}

TEST(ConfigMalformed, GarbageNeverThrows) {
  const std::vector<std::string> inputs = {
      "{",
      "}",
      "[",
      "\"",
      "\xff\xfe\x00",
      "{\"configList\": [\"\xff\"]}",
      "key: \"\xc3\"",
      "? [a, b]\n: c\n",
      "*unknown_alias",
      "!!binary AAAA",
      "a: !!int x",
      std::string("\0\0\0", 3),
      "{\"a\":" + std::string(5000, '['),
      "%YAML 9.9\n---\na: 1",
  };
  for (const std::string& input : inputs) {
    for (ConfigFormat format : {ConfigFormat::kAuto, ConfigFormat::kJson, ConfigFormat::kYaml}) {
      ParseOutcome outcome;
      EXPECT_NO_THROW(outcome = ParseConfig(input, format)) << input;
      EXPECT_FALSE(outcome.ok()) << input;
      EXPECT_FALSE(outcome.errors.empty());
    }
  }
}

TEST(ConfigMalformed, DeeplyNestedJsonDoesNotCrash) {
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  const ParseOutcome outcome = Json(R"({"configList": )" + deep + "}");
  EXPECT_FALSE(outcome.ok());
  EXPECT_EQ(ErrorPaths(outcome), std::set<std::string>{"$.configList[0]"});
}

TEST(ConfigMalformed, DeeplyNestedYamlIsCapped) {
  // Deeper than kMaxYamlDepth (64) but within yaml-cpp's own parser limit.
  const std::string deep = std::string(100, '[') + std::string(100, ']');
  const ParseOutcome outcome = Yaml("configList: " + deep + "\n");
  EXPECT_FALSE(outcome.ok());
  bool depth_error = false;
  for (const ConfigIssue& e : outcome.errors) {
    depth_error |= e.message.find("nested more than 64 levels") != std::string::npos;
  }
  EXPECT_TRUE(depth_error) << FormatIssues(outcome);
  // Far deeper: yaml-cpp itself refuses it, reported as a syntax error.
  const std::string deeper = std::string(100000, '[') + std::string(100000, ']');
  ExpectOnlyError(Yaml("configList: " + deeper + "\n"), "$", "nested too deeply");
}

TEST(ConfigMalformed, YamlAliasBombIsCapped) {
  std::string yaml = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n";
  for (int i = 1; i < 9; ++i) {
    const std::string prev = "*a" + std::to_string(i - 1);
    yaml += "a" + std::to_string(i) + ": &a" + std::to_string(i) + " [" + prev;
    for (int j = 0; j < 9; ++j) yaml += ", " + prev;
    yaml += "]\n";
  }
  const ParseOutcome outcome = Yaml(yaml);
  // Conversion stops at the cap and nothing else is reported about the partial tree.
  ASSERT_EQ(outcome.errors.size(), 1u) << FormatIssues(outcome).substr(0, 2000);
  EXPECT_NE(outcome.errors[0].message.find("expanding aliases"), std::string::npos);
}

TEST(ConfigMalformed, YamlAliasCycleIsOneError) {
  // The anchored sequence holds two aliases of itself: expanding it never ends, and the
  // depth cap alone reported one error per leaf (82,000 for a fuzzer's 125 bytes).
  const ParseOutcome outcome = Yaml("configList:\n- &a\n  - *a\n  - resourceName: x\n  - *a\n");
  // The cycle, once, and the validator's own word on the (array) entry.
  ASSERT_EQ(outcome.errors.size(), 2u) << FormatIssues(outcome).substr(0, 2000);
  EXPECT_EQ(outcome.errors[0].path, "$.configList[0][0]");
  EXPECT_NE(outcome.errors[0].message.find("contains it"), std::string::npos);
  EXPECT_EQ(outcome.errors[1].path, "$.configList[0]");
  // An alias of a sibling (not an ancestor) is fine and expands.
  const ParseOutcome ok = Yaml(
      "sel: &s {vendors: ['15b3']}\nconfigList:\n- resourceName: a\n  rdmaHcaMax: 1\n"
      "  selectors: *s\n- resourceName: b\n  rdmaHcaMax: 1\n  selectors: *s\n");
  for (const ConfigIssue& e : ok.errors)
    EXPECT_EQ(e.message.find("contains it"), std::string::npos);
}

TEST(ConfigMalformed, HugeSelectorListsStayFast) {
  // 100k distinct and 100k repeated values: deduplication must not be quadratic.
  std::string list;
  for (int i = 0; i < 100000; ++i) list += "\"ib" + std::to_string(i) + "\",\"ib0\",";
  list.pop_back();
  const Selectors s = SelectorsOf(WithSelectors(R"({"ifNames": [)" + list + "]}"));
  EXPECT_EQ(s.if_names.size(), 100000u);
  EXPECT_EQ(s.if_names[1], "ib1");  // the repeated "ib0" kept its first place
  EXPECT_EQ(s.if_names.back(), "ib99999");
}

// --- YAML specifics ------------------------------------------------------------------

// A YAML config with one entry whose body lines (indented by 4) are `fields`.
ParseOutcome YamlEntry(const std::string& fields) {
  return Yaml("configList:\n  - resourceName: r\n" + fields);
}

TEST(ConfigYaml, QuotedNumberIsATypeError) {
  const ParseOutcome outcome = YamlEntry("    rdmaHcaMax: \"10\"\n    devices: [ib0]\n");
  ExpectOnlyError(outcome, "$.configList[0].rdmaHcaMax", "must be an integer, got string \"10\"");
  EXPECT_NE(outcome.errors[0].message.find("quotes"), std::string::npos);
  ExpectOnlyError(YamlEntry("    rdmaHcaMax: '10'\n    devices: [ib0]\n"),
                  "$.configList[0].rdmaHcaMax", "must be an integer, got string");
}

TEST(ConfigYaml, PlainScalarsResolveLikeJson) {
  EXPECT_EQ(OnlyResource(YamlEntry("    rdmaHcaMax: 10\n    devices: [ib0]\n")).rdma_hca_max, 10);
  EXPECT_EQ(OnlyResource(YamlEntry("    rdmaHcaMax: +10\n    devices: [ib0]\n")).rdma_hca_max, 10);
  ExpectOnlyError(YamlEntry("    rdmaHcaMax: 1.5\n    devices: [ib0]\n"),
                  "$.configList[0].rdmaHcaMax", "must be an integer, got 1.5");
  ExpectOnlyError(YamlEntry("    rdmaHcaMax: 1e3\n    devices: [ib0]\n"),
                  "$.configList[0].rdmaHcaMax", "must be an integer, got 1000.0");
  ExpectOnlyError(YamlEntry("    rdmaHcaMax: true\n    devices: [ib0]\n"),
                  "$.configList[0].rdmaHcaMax", "must be an integer, got boolean");
  ExpectOnlyError(YamlEntry("    rdmaHcaMax: ten\n    devices: [ib0]\n"),
                  "$.configList[0].rdmaHcaMax", "must be an integer, got string \"ten\"");
  ExpectOnlyError(YamlEntry("    rdmaHcaMax: !!str 10\n    devices: [ib0]\n"),
                  "$.configList[0].rdmaHcaMax", "must be an integer, got string");
}

TEST(ConfigYaml, NullForms) {
  for (const char* null_form : {"", "~", "null", "Null", "NULL"}) {
    SCOPED_TRACE(null_form);
    const ParseOutcome outcome = Yaml(std::string("periodicUpdateInterval: ") + null_form +
                                      "\nconfigList:\n  - {resourceName: r, rdmaHcaMax: 1, "
                                      "devices: [ib0]}\n");
    ASSERT_TRUE(outcome.ok()) << FormatIssues(outcome);
    EXPECT_EQ(outcome.config->periodic_update_seconds, 60);
  }
}

TEST(ConfigYaml, UnquotedNumericIdsNeedQuotes) {
  const ParseOutcome outcome =
      YamlEntry("    rdmaHcaMax: 1\n    selectors:\n      deviceIDs: [1017]\n");
  ExpectOnlyError(outcome, "$.configList[0].selectors.deviceIDs[0]",
                  "must be a string, got number (quote the value in YAML)");
  // Hex with a 0x prefix is not a YAML 1.2 decimal integer, so it stays a string.
  EXPECT_EQ(SelectorsOf(YamlEntry("    rdmaHcaMax: 1\n    selectors:\n      vendors: [0x15B3]\n"))
                .vendors,
            std::vector<std::string>{"15b3"});
}

TEST(ConfigYaml, NumaNodesAndBooleansLookLikeYaml) {
  const Selectors& s = SelectorsOf(YamlEntry(
      "    rdmaHcaMax: 1\n    selectors:\n      numaNodes: [0, 1]\n      ifNames: [yes]\n"));
  EXPECT_EQ(s.numa_nodes, (std::vector<int>{0, 1}));
  EXPECT_EQ(s.if_names, std::vector<std::string>{"yes"});  // YAML 1.2: "yes" is a string
}

TEST(ConfigYaml, DuplicateKeysAreErrors) {
  ExpectOnlyError(YamlEntry("    rdmaHcaMax: 1\n    rdmaHcaMax: 2\n    devices: [ib0]\n"),
                  "$.configList[0].rdmaHcaMax", "duplicate key \"rdmaHcaMax\"");
}

TEST(ConfigYaml, UnknownKeysGetSuggestions) {
  ExpectOnlyError(YamlEntry("    rdmaHcaMax: 1\n    selector:\n      ifNames: [ib0]\n"),
                  "$.configList[0].selector", R"((did you mean "selectors"?))");
}

TEST(ConfigYaml, NonScalarKeysAreErrors) {
  ExpectOnlyError(Yaml("? [a, b]\n: 1\nconfigList:\n  - {resourceName: r, rdmaHcaMax: 1, "
                       "devices: [ib0]}\n"),
                  "$", "mapping keys must be strings");
}

// --- mode ----------------------------------------------------------------------------

// The exclusive resource from the documentation.
constexpr const char* kExclusiveEntry =
    R"({"resourceName": "hca_vfs", "mode": "exclusive",
        "selectors": {"isVF": true, "pfNames": ["ens1f0#0-3"]}})";

// The shared, topology-aware resource from the documentation.
constexpr const char* kTopologyAwareEntry =
    R"({"resourceName": "hca_numa", "rdmaHcaMax": 64, "topologyAware": true,
        "selectors": {"vendors": ["15b3"]}})";

// One entry with the given mode JSON value, no rdmaHcaMax and valid selectors.
ParseOutcome WithMode(const std::string& mode_json) {
  return Entry(R"({"resourceName": "r", "mode": )" + mode_json +
               R"(, "selectors": {"ifNames": ["ib0"]}})");
}

// --- cdiKind -------------------------------------------------------------------------

TEST(ConfigCdiKind, DefaultsToEmptyAndKeepsAValidKind) {
  EXPECT_EQ(OnlyResource(Entry(R"({"resourceName": "r", "rdmaHcaMax": 1,
      "selectors": {"vendors": ["15b3"]}})"))
                .cdi_kind,
            "");
  EXPECT_EQ(OnlyResource(Entry(R"({"resourceName": "r", "rdmaHcaMax": 1, "cdiKind":
      "nvidia.com/rdma_hca-1", "selectors": {"vendors": ["15b3"]}})"))
                .cdi_kind,
            "nvidia.com/rdma_hca-1");
}

TEST(ConfigCdiKind, InvalidKindsAreErrors) {
  for (const char* bad : {"rdma", "/rdma", "example.com/", "example.com/a.b", "-x.com/rdma",
                          "example.com/rdma/", "example.com/rdma_", "exa mple.com/r"}) {
    SCOPED_TRACE(bad);
    ExpectOnlyError(Entry(std::string(R"({"resourceName": "r", "rdmaHcaMax": 1, "cdiKind": ")") +
                          bad + R"(", "selectors": {"vendors": ["15b3"]}})"),
                    "$.configList[0].cdiKind", std::string("\"") + bad + "\" is not a CDI kind");
  }
  ExpectOnlyError(Entry(R"({"resourceName": "r", "rdmaHcaMax": 1, "cdiKind": 5,
      "selectors": {"vendors": ["15b3"]}})"),
                  "$.configList[0].cdiKind", "string");
}

TEST(ConfigCdiKind, TwoResourcesMayNotShareAKind) {
  // The second entry's custom kind is the first entry's default kind.
  const ParseOutcome outcome = Json(R"({"configList": [
    {"resourceName": "a", "rdmaHcaMax": 1, "selectors": {"vendors": ["15b3"]}},
    {"resourceName": "b", "rdmaHcaMax": 1, "cdiKind": "rdma/a",
     "selectors": {"vendors": ["15b3"]}}]})");
  ExpectOnlyError(outcome, "$.configList[1].cdiKind",
                  "CDI kind \"rdma/a\" is already used by $.configList[0]");
}

TEST(ConfigMode, DefaultsToShared) {
  const ResourceConfig r = OnlyResource(WithMax("5"));
  EXPECT_EQ(r.mode, PoolMode::kShared);
  EXPECT_FALSE(r.topology_aware);
  EXPECT_FALSE(r.exclude_topology);
  const ParseOutcome null_mode =
      Entry(R"({"resourceName": "r", "mode": null, "rdmaHcaMax": 5, "devices": ["ib0"]})");
  EXPECT_EQ(OnlyResource(null_mode).mode, PoolMode::kShared);
  const ParseOutcome shared =
      Entry(R"({"resourceName": "r", "mode": "shared", "rdmaHcaMax": 5, "devices": ["ib0"]})");
  EXPECT_EQ(OnlyResource(shared).mode, PoolMode::kShared);
  EXPECT_EQ(OnlyResource(shared).rdma_hca_max, 5);
}

TEST(ConfigMode, ExclusiveExampleValidates) {
  const ParseOutcome outcome = Entry(kExclusiveEntry);
  const ResourceConfig r = OnlyResource(outcome);
  EXPECT_TRUE(outcome.warnings.empty()) << FormatIssues(outcome);
  EXPECT_EQ(r.FullName(), "rdma/hca_vfs");
  EXPECT_EQ(r.mode, PoolMode::kExclusive);
  EXPECT_EQ(r.rdma_hca_max, 0);
  EXPECT_FALSE(r.topology_aware);
  EXPECT_EQ(r.selectors.is_vf, std::optional<bool>(true));
  EXPECT_EQ(r.selectors.pf_names, (std::vector<PfNameSelector>{{"ens1f0", 0, 3}}));
}

TEST(ConfigMode, BadValueListsAcceptedValues) {
  for (const char* bad : {"Exclusive", "SHARED", "dedicated", ""}) {
    SCOPED_TRACE(bad);
    const ParseOutcome outcome = WithMode(std::string("\"") + bad + "\"");
    ExpectOnlyError(outcome, "$.configList[0].mode",
                    std::string("unknown mode \"") + bad + "\"; accepted values: ");
    EXPECT_NE(outcome.errors[0].message.find("\"shared\""), std::string::npos);
    EXPECT_NE(outcome.errors[0].message.find("\"exclusive\""), std::string::npos);
  }
}

TEST(ConfigMode, WrongTypeIsATypeError) {
  const std::string path = "$.configList[0].mode";
  ExpectOnlyError(WithMode("1"), path, "must be a string, got number");
  ExpectOnlyError(WithMode("true"), path, "must be a string, got boolean");
  ExpectOnlyError(WithMode(R"(["exclusive"])"), path, "must be a string, got array");
}

TEST(ConfigMode, UnknownModeStillChecksAGivenRdmaHcaMax) {
  // Without a usable mode a missing rdmaHcaMax is not reported, but a bad one is.
  const ParseOutcome outcome =
      Entry(R"({"resourceName": "r", "mode": "exclusiv", "rdmaHcaMax": 0, "devices": ["ib0"]})");
  EXPECT_EQ(ErrorPaths(outcome),
            (std::set<std::string>{"$.configList[0].mode", "$.configList[0].rdmaHcaMax"}))
      << FormatIssues(outcome);
}

TEST(ConfigMode, MisspeltModeKeyIsTheOnlyError) {
  ExpectOnlyError(Entry(R"({"resourceName": "r", "mdoe": "exclusive",
                            "selectors": {"ifNames": ["ib0"]}})"),
                  "$.configList[0].mdoe", R"(unknown key "mdoe" (did you mean "mode"?))");
}

TEST(ConfigMode, RdmaHcaMaxIsNotAllowedInExclusiveMode) {
  const std::string path = "$.configList[0].rdmaHcaMax";
  for (const char* value : {"10", "0", "\"ten\""}) {
    SCOPED_TRACE(value);
    const ParseOutcome outcome =
        Entry(std::string(R"({"resourceName": "r", "mode": "exclusive", "rdmaHcaMax": )") + value +
              R"(, "selectors": {"ifNames": ["ib0"]}})");
    ExpectOnlyError(outcome, path, "is not allowed in exclusive mode");
    EXPECT_NE(outcome.errors[0].message.find("one device per PCI function"), std::string::npos);
    EXPECT_NE(outcome.errors[0].message.find("PCI address"), std::string::npos);
  }
  // null means unset.
  EXPECT_EQ(OnlyResource(Entry(R"({"resourceName": "r", "mode": "exclusive", "rdmaHcaMax": null,
                                   "selectors": {"ifNames": ["ib0"]}})"))
                .rdma_hca_max,
            0);
}

TEST(ConfigMode, RdmaHcaMaxIsStillRequiredInSharedMode) {
  const ParseOutcome outcome = WithMode(R"("shared")");
  ExpectOnlyError(outcome, "$.configList[0].rdmaHcaMax", "is required");
  EXPECT_NE(outcome.errors[0].message.find("\"exclusive\""), std::string::npos);
  ExpectOnlyError(WithMode("null"), "$.configList[0].rdmaHcaMax", "is required");
}

// --- topologyAware and excludeTopology -----------------------------------------------

// One shared entry with `fields` (JSON members, comma-terminated) and valid selectors.
ParseOutcome SharedWith(const std::string& fields) {
  return Entry(R"({"resourceName": "r", "rdmaHcaMax": 8, )" + fields +
               R"( "selectors": {"ifNames": ["ib0"]}})");
}

// As SharedWith, for an exclusive entry.
ParseOutcome ExclusiveWith(const std::string& fields) {
  return Entry(R"({"resourceName": "r", "mode": "exclusive", )" + fields +
               R"( "selectors": {"ifNames": ["ib0"]}})");
}

TEST(ConfigTopology, DefaultsAndNullAreFalse) {
  const ResourceConfig r =
      OnlyResource(SharedWith(R"("topologyAware": null, "excludeTopology": null,)"));
  EXPECT_FALSE(r.topology_aware);
  EXPECT_FALSE(r.exclude_topology);
}

TEST(ConfigTopology, SharedTopologyAwareExampleValidates) {
  const ResourceConfig r = OnlyResource(Entry(kTopologyAwareEntry));
  EXPECT_EQ(r.mode, PoolMode::kShared);
  EXPECT_EQ(r.rdma_hca_max, 64);
  EXPECT_TRUE(r.topology_aware);
  EXPECT_FALSE(r.exclude_topology);
  EXPECT_EQ(r.selectors.vendors, std::vector<std::string>{"15b3"});
}

TEST(ConfigTopology, TopologyAwareIsNotAllowedInExclusiveMode) {
  const ParseOutcome outcome = ExclusiveWith(R"("topologyAware": true,)");
  ExpectOnlyError(outcome, "$.configList[0].topologyAware", "only allowed in shared mode");
  EXPECT_NE(outcome.errors[0].message.find("own NUMA node"), std::string::npos);
  // false is merely the default.
  EXPECT_FALSE(OnlyResource(ExclusiveWith(R"("topologyAware": false,)")).topology_aware);
}

TEST(ConfigTopology, ExcludeTopologyWorksInBothModes) {
  EXPECT_TRUE(OnlyResource(SharedWith(R"("excludeTopology": true,)")).exclude_topology);
  const ResourceConfig r = OnlyResource(ExclusiveWith(R"("excludeTopology": true,)"));
  EXPECT_TRUE(r.exclude_topology);
  EXPECT_EQ(r.mode, PoolMode::kExclusive);
  EXPECT_FALSE(OnlyResource(SharedWith(R"("excludeTopology": false,)")).exclude_topology);
}

TEST(ConfigTopology, TopologyAwareAndExcludeTopologyContradict) {
  ExpectOnlyError(SharedWith(R"("topologyAware": true, "excludeTopology": true,)"),
                  "$.configList[0]", "contradict each other");
  EXPECT_TRUE(SharedWith(R"("topologyAware": true, "excludeTopology": false,)").ok());
  EXPECT_TRUE(SharedWith(R"("topologyAware": false, "excludeTopology": true,)").ok());
}

TEST(ConfigTopology, WrongTypesAreTypeErrors) {
  for (const char* key : {"topologyAware", "excludeTopology"}) {
    SCOPED_TRACE(key);
    const std::string path = std::string("$.configList[0].") + key;
    auto with = [&](const std::string& value) {
      return SharedWith("\"" + std::string(key) + "\": " + value + ",");
    };
    ExpectOnlyError(with(R"("yes")"), path, "must be a boolean, got string \"yes\"");
    ExpectOnlyError(with("1"), path, "must be a boolean, got number");
    ExpectOnlyError(with("[true]"), path, "must be a boolean, got array");
  }
}

TEST(ConfigTopology, YamlBooleanHints) {
  const std::string path = "$.configList[0].topologyAware";
  const std::string fields = "    rdmaHcaMax: 8\n    selectors: {ifNames: [ib0]}\n";
  EXPECT_TRUE(OnlyResource(YamlEntry(fields + "    topologyAware: true\n")).topology_aware);
  ExpectOnlyError(YamlEntry(fields + "    topologyAware: yes\n"), path,
                  "must be a boolean, got string \"yes\" (YAML booleans are written true or "
                  "false)");
  ExpectOnlyError(YamlEntry(fields + "    topologyAware: \"true\"\n"), path,
                  "must be a boolean, got string \"true\" (remove the quotes in YAML)");
}

// --- isVF ----------------------------------------------------------------------------

TEST(ConfigIsVf, TrueFalseAndAbsent) {
  EXPECT_EQ(SelectorsOf(WithSelectors(R"({"isVF": true, "ifNames": ["ib0"]})")).is_vf,
            std::optional<bool>(true));
  EXPECT_EQ(SelectorsOf(WithSelectors(R"({"isVF": false, "ifNames": ["ib0"]})")).is_vf,
            std::optional<bool>(false));
  EXPECT_EQ(SelectorsOf(WithSelectors(R"({"ifNames": ["ib0"]})")).is_vf, std::nullopt);
  EXPECT_EQ(SelectorsOf(WithSelectors(R"({"isVF": null, "ifNames": ["ib0"]})")).is_vf,
            std::nullopt);
}

TEST(ConfigIsVf, WrongTypeIsATypeError) {
  const std::string path = "$.configList[0].selectors.isVF";
  ExpectOnlyError(WithSelectors(R"({"isVF": "true"})"), path,
                  "must be a boolean, got string \"true\"");
  ExpectOnlyError(WithSelectors(R"({"isVF": 1})"), path, "must be a boolean, got number");
  ExpectOnlyError(WithSelectors(R"({"isVF": [true]})"), path, "must be a boolean, got array");
}

TEST(ConfigIsVf, OnItsOwnSelectsDevices) {
  const Selectors s = SelectorsOf(WithSelectors(R"({"isVF": false})"));
  EXPECT_EQ(s.is_vf, std::optional<bool>(false));
  EXPECT_FALSE(s.Empty());
  // A null isVF selects nothing; isVF with devices is "both".
  ExpectOnlyError(WithSelectors(R"({"isVF": null})"), "$.configList[0]", "selects no devices");
  ExpectOnlyError(Entry(R"({"resourceName": "r", "rdmaHcaMax": 5, "devices": ["ib0"],
                            "selectors": {"isVF": true}})"),
                  "$.configList[0]", "both \"devices\" and \"selectors\"");
}

// --- pfNames -------------------------------------------------------------------------

// The pfNames of a one-entry config whose pfNames list is the JSON text `list`.
ParseOutcome WithPfNames(const std::string& list) {
  return WithSelectors(R"({"pfNames": )" + list + "}");
}

TEST(ConfigPfNames, NamesAndRanges) {
  const Selectors s = SelectorsOf(WithPfNames(
      R"(["ens1f0", "ens1f1#2", "ens2f0#0-3", "p0#0-4095", "p1#007-010", "abcdefghijklmno"])"));
  EXPECT_EQ(s.pf_names, (std::vector<PfNameSelector>{{"ens1f0", -1, -1},
                                                     {"ens1f1", 2, 2},
                                                     {"ens2f0", 0, 3},
                                                     {"p0", 0, 4095},
                                                     {"p1", 7, 10},
                                                     {"abcdefghijklmno", -1, -1}}));
}

TEST(ConfigPfNames, DuplicatesCollapse) {
  const Selectors s = SelectorsOf(
      WithPfNames(R"(["ens1f0#2", "ens1f0", "ens1f0#2-2", "ens1f0#0-3", "ens1f0", "ens1f0#0-3"])"));
  EXPECT_EQ(s.pf_names,
            (std::vector<PfNameSelector>{{"ens1f0", 2, 2}, {"ens1f0", -1, -1}, {"ens1f0", 0, 3}}));
}

TEST(ConfigPfNames, ReversedRangeHasExactMessage) {
  const ParseOutcome outcome = WithPfNames(R"(["ens1f0", "ens1f0#3-1"])");
  ASSERT_EQ(outcome.errors.size(), 1u) << FormatIssues(outcome);
  EXPECT_EQ(outcome.errors[0].ToString(),
            "$.configList[0].selectors.pfNames[1]: invalid VF range \"ens1f0#3-1\" (want NAME, "
            "NAME#N or NAME#N-M with N <= M, or a comma-separated list of ranges as in "
            "NAME#0,2-7)");
}

TEST(ConfigPfNames, CommaSeparatedRanges) {
  const Selectors s = SelectorsOf(WithPfNames(R"(["ens1f0#0,2-7", "ens2f0#3,3,1-2"])"));
  EXPECT_EQ(s.pf_names,
            (std::vector<PfNameSelector>{
                {"ens1f0", 0, 0}, {"ens1f0", 2, 7}, {"ens2f0", 3, 3}, {"ens2f0", 1, 2}}));
}

TEST(ConfigPfNames, BadRangeInAListRejectsTheWholeEntry) {
  for (const char* bad : {"ens1f0#1,", "ens1f0#,1", "ens1f0#1,,2", "ens1f0#0,3-1", "ens1f0#0,x"}) {
    SCOPED_TRACE(bad);
    ExpectOnlyError(WithPfNames(std::string(R"(["ens1f1", ")") + bad + R"("])"),
                    "$.configList[0].selectors.pfNames[1]",
                    std::string("invalid VF range \"") + bad + "\" (want NAME");
  }
}

TEST(ConfigPfNames, BadRangeSyntaxIsAnError) {
  for (const char* bad :
       {"ens1f0#", "ens1f0#a", "ens1f0#1-", "ens1f0#-1", "ens1f0#1-2-3", "ens1f0##1", "ens1f0#1#2",
        "ens1f0#+1", "ens1f0# 1", "ens1f0#1.5", "ens1f0#0x1", "ens1f0#-"}) {
    SCOPED_TRACE(bad);
    ExpectOnlyError(WithPfNames(std::string(R"([")") + bad + R"("])"),
                    "$.configList[0].selectors.pfNames[0]",
                    std::string("invalid VF range \"") + bad + "\" (want NAME, NAME#N or NAME#N-M");
  }
}

TEST(ConfigPfNames, MissingNameIsAnError) {
  for (const char* bad : {"#", "#2", "#0-3"}) {
    SCOPED_TRACE(bad);
    ExpectOnlyError(WithPfNames(std::string(R"([")") + bad + R"("])"),
                    "$.configList[0].selectors.pfNames[0]",
                    std::string("\"") + bad + "\" has no PF name before '#'");
  }
  ExpectOnlyError(WithPfNames(R"([""])"), "$.configList[0].selectors.pfNames[0]",
                  "must not be empty");
}

TEST(ConfigPfNames, VfIndexesAreCapped) {
  const std::string path = "$.configList[0].selectors.pfNames[0]";
  ExpectOnlyError(WithPfNames(R"(["ens1f0#4096"])"), path, "VF indexes go up to 4095");
  ExpectOnlyError(WithPfNames(R"(["ens1f0#0-99999999999999999999999"])"), path,
                  "VF indexes go up to 4095");
  ExpectOnlyError(WithPfNames(R"(["ens1f0#99999999999999999999999-1"])"), path, "invalid VF range");
}

TEST(ConfigPfNames, BadNamesAreErrors) {
  const std::string path = "$.configList[0].selectors.pfNames[0]";
  ExpectOnlyError(WithPfNames(R"(["abcdefghijklmnop"])"), path,
                  "PF name \"abcdefghijklmnop\" is 16 characters long; interface names have at "
                  "most 15");
  ExpectOnlyError(WithPfNames(R"(["abcdefghijklmnop#1"])"), path, "is 16 characters long");
  // Spliced into JSON text, so "\\t" arrives as a JSON-escaped tab.
  for (const char* bad : {"ens1/f0", "ens 1f0", "ens1f0\\t", " ens1f0#1"}) {
    SCOPED_TRACE(bad);
    ExpectOnlyError(WithPfNames(std::string(R"([")") + bad + R"("])"), path,
                    "may not contain '/' or whitespace");
  }
}

TEST(ConfigPfNames, WrongTypesAndAllErrorsAtOnce) {
  const std::string path = "$.configList[0].selectors.pfNames";
  ExpectOnlyError(WithPfNames(R"("ens1f0")"), path, "must be an array, got string");
  const ParseOutcome outcome = WithPfNames(R"(["ens1f0#1", 3, "x#2-1", "#", "ok#0-1"])");
  EXPECT_EQ(ErrorPaths(outcome), (std::set<std::string>{path + "[1]", path + "[2]", path + "[3]"}))
      << FormatIssues(outcome);
}

// --- the new keys in YAML ------------------------------------------------------------

TEST(ConfigYaml, ExclusiveResourceMatchesJson) {
  const ParseOutcome yaml = Yaml(R"(
configList:
  - resourceName: hca_vfs
    mode: exclusive
    excludeTopology: false
    selectors:
      isVF: true
      pfNames: ["ens1f0#0-3", ens1f1#2]
)");
  const ParseOutcome json = Entry(R"({"resourceName": "hca_vfs", "mode": "exclusive",
      "selectors": {"isVF": true, "pfNames": ["ens1f0#0-3", "ens1f1#2"]}})");
  const ResourceConfig r = OnlyResource(yaml);
  EXPECT_EQ(r.mode, PoolMode::kExclusive);
  EXPECT_EQ(r.selectors.pf_names,
            (std::vector<PfNameSelector>{{"ens1f0", 0, 3}, {"ens1f1", 2, 2}}));
  EXPECT_EQ(r, OnlyResource(json));
}

// --- Empty() and operator== with the new fields ---------------------------------------

TEST(ConfigSelectors, EmptyAccountsForIsVf) {
  Selectors s;
  EXPECT_TRUE(s.Empty());
  s.is_vf = false;
  EXPECT_FALSE(s.Empty());
  s.is_vf = true;
  EXPECT_FALSE(s.Empty());
  s.is_vf.reset();
  EXPECT_TRUE(s.Empty());
}

TEST(ConfigSelectors, EqualityComparesIsVfAndPfNameRanges) {
  Selectors a, b;
  a.is_vf = true;
  EXPECT_FALSE(a == b);
  b.is_vf = false;
  EXPECT_FALSE(a == b);
  b.is_vf = true;
  EXPECT_TRUE(a == b);
  a.pf_names = {{"ens1f0", 0, 3}};
  b.pf_names = {{"ens1f0", 0, 4}};
  EXPECT_FALSE(a == b);
  b.pf_names = {{"ens1f0", 1, 3}};
  EXPECT_FALSE(a == b);
  b.pf_names = {{"ens1f1", 0, 3}};
  EXPECT_FALSE(a == b);
  b.pf_names = {{"ens1f0", 0, 3}};
  EXPECT_TRUE(a == b);
}

TEST(ConfigResource, EqualityComparesModeAndTopology) {
  ResourceConfig base;
  base.resource_name = "r";
  base.resource_prefix = "rdma";
  ResourceConfig other = base;
  EXPECT_TRUE(base == other);
  other.mode = PoolMode::kExclusive;
  EXPECT_FALSE(base == other);
  other = base;
  other.topology_aware = true;
  EXPECT_FALSE(base == other);
  other = base;
  other.exclude_topology = true;
  EXPECT_FALSE(base == other);
  other = base;
  other.selectors.is_vf = false;
  EXPECT_FALSE(base == other);
}

// --- the new keys in unknown-key suggestions and combined reports --------------------

TEST(ConfigUnknownKeys, NewKeysGetSuggestions) {
  ExpectOnlyError(SharedWith(R"("topologyaware": true,)"), "$.configList[0].topologyaware",
                  R"((did you mean "topologyAware"?))");
  ExpectOnlyError(SharedWith(R"("excludeTopolgy": true,)"), "$.configList[0].excludeTopolgy",
                  R"((did you mean "excludeTopology"?))");
  ExpectOnlyError(WithSelectors(R"({"ifNames": ["ib0"], "isVf": true})"),
                  "$.configList[0].selectors.isVf", R"((did you mean "isVF"?))");
  ExpectOnlyError(WithSelectors(R"({"ifNames": ["ib0"], "pfName": ["ens1f0"]})"),
                  "$.configList[0].selectors.pfName", R"((did you mean "pfNames"?))");
  const ParseOutcome far = SharedWith(R"("colour": 1,)");
  ASSERT_EQ(far.errors.size(), 1u);
  for (const char* key : {"mode", "topologyAware", "excludeTopology"}) {
    EXPECT_NE(far.errors[0].message.find(key), std::string::npos) << key;
  }
}

TEST(ConfigErrors, NewRulesAreReportedTogether) {
  const ParseOutcome outcome = Json(R"({"configList": [
      {"resourceName": "a", "mode": "Exclusive", "topologyAware": "yes",
       "selectors": {"isVF": 1, "pfNames": ["ens1f0#3-1"]}},
      {"resourceName": "b", "mode": "exclusive", "rdmaHcaMax": 4, "topologyAware": true,
       "excludeTopology": 0, "selectors": {"pfNames": ["#1"]}},
      {"resourceName": "c", "mode": "shared", "topologyAware": true, "excludeTopology": true,
       "selectors": {"isVF": true}}]})");
  EXPECT_EQ(ErrorPaths(outcome), (std::set<std::string>{
                                     "$.configList[0].mode",
                                     "$.configList[0].topologyAware",
                                     "$.configList[0].selectors.isVF",
                                     "$.configList[0].selectors.pfNames[0]",
                                     "$.configList[1].rdmaHcaMax",
                                     "$.configList[1].topologyAware",
                                     "$.configList[1].excludeTopology",
                                     "$.configList[1].selectors.pfNames[0]",
                                     "$.configList[2].rdmaHcaMax",
                                     "$.configList[2]",
                                 }))
      << FormatIssues(outcome);
  EXPECT_EQ(outcome.errors.size(), 10u) << FormatIssues(outcome);
}

// --- LoadConfigFile ------------------------------------------------------------------

TEST(ConfigLoadFile, MissingFileIsAnError) {
  const std::string path = MakeTempDir() + "/does-not-exist.json";
  const ParseOutcome outcome = LoadConfigFile(path);
  ExpectOnlyError(outcome, "$", path);
  EXPECT_NE(outcome.errors[0].message.find("No such file or directory"), std::string::npos)
      << outcome.errors[0].message;
}

TEST(ConfigLoadFile, DirectoryIsAnError) {
  const std::string dir = MakeTempDir();
  ExpectOnlyError(LoadConfigFile(dir), "$", dir);
}

TEST(ConfigLoadFile, JsonFile) {
  const std::string path = WriteFile(MakeTempDir(), "config.json", kMellanoxJson);
  const ParseOutcome outcome = LoadConfigFile(path);
  ASSERT_TRUE(outcome.ok()) << FormatIssues(outcome);
  EXPECT_EQ(outcome.config->resources.size(), 2u);
}

TEST(ConfigLoadFile, YamlFiles) {
  const std::string dir = MakeTempDir();
  for (const char* name : {"config.yaml", "config.yml", "CONFIG.YAML"}) {
    SCOPED_TRACE(name);
    const ParseOutcome outcome = LoadConfigFile(WriteFile(dir, name, kMellanoxYaml));
    ASSERT_TRUE(outcome.ok()) << FormatIssues(outcome);
    EXPECT_EQ(outcome.config->periodic_update_seconds, 300);
  }
}

TEST(ConfigLoadFile, ExtensionDecidesTheFormat) {
  const std::string dir = MakeTempDir();
  // YAML in a .json file is a JSON syntax error.
  ExpectOnlyError(LoadConfigFile(WriteFile(dir, "wrong.json", kMellanoxYaml)), "$", "invalid JSON");
  // JSON is (mostly) YAML, so a .yaml file may hold it.
  EXPECT_TRUE(LoadConfigFile(WriteFile(dir, "json.yaml", kMellanoxJson)).ok());
}

TEST(ConfigLoadFile, UnknownExtensionIsAutoDetected) {
  const std::string dir = MakeTempDir();
  EXPECT_TRUE(LoadConfigFile(WriteFile(dir, "config", kMellanoxJson)).ok());
  EXPECT_TRUE(LoadConfigFile(WriteFile(dir, "config.conf", kMellanoxYaml)).ok());
  EXPECT_TRUE(LoadConfigFile(WriteFile(dir, "config.d.old", kMellanoxYaml)).ok());
}

TEST(ConfigLoadFile, EmptyFileIsAnError) {
  ExpectOnlyError(LoadConfigFile(WriteFile(MakeTempDir(), "empty.json", "")), "$", "empty");
}

}  // namespace
}  // namespace hcashare::config
