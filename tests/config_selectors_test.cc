// Tests for the config module's selectors: devices, every selector list and its
// normalisation, isVF, pfNames with VF ranges, Empty() and operator==.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "config/config.h"
#include "tests/config_test_util.h"

namespace hcashare::config {
namespace {

using namespace test_util;  // the shared helpers, unqualified

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

}  // namespace
}  // namespace hcashare::config
