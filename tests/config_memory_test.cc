// Issue 25, "bounded memory": the config reader refuses, before building it, a text whose
// parse would pass the bound stated in docs/reliability.md ("Config memory"): at most
// kMaxConfigBytes (1 MiB, what a ConfigMap holds), kMaxConfigValues values and keys (YAML
// aliases expanded) and kMaxConfigDepth levels. The memory tests run each load in a child
// (tests/support/hostile_configs.h) and measure its peak resident set; under a sanitizer,
// whose shadow memory and quarantine are not the reader's, they check the refusals only.
#include <string>

#include <gtest/gtest.h>

#include "common/temp_dir.h"
#include "config/config.h"
#include "tests/config_test_util.h"
#include "tests/support/hostile_configs.h"

namespace hcashare::config {
namespace {

using namespace test_util;  // the shared helpers, unqualified
using hcashare::testing::HostileShape;
using hcashare::testing::HostileShapes;
using hcashare::testing::MeasureLoad;

// The bound of docs/reliability.md: a load's peak resident set grows by at most this much.
constexpr long kBoundKib = 24 * 1024;
// A safety net for a regression, not a latency target (bench/config_mem_bench has those).
constexpr std::chrono::seconds kDeadline(120);

#ifdef HCASHARE_TEST_SANITIZED
constexpr bool kMeasured = false;
#else
constexpr bool kMeasured = true;
#endif

// Loads `shape` at `bytes` in a child; checks the growth against the bound where measured.
testing::LoadMeasure LoadShape(const HostileShape& shape, size_t bytes) {
  TempDir dir("config_memory_test.");
  const std::string path = dir.path() + "/config" + shape.extension;
  std::ofstream(path) << shape.make(bytes);
  const auto m = MeasureLoad(path, kDeadline);
  EXPECT_TRUE(m.has_value()) << shape.name << ": the load ran out of time or memory";
  if (!m) return {};
  if (kMeasured) {
    EXPECT_LE(m->peak_growth_kib, kBoundKib) << shape.name << " at " << bytes << " bytes";
  }
  std::printf("[ config memory ] %s %zu bytes: +%ld KiB, %.1f ms: %s\n", shape.name, bytes,
              m->peak_growth_kib, m->ms, m->first_error.substr(0, 100).c_str());
  return *m;
}

// The issue's input: 16 MiB of duplicate keys peaked at 459 MB (the old cap was 16 MiB).
TEST(ConfigMemory, SixteenMiBOfDuplicateKeysIsRefusedUnread) {
  const testing::LoadMeasure m = LoadShape(HostileShapes()[0], size_t{16} << 20);
  EXPECT_EQ(m.errors, 1u);
  EXPECT_NE(m.first_error.find("; the limit is 1048576 bytes"), std::string::npos) << m.first_error;
}

// Every shape at the size cap: refused (or, for a long string, parsed) within the bound.
// Before: 1 MiB of `{},` grew by 453 MB, of YAML `0,` by 258 MB.
TEST(ConfigMemory, EveryHostileShapeAtTheSizeCapStaysWithinTheBound) {
  for (const HostileShape& shape : HostileShapes()) {
    const testing::LoadMeasure m = LoadShape(shape, kMaxConfigBytes);
    EXPECT_GE(m.errors, 1u) << shape.name;
    EXPECT_LE(m.errors, kMaxListedIssues + 1) << shape.name;
  }
}

// Every shape as large as the reader accepts (just under the size, value and depth limits):
// parsed, validated and reported within the bound. The bench prints the figures.
TEST(ConfigMemory, EveryShapeAsLargeAsAcceptedStaysWithinTheBound) {
  if (!kMeasured) GTEST_SKIP() << "measured in the release build (the bisection is slow here)";
  TempDir dir("config_memory_test.");
  for (const HostileShape& shape : HostileShapes()) {
    const size_t bytes =
        testing::LargestAccepted(shape, dir.path() + "/probe" + std::string(shape.extension));
    if (bytes > 0) LoadShape(shape, bytes);
  }
}

// --- each limit, its error and its path ------------------------------------------------

TEST(ConfigMemory, TextOverTheSizeCapIsRefused) {
  const std::string padded = std::string(kMellanoxJson) + std::string(kMaxConfigBytes, ' ');
  ExpectOnlyError(ParseConfig(padded), "$",
                  "config is " + std::to_string(padded.size()) +
                      " bytes; the limit is 1048576 bytes (what a ConfigMap can hold)");
  // Exactly the cap is accepted.
  const std::string full = std::string(kMellanoxJson) +
                           std::string(kMaxConfigBytes - std::string(kMellanoxJson).size(), ' ');
  ASSERT_EQ(full.size(), kMaxConfigBytes);
  EXPECT_TRUE(ParseConfig(full).ok()) << FormatIssues(ParseConfig(full));
}

// 100,000 levels of '[': refused at the 65th level, with its path, in JSON and YAML alike.
TEST(ConfigMemory, DeepNestingIsRefusedAtTheSixtyFifthLevel) {
  std::string path = "$.configList";
  for (int i = 0; i < 63; ++i) path += "[0]";
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  ExpectOnlyError(Json(R"({"configList": )" + deep + "}"), path, "nested more than 64 levels deep");
  ExpectOnlyError(Yaml("configList: " + deep + "\n"), path, "nested more than 64 levels deep");
  // 64 levels are parsed (and the validator says what is wrong with them).
  const std::string ok = std::string(63, '[') + std::string(63, ']');
  EXPECT_EQ(ErrorPaths(Json(R"({"configList": )" + ok + "}")),
            std::set<std::string>{"$.configList[0]"});
}

// A YAML alias can still nest an anchored collection below another one: the part past 64
// levels is dropped and reported, and validation goes on.
TEST(ConfigMemory, AliasNestedTooDeepIsReportedOnce) {
  const std::string deep = std::string(40, '[') + std::string(40, ']');
  const ParseOutcome outcome = Yaml("a: &a " + deep + "\nconfigList: " + std::string(30, '[') +
                                    "*a" + std::string(30, ']') + "\n");
  size_t depth_errors = 0;
  for (const ConfigIssue& e : outcome.errors) {
    depth_errors += e.message.find("nested more than 64 levels deep") != std::string::npos;
  }
  EXPECT_EQ(depth_errors, 1u) << FormatIssues(outcome);
}

TEST(ConfigMemory, TooManyValuesAreRefusedWhereTheLimitIsPassed) {
  std::string list = "0";
  for (size_t i = 1; i < kMaxConfigValues; ++i) list += ",0";
  // The root object, its key "configList", the list: 20,003 values; the 20,001st is [19997].
  ExpectOnlyError(Json(R"({"configList": [)" + list + "]}"), "$.configList[19997]",
                  "document has more than 20000 values and keys");
  ExpectOnlyError(Yaml("configList: [" + list + "]\n"), "$.configList[19997]",
                  "document has more than 20000 values and keys");
}

// Duplicate keys below the value limit: the first 100 listed, the rest counted.
TEST(ConfigMemory, ManyDuplicateKeysListTheFirstHundred) {
  std::string object = R"("a":0)";
  for (int i = 1; i < 9000; ++i) object += R"(,"a":0)";
  const ParseOutcome outcome = Json("{" + object + "}");
  ASSERT_EQ(outcome.errors.size(), kMaxListedIssues + 1) << FormatIssues(outcome);
  EXPECT_EQ(outcome.errors[0].ToString(), R"($.a: duplicate key "a" in the same object)");
  // 8,999 duplicates, the unknown key "a" and the missing configList: 9,001 in all.
  EXPECT_EQ(outcome.errors.back().ToString(), "$: 8901 more errors not listed (the first 100 are)");
}

// "Billion laughs": 10^9 values once expanded, in 570 bytes; refused by the pre-scan, which
// adds up each anchor's expanded size, before yaml-cpp builds anything.
TEST(ConfigMemory, YamlAliasBombIsRefusedBeforeItIsBuilt) {
  const HostileShape* bomb = nullptr;
  for (const HostileShape& shape : HostileShapes()) {
    if (std::string(shape.name) == "yaml-alias-bomb") bomb = &shape;
  }
  ASSERT_NE(bomb, nullptr);
  ExpectOnlyError(Yaml(bomb->make(0)), "$.a4[0]",
                  "document has more than 20000 values and keys (after expanding aliases)");
}

// A long string costs its bytes a few times over, not more: parsed, and the validator says
// what is wrong with it.
TEST(ConfigMemory, LongStringIsParsed) {
  const std::string name(kMaxConfigBytes - 100, 'a');
  ExpectOnlyError(
      Entry(R"({"resourceName": ")" + name + R"(", "rdmaHcaMax": 1, "devices": ["ib0"]})"),
      "$.configList[0].resourceName", "characters long");
}

}  // namespace
}  // namespace hcashare::config
