// Tests for the config module's input: JSON or YAML detection, unknown keys and their
// suggestions, every error reported at once, malformed and hostile input, YAML specifics and
// LoadConfigFile.
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "config/config.h"
#include "config/suggest.h"
#include "tests/config_test_util.h"

namespace hcashare::config {
namespace {

using namespace test_util;  // the shared helpers, unqualified

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

// --- format detection ---------------------------------------------------------------

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

// Text that is not UTF-8 is refused in both formats with its position (the fuzzer found a
// YAML config with 0xFF bytes in an ifNames entry accepted, and its names then unprintable
// as JSON); UTF-8 beyond ASCII still reads.
TEST(ConfigMalformed, TextThatIsNotUtf8IsRefusedWithItsPosition) {
  const std::string bad =
      "configList:\n  - resourceName: a\n    rdmaHcaMax: 1\n"
      "    selectors:\n      ifNames: [ib0, i\xff\xff"
      "b]\n";
  ExpectOnlyError(Yaml(bad), "$", "invalid YAML at line 5, column 23: not UTF-8 (byte 0xFF)");
  ExpectOnlyError(Yaml("# caf\xe9\nconfigList: []\n"), "$", "line 1, column 6");
  ExpectOnlyError(Yaml("configList: [\xc0\x80]\n"), "$", "not UTF-8 (byte 0xC0)");  // overlong
  ExpectOnlyError(Yaml("configList: [\xed\xa0\x80]\n"), "$", "not UTF-8");          // a surrogate
  ExpectOnlyError(Yaml("configList: [\xe2\x82]\n"), "$", "not UTF-8");              // cut short
  ExpectOnlyError(Json("{\"configList\": [\"\xff\"]}"), "$", "invalid JSON");
  const ParseOutcome ok = Yaml(
      "# café, 日本, 🚀\nconfigList:\n  - resourceName: a\n    rdmaHcaMax: 1\n"
      "    selectors:\n      vendors: [\"15b3\"]\n");
  EXPECT_TRUE(ok.ok()) << FormatIssues(ok);
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

// A config of a thousand `{}` entries lists its first hundred errors and counts the rest:
// 300,000 of them (900 KB) listed 900,000 lines, 109 MB. (That input also took 25 s in
// nlohmann's callback parser; cni_hostile_test holds the parser to linear time.)
TEST(ConfigMalformed, ManyEntriesListTheFirstHundredErrors) {
  std::string list = "{}";
  for (int i = 1; i < 1000; ++i) list += ",{}";
  const ParseOutcome outcome = Json(R"({"configList": [)" + list + "]}");
  ASSERT_EQ(outcome.errors.size(), kMaxListedIssues + 1);
  EXPECT_EQ(outcome.errors[0].path, "$.configList[0].resourceName");
  EXPECT_EQ(outcome.errors.back().path, "$");
  EXPECT_NE(outcome.errors.back().message.find("more errors not listed (the first 100"),
            std::string::npos);
}

// Duplicate keys are found at any depth, with the path of the key.
TEST(ConfigMalformed, DuplicateKeyPathsInsideNestedLists) {
  const ParseOutcome outcome = Json(
      R"({"configList": [{"resourceName": "a", "rdmaHcaMax": 1, "selectors": {"vendors": ["15b3"]}},)"
      R"( {"resourceName": "b", "rdmaHcaMax": 1, "selectors": {"vendors": [], "vendors": ["15b3"]}}]})");
  EXPECT_EQ(ErrorPaths(outcome), std::set<std::string>{"$.configList[1].selectors.vendors"});
}

// Deep nesting and alias bombs: tests/config_memory_test.cc (issue 25).

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
  // 9,900 distinct and 9,900 repeated values (as many as kMaxConfigValues allows):
  // deduplication must not be quadratic.
  std::string list;
  for (int i = 0; i < 9900; ++i) list += "\"ib" + std::to_string(i) + "\",\"ib0\",";
  list.pop_back();
  const Selectors s = SelectorsOf(WithSelectors(R"({"ifNames": [)" + list + "]}"));
  EXPECT_EQ(s.if_names.size(), 9900u);
  EXPECT_EQ(s.if_names[1], "ib1");  // the repeated "ib0" kept its first place
  EXPECT_EQ(s.if_names.back(), "ib9899");
}

// --- YAML specifics ------------------------------------------------------------------

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

// A ConfigMap mounts config.json as a symlink into ..data/: followed (the node's
// administrator wrote it). A symlink to /dev/zero is still refused, as not a regular file.
TEST(ConfigLoadFile, ConfigMapSymlinksAreFollowedDevZeroIsNot) {
  const std::string dir = MakeTempDir();
  std::filesystem::create_directories(dir + "/..2026_12_02");
  WriteFile(dir + "/..2026_12_02", "config.json", kMellanoxJson);
  std::filesystem::create_directory_symlink("..2026_12_02", dir + "/..data");
  std::filesystem::create_symlink("..data/config.json", dir + "/config.json");
  const ParseOutcome outcome = LoadConfigFile(dir + "/config.json");
  ASSERT_TRUE(outcome.ok()) << FormatIssues(outcome);
  std::filesystem::create_symlink("/dev/zero", dir + "/zero.json");
  ExpectOnlyError(LoadConfigFile(dir + "/zero.json"), "$", "a character device");
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
