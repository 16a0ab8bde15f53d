// daemon/symbol-order.txt, the order in which lld lays out the functions an idle
// device plugin runs (docs/benchmarks.md, idle RSS), still names the daemon's functions: a
// file gone stale would silently give back ~1.5 MiB of idle memory, so this fails instead
// and says how to regenerate it.
#include <gtest/gtest.h>

#include <chrono>
#include <set>
#include <sstream>
#include <string>

#include "common/process.h"
#include "tests/test_util.h"

namespace hcashare {
namespace {

// The share of the file's names the daemon must still define.
constexpr double kMinShareDefined = 0.9;

// The output of `argv` (an absolute path first), or the empty string with a test failure.
std::string OutputOf(const std::vector<std::string>& argv) {
  auto out = Execute(argv[0], argv, {}, "", std::chrono::seconds(60), 64 << 20);
  EXPECT_TRUE(out.ok()) << out.status().ToString();
  if (!out.ok()) return "";
  EXPECT_EQ(out->exit_code, 0) << out->err;
  return out->out;
}

TEST(DpSymbolOrder, TheDaemonStillDefinesTheOrderedFunctions) {
  const std::string daemon = testing::BinDir() + "/hcashare-device-plugin";
  // Only a daemon linked by lld used the file (a sanitizer or shared build is not).
  if (OutputOf({"/usr/bin/readelf", "-p", ".comment", daemon}).find("LLD") == std::string::npos) {
    GTEST_SKIP() << daemon << " was not linked by lld with the symbol order";
  }
  std::set<std::string> defined;
  std::istringstream nm(OutputOf({"/usr/bin/nm", "--defined-only", daemon}));
  for (std::string addr, type, name; nm >> addr >> type >> name;) defined.insert(name);
  ASSERT_GT(defined.size(), 1000u);

  std::istringstream order(
      testing::ReadTextFile(std::string(HCASHARE_SOURCE_DIR) + "/daemon/symbol-order.txt"));
  size_t listed = 0, found = 0;
  for (std::string name; std::getline(order, name);) {
    if (name.empty()) continue;
    ++listed;
    found += defined.count(name);
  }
  ASSERT_GT(listed, 1000u) << "daemon/symbol-order.txt is nearly empty";
  EXPECT_GE(static_cast<double>(found), kMinShareDefined * static_cast<double>(listed))
      << found << " of the " << listed << " functions in daemon/symbol-order.txt are "
      << "still in the daemon: regenerate it with scripts/dp-symbol-order.sh";
}

}  // namespace
}  // namespace hcashare
