// Golden files and canned snapshots for the tests about logic (topo, discover, the CNI's VF
// resolution). The canned hosts of tests/cli_fixtures.h are checked in as host snapshots
// (tests/golden/snapshots/<name>.json, as `hcashare snapshot` writes them); these tests
// load them instead of writing a fixture tree. snapshot_golden_test keeps each file equal
// to what the reader makes of its tree. HCASHARE_UPDATE_GOLDEN=1 rewrites golden files.
// Needs HCASHARE_GOLDEN_DIR (tests/CMakeLists.txt) and links cli_fixtures.cc.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "hostfacts/facts.h"
#include "hostfacts/snapshot_json.h"
#include "tests/cli_fixtures.h"
#include "tests/test_util.h"

#ifndef HCASHARE_GOLDEN_DIR
#error "HCASHARE_GOLDEN_DIR must name tests/golden"
#endif

namespace hcashare::testing {

// True when the test should rewrite its golden files instead of comparing.
inline bool UpdatingGolden() { return std::getenv("HCASHARE_UPDATE_GOLDEN") != nullptr; }

// tests/golden/<file>.
inline std::string GoldenPath(const std::string& file) {
  return std::string(HCASHARE_GOLDEN_DIR) + "/" + file;
}

// `actual` equals golden file `file` (or rewrites it with HCASHARE_UPDATE_GOLDEN=1).
inline void ExpectGolden(const std::string& file, const std::string& actual) {
  if (UpdatingGolden()) {
    std::ofstream(GoldenPath(file)) << actual;
    return;
  }
  const std::string want = ReadTextFile(GoldenPath(file));
  ASSERT_FALSE(want.empty()) << "missing golden file " << GoldenPath(file);
  EXPECT_EQ(actual, want) << "differs from " << file << " (HCASHARE_UPDATE_GOLDEN=1 rewrites it)";
}

// A canned host: its snapshot's name and the fixture tree it was taken from.
struct CannedHost {
  const char* name;
  Status (*build)(fake::SimNode*);
};

// Names the case in test output.
inline void PrintTo(const CannedHost& h, std::ostream* os) { *os << h.name; }

// The two-NUMA server, the single-root workstation and the SR-IOV host.
inline std::vector<CannedHost> CannedHosts() {
  return {
      {"two_socket", BuildTwoSocketHost}, {"workstation", BuildWorkstation}, {"vfs", BuildVfHost}};
}

// tests/golden/snapshots/<name>.json.
inline std::string CannedSnapshotPath(const std::string& name) {
  return GoldenPath("snapshots/" + name + ".json");
}

// The canned snapshot `name`; an empty snapshot (and a test failure) when it cannot be loaded.
inline hostfacts::HostSnapshot LoadCanned(const std::string& name) {
  auto snap = hostfacts::LoadSnapshotFile(CannedSnapshotPath(name));
  EXPECT_TRUE(snap.ok()) << snap.status().ToString();
  return snap.ok() ? *snap : hostfacts::HostSnapshot{};
}

}  // namespace hcashare::testing
