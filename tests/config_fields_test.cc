// Tests for the config module, field by field: the Mellanox example, periodicUpdateInterval,
// configList, resourceName, resourcePrefix, rdmaHcaMax, mode, cdiKind, topologyAware and
// excludeTopology (selectors: config_selectors_test.cc; input forms and error reporting:
// config_input_test.cc).
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "config/config.h"
#include "config/names.h"
#include "tests/config_test_util.h"

namespace hcashare::config {
namespace {

using namespace test_util;  // the shared helpers, unqualified

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

// An unquoted 0x10 reaches the validator as a string: the hint is not "remove the quotes"
// (issue 25), which only a quoted decimal number gets.
TEST(ConfigTopology, YamlIntegerHints) {
  const std::string path = "$.configList[0].rdmaHcaMax";
  const std::string fields = "    selectors: {ifNames: [ib0]}\n";
  ExpectOnlyError(YamlEntry(fields + "    rdmaHcaMax: \"8\"\n"), path,
                  "must be an integer, got string \"8\" (remove the quotes in YAML)");
  ExpectOnlyError(YamlEntry(fields + "    rdmaHcaMax: 0x10\n"), path,
                  "must be an integer, got string \"0x10\" (write the number in decimal digits)");
  ExpectOnlyError(YamlEntry(fields + "    rdmaHcaMax: many\n"), path,
                  "must be an integer, got string \"many\"");
}

// --- operator== of a resource with the new fields ----------------------------------

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

}  // namespace
}  // namespace hcashare::config
