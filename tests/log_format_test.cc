// `--log-format json` (issue 15): every line hcashare-device-plugin writes to stdout and
// stderr is one JSON object, with numbers as JSON numbers, booleans as JSON booleans and an
// error under the key `error`: command-line errors (also when the bad flag comes before
// --log-format), the config report at start-up, an invalid config's problems, and a whole
// run up to SIGTERM. Before, command-line errors and an invalid config's report were plain
// text, and every field value was a string.
#include <signal.h>

#include <chrono>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "common/log.h"
#include "tests/daemon_fixture.h"

namespace hcashare::testing {
namespace {

using ::testing::HasSubstr;
using Json = nlohmann::json;
using std::chrono::milliseconds;

// Keys that once carried errors; `error` is the one key now.
constexpr const char* kOldErrorKeys[] = {"err", "issue", "errno", "problem"};

// Every non-empty line of `text` as a JSON object with a string ts, level and msg; records
// at level error carry a string `error`. Failures name the offending line.
std::vector<Json> ParseRecords(const std::string& text) {
  std::vector<Json> out;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    const std::string line = text.substr(start, end - start);
    start = end + 1;
    if (line.empty()) continue;
    Json j = Json::parse(line, nullptr, /*allow_exceptions=*/false);
    EXPECT_TRUE(j.is_object()) << "not a JSON object: " << line;
    if (!j.is_object()) continue;
    for (const char* key : {"ts", "level", "msg"}) {
      EXPECT_TRUE(j.contains(key) && j[key].is_string()) << key << " missing: " << line;
    }
    if (j.value("level", "") == "error") {
      EXPECT_TRUE(j.contains("error") && j["error"].is_string()) << "no error key: " << line;
    }
    for (const char* key : kOldErrorKeys) EXPECT_FALSE(j.contains(key)) << key << ": " << line;
    out.push_back(std::move(j));
  }
  return out;
}

// The records with message `msg`.
std::vector<Json> WithMsg(const std::vector<Json>& records, const std::string& msg) {
  std::vector<Json> out;
  for (const Json& j : records) {
    if (j.value("msg", "") == msg) out.push_back(j);
  }
  return out;
}

class LogFormatTest : public DaemonTest {
 protected:
  // Runs the daemon with `extra` to its end; returns its exit code and its output's records.
  int RunToEnd(const std::vector<std::string>& extra, std::vector<Json>* records) {
    auto p = Spawn(extra, "plugin.log");
    EXPECT_TRUE(p.ok());
    if (!p.ok()) return -1;
    auto rc = p->Wait(milliseconds(10000));
    if (!rc.ok()) (void)p->Signal(SIGKILL);
    *records = ParseRecords(Output());
    return rc.value_or(-1);
  }
  std::string Output() const { return ReadTextFile(tmp_.path() + "/plugin.log"); }

  // Expects exactly one command-line error record whose `error` mentions `what`.
  void ExpectUsageError(const std::vector<std::string>& args, const std::string& what) {
    std::vector<Json> records;
    EXPECT_EQ(RunToEnd(args, &records), 2) << Output();
    ASSERT_EQ(records.size(), 1u) << Output();
    EXPECT_EQ(records[0]["level"], "error");
    EXPECT_EQ(records[0]["msg"], "invalid command line");
    EXPECT_THAT(records[0].value("error", ""), HasSubstr(what)) << Output();
  }
};

// Fields keep their type: JSON numbers and booleans, bare in text; strings stay strings.
TEST(LogValueTest, TypedFieldsKeepTheirType) {
  std::vector<std::string> lines;
  SetLogSink([&](const std::string& l) { lines.push_back(l); });
  SetLogFormat(LogFormat::kJson);
  const size_t resources = 2;
  LogInfo("typed", {{"resources", resources},
                    {"periodic_update_seconds", 60},
                    {"delta", -3L},
                    {"seconds", 0.5},
                    {"ok", true},
                    {"name", std::string("a b")},
                    {"list", std::vector<std::string>{"x", "y"}}});
  SetLogFormat(LogFormat::kText);
  LogInfo("typed", {{"resources", resources}, {"ok", false}, {"seconds", 0.5}, {"s", "60"}});
  SetLogSink(nullptr);
  ASSERT_EQ(lines.size(), 2u);
  const Json j = Json::parse(lines[0]);
  EXPECT_EQ(j["resources"], 2);
  EXPECT_TRUE(j["resources"].is_number_integer());
  EXPECT_EQ(j["periodic_update_seconds"], 60);
  EXPECT_EQ(j["delta"], -3);
  EXPECT_EQ(j["seconds"], 0.5);
  EXPECT_EQ(j["ok"], true);
  EXPECT_EQ(j["name"], "a b");
  EXPECT_EQ(j["list"], Json::array({"x", "y"}));
  EXPECT_THAT(lines[1], HasSubstr(" info typed resources=2 ok=false seconds=0.5 s=60"));
}

// An unknown flag, under --log-format json: one JSON error record, exit 2.
TEST_F(LogFormatTest, UnknownFlagIsAJsonError) {
  ExpectUsageError({"--log-format", "json", "--no-such-flag"}, "--no-such-flag");
}

// The bad flag comes before --log-format json (either spelling): still JSON.
TEST_F(LogFormatTest, FlagErrorBeforeTheFormatFlagIsJson) {
  ExpectUsageError({"--no-such-flag", "--log-format=json"}, "--no-such-flag");
  ExpectUsageError({"--health-poll-interval", "-1", "-log-format", "json"},
                   "--health-poll-interval");
  ExpectUsageError({"--metrics-address", "999.1.1.1:99999", "--log-format", "json"},
                   "port out of range");
}

// A bad flag value names the flag in its own field.
TEST_F(LogFormatTest, BadFlagValueNamesTheFlag) {
  std::vector<Json> records;
  EXPECT_EQ(RunToEnd({"--log-format", "json", "--registration", "sometimes"}, &records), 2);
  ASSERT_EQ(records.size(), 1u) << Output();
  EXPECT_EQ(records[0]["flag"], "--registration");
  EXPECT_THAT(records[0].value("error", ""), HasSubstr("sometimes"));
  EXPECT_EQ(RunToEnd({"--metrics-address", "999.1.1.1:99999", "--log-format", "json"}, &records),
            2);
  ASSERT_EQ(records.size(), 1u) << Output();
  EXPECT_EQ(records[0]["flag"], "--metrics-address");
}

// An invalid config: one record per problem (with its JSON path) and a summary listing
// them all; no plain-text report.
TEST_F(LogFormatTest, InvalidConfigListsEveryProblemAsJson) {
  WriteConfig(R"({"periodicUpdateInterval": -5, "configList": [
    {"resourceName": "bad$name", "rdmaHCAmax": 3, "devices": ["ib0"]}]})");
  std::vector<Json> records;
  EXPECT_EQ(RunToEnd({"--config", config_, "--log-format", "json"}, &records), 2) << Output();
  const auto problems = WithMsg(records, "config error");
  ASSERT_GE(problems.size(), 3u) << Output();
  std::vector<std::string> paths;
  for (const Json& p : problems) paths.push_back(p.value("json_path", ""));
  EXPECT_THAT(
      paths, ::testing::IsSupersetOf({"$.periodicUpdateInterval", "$.configList[0].resourceName"}));
  const auto summary = WithMsg(records, "invalid config");
  ASSERT_EQ(summary.size(), 1u) << Output();
  ASSERT_TRUE(summary[0]["errors"].is_array());
  EXPECT_EQ(summary[0]["errors"].size(), problems.size());
  EXPECT_EQ(summary[0]["file"], config_);
  const auto warnings = WithMsg(records, "config warning");
  ASSERT_EQ(warnings.size(), 1u) << Output();
  EXPECT_THAT(warnings[0].value("warning", ""), HasSubstr("deprecated"));
}

// A whole run: start-up (flags and the config report, typed), metrics, registration with
// the kubelet, SIGTERM. Every line is JSON and the typed fields are numbers and booleans.
TEST_F(LogFormatTest, ARunToSigtermIsJsonWithTypedFields) {
  WriteConfig(Config(5));
  ASSERT_TRUE(kubelet_->Start().ok());
  auto p = Spawn({"--config", config_, "--log-format", "json", "--metrics-address", "127.0.0.1:0",
                  "--health-poll-interval", "0.5"},
                 "plugin.log");
  ASSERT_TRUE(p.ok());
  ASSERT_TRUE(WaitDevices(5)) << Output();
  ASSERT_TRUE(
      WaitUntil([&] { return Output().find("registered with kubelet") != std::string::npos; },
                milliseconds(10000)))
      << Output();
  // A reload: an invalid file is rejected (its problems under `error`), then a valid one
  // with a deprecated key is applied (its warning under `warning`, counts as numbers).
  WriteConfig(R"({"configList": [{"resourceName": "bad$", "rdmaHcaMax": 5, "devices": ["ib0"]}]})");
  ASSERT_TRUE(p->Signal(SIGHUP).ok());
  ASSERT_TRUE(WaitUntil([&] { return Output().find("new config rejected") != std::string::npos; },
                        milliseconds(10000)))
      << Output();
  WriteConfig(Config(4));
  ASSERT_TRUE(p->Signal(SIGHUP).ok());
  ASSERT_TRUE(WaitDevices(4)) << Output();
  ASSERT_TRUE(p->Signal(SIGTERM).ok());
  EXPECT_EQ(p->Wait(milliseconds(10000)).value_or(-1), 0);
  const std::vector<Json> records = ParseRecords(Output());
  const auto rejected = WithMsg(records, "new config rejected; keeping the running config");
  ASSERT_GE(rejected.size(), 1u) << Output();  // the file watch and SIGHUP may both reload
  EXPECT_TRUE(rejected[0]["errors"].is_number_integer()) << Output();
  // The file watch may also have read the file half-written (an error at "$").
  bool named = false;
  for (const Json& e : WithMsg(records, "config error")) {
    named = named || e.value("json_path", "").find("resourceName") != std::string::npos;
  }
  EXPECT_TRUE(named) << Output();
  const auto applied = WithMsg(records, "config applied");
  ASSERT_GE(applied.size(), 2u) << Output();
  EXPECT_EQ(applied.back()["resources"], 1);
  for (const Json& c : WithMsg(records, "pool changed")) {
    EXPECT_TRUE(c["hcas"].is_number_integer()) << c.dump();
  }

  const auto starting = WithMsg(records, "starting hcashare-device-plugin");
  ASSERT_EQ(starting.size(), 1u) << Output();
  EXPECT_EQ(starting[0]["use_cdi"], false);
  EXPECT_EQ(starting[0]["health_poll_interval_seconds"], 0.5);
  EXPECT_TRUE(starting[0]["health_debounce_seconds"].is_number());

  const auto loaded = WithMsg(records, "config loaded");
  ASSERT_EQ(loaded.size(), 1u) << Output();
  EXPECT_EQ(loaded[0]["resources"], 1);
  EXPECT_TRUE(loaded[0]["periodic_update_seconds"].is_number_integer());
  const auto resource = WithMsg(records, "resource configured");
  ASSERT_EQ(resource.size(), 1u) << Output();
  EXPECT_EQ(resource[0]["resource"], kDaemonRes);
  EXPECT_EQ(resource[0]["mode"], "shared");
  EXPECT_EQ(resource[0]["rdma_hca_max"], 5);
  EXPECT_EQ(resource[0]["topology_aware"], false);

  const auto serving = WithMsg(records, "serving metrics and probes");
  ASSERT_EQ(serving.size(), 1u) << Output();
  ASSERT_TRUE(serving[0]["port"].is_number_integer()) << Output();
  EXPECT_GT(serving[0]["port"].get<int>(), 0);
  const auto registered = WithMsg(records, "registered with kubelet");
  ASSERT_FALSE(registered.empty()) << Output();
  EXPECT_TRUE(registered[0]["register_us"].is_number_integer()) << Output();
  EXPECT_EQ(WithMsg(records, "stopped").size(), 1u) << Output();
}

}  // namespace
}  // namespace hcashare::testing
