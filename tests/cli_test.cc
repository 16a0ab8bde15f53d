// Process-level tests of the `hcashare` CLI (validate) and of the daemon's legacy flag
// spelling.
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "common/process.h"
#include "common/temp_dir.h"
#include "daemon/flags.h"
#include "tests/test_util.h"

namespace hcashare {
namespace {

using testing::BinDir;

struct CliResult {
  int code = -1;
  std::string output;
};

// Runs `hcashare args...` and captures its output.
CliResult Hcashare(const TempDir& tmp, const std::vector<std::string>& args) {
  std::vector<std::string> argv = {BinDir() + "/hcashare"};
  argv.insert(argv.end(), args.begin(), args.end());
  const std::string out = tmp.path() + "/out.txt";
  CliResult r;
  auto p = Subprocess::Spawn(argv, out);
  if (!p.ok()) return r;
  r.code = p->Wait(std::chrono::seconds(30)).value_or(-1);
  r.output = testing::ReadTextFile(out);
  return r;
}

constexpr const char* kMellanoxExample = R"({
  "periodicUpdateInterval": 300,
  "configList": [
    {"resourceName": "hca_shared_devices_a", "rdmaHcaMax": 1000, "devices": ["ib0", "ib1"]},
    {"resourceName": "hca_shared_devices_b", "rdmaHcaMax": 500,
     "selectors": {"vendors": ["15b3"], "deviceIDs": ["1017"], "ifNames": ["ib3", "ib4"]}}]})";

// The Mellanox example validates: exit 0, both resources listed, the deprecation warning.
TEST(CliTest, ValidateAcceptsMellanoxExample) {
  TempDir tmp;
  std::ofstream(tmp.path() + "/config.json") << kMellanoxExample;
  CliResult r = Hcashare(tmp, {"validate", tmp.path() + "/config.json"});
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("valid"), std::string::npos);
  EXPECT_NE(r.output.find("rdma/hca_shared_devices_a shared: rdmaHcaMax=1000"), std::string::npos);
  EXPECT_NE(r.output.find("warning: $.configList[0].devices"), std::string::npos) << r.output;
}

// An invalid file: exit 2 and every error with its path; --json is machine-readable.
TEST(CliTest, ValidateReportsEveryError) {
  TempDir tmp;
  std::ofstream(tmp.path() + "/bad.yaml") << "configList:\n"
                                             "  - resourceName: a\n"
                                             "    rdmaHCAmax: 3\n"
                                             "    selectors: {linkTypes: [token-ring]}\n";
  CliResult r = Hcashare(tmp, {"validate", tmp.path() + "/bad.yaml"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.output.find("$.configList[0].rdmaHCAmax"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("did you mean \"rdmaHcaMax\""), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("$.configList[0].selectors.linkTypes[0]"), std::string::npos);

  CliResult j = Hcashare(tmp, {"validate", "--json", tmp.path() + "/bad.yaml"});
  EXPECT_EQ(j.code, 2);
  auto doc = nlohmann::json::parse(j.output, nullptr, false);
  ASSERT_FALSE(doc.is_discarded()) << j.output;
  EXPECT_FALSE(doc["valid"].get<bool>());
  EXPECT_EQ(doc["errors"].size(), 2u);
}

// A missing file is an error at "$", not a crash.
TEST(CliTest, ValidateMissingFile) {
  TempDir tmp;
  CliResult r = Hcashare(tmp, {"validate", tmp.path() + "/nope.json"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.output.find("error: $"), std::string::npos) << r.output;
}

// Go-style single-dash long flags become double-dash; short flags and values stay.
TEST(FlagsTest, NormalizesLegacyFlags) {
  using daemon::NormalizeLegacyFlags;
  EXPECT_EQ(NormalizeLegacyFlags({"-config-file", "/a.json", "-v", "--log-level", "debug"}),
            (std::vector<std::string>{"--config-file", "/a.json", "-v", "--log-level", "debug"}));
  EXPECT_EQ(NormalizeLegacyFlags({"-config-file=/x", "-version"}),
            (std::vector<std::string>{"--config-file=/x", "--version"}));
  EXPECT_EQ(NormalizeLegacyFlags({"--", "-notaflag"}),
            (std::vector<std::string>{"--", "-notaflag"}));
  EXPECT_EQ(NormalizeLegacyFlags({"-1"}), (std::vector<std::string>{"-1"}));
}

}  // namespace
}  // namespace hcashare
