// The DRA step's failure paths against the state-diff oracle (tests/cni_oracle.h), the real
// binary on real netns and veths: every fault point of a two-device ADD, of its DEL, and of
// a Multus network's take-over of a device, each failed and each killed (SIGKILL), then the
// runtime's recovery (DEL, the GC verb); the node must be as before, exactly.
#include <signal.h>

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "tests/cni_dra_fixture.h"
#include "tests/cni_oracle.h"

namespace hcashare::cni {
namespace {

using json = nlohmann::json;
using testing::DiffSnapshots;
using testing::Snapshot;
using testing::TakeSnapshot;

class CniDraChainFailureTest : public CniDraPodTest {
 protected:
  void SetUp() override {
    CniDraPodTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    AddRailsPod();
    dra::PreparedClaim c = RailsClaim();
    c.devices[0].addresses = {"10.56.0.5/24"};  // IPAM's points too (`static`)
    PutClaim(c);
    step_ = {
        {"cniVersion", "1.1.0"}, {"name", "cluster"}, {"type", "hcashare-cni"}, {"mode", "dra"}};
    nad_ = Conf("1.1.0", vf0_);
  }

  testing::OracleScope Scope() {
    return {{{"host", host_ns_}, {"pod", pod_name_}},
            {{"state", StateDir()}, {"dra-network", NetworkStatusDir()}, {"ipam", IpamDir()}},
            {}};
  }
  void ExpectClean(const Snapshot& clean, const std::string& what) {
    EXPECT_EQ(DiffSnapshots(clean, TakeSnapshot(Scope())), "") << what;
  }

  CniRun Step(const std::string& verb, const std::string& ctr,
              const std::vector<std::string>& env = {}) {
    return Run(verb, pod_, step_, "eth0", ctr, "", env);
  }
  CniRun Nad(const std::string& verb, const std::string& ctr,
             const std::vector<std::string>& env = {}) {
    return Run(verb, pod_, nad_, "net1", ctr, "", env);
  }
  void GcNone() {
    json gc = step_;
    gc["cni.dev/valid-attachments"] = json::array();
    CniRun run = Run("GC", "", gc, "", "gc");
    EXPECT_EQ(run.exit_code, 0) << run.raw << run.err;
  }

  json step_, nad_;
};

TEST_F(CniDraChainFailureTest, EveryAddPointFailedOrKilledRestoresTheNode) {
  const Snapshot clean = TakeSnapshot(Scope());
  const std::vector<std::string> list = {"HCASHARE_CNI_CRASH_LIST=1"};
  CniRun add = Step("ADD", "probe", list);
  ASSERT_EQ(add.exit_code, 0) << add.raw << add.err;
  ASSERT_EQ(Step("DEL", "probe").exit_code, 0);
  ExpectClean(clean, "after a clean ADD and DEL");
  int tried = 0;
  for (const std::string& point : CrashPointsIn(add.err)) {
    SCOPED_TRACE(point);
    ++tried;
    CniRun failed = Step("ADD", "e" + std::to_string(tried), {"HCASHARE_CNI_FAIL_AT=" + point});
    EXPECT_EQ(failed.exit_code, 1) << failed.raw << failed.err;
    EXPECT_EQ(failed.out.value("code", -1), kErrIo) << failed.raw;
    ExpectClean(clean, "an ADD failed at " + point);
    for (const char* recovery : {"DEL", "GC"}) {
      const std::string ctr = "k" + std::to_string(tried) + recovery;
      CniRun killed = Step("ADD", ctr, {"HCASHARE_CNI_CRASH_AT=" + point});
      EXPECT_EQ(killed.exit_code, 128 + SIGKILL) << killed.raw;
      if (std::string(recovery) == "DEL") {
        CniRun del = Step("DEL", ctr);
        EXPECT_EQ(del.exit_code, 0) << del.raw << del.err;
      } else {
        GcNone();
      }
      ExpectClean(clean, "an ADD killed at " + point + ", then " + recovery);
    }
    if (HasFailure()) break;
  }
  // Both devices' points: the second device's are named "<point>#2".
  EXPECT_GE(tried, 8);
  std::printf("[ oracle ] DRA step: %d ADD points x {error, kill+DEL, kill+GC}\n", tried);
}

TEST_F(CniDraChainFailureTest, EveryDelPointFailedOrKilledThenRetriedRestoresTheNode) {
  const Snapshot clean = TakeSnapshot(Scope());
  ASSERT_EQ(Step("ADD", "probe").exit_code, 0);
  CniRun probe = Step("DEL", "probe", {"HCASHARE_CNI_CRASH_LIST=1"});
  ASSERT_EQ(probe.exit_code, 0) << probe.raw << probe.err;
  int tried = 0;
  for (const std::string& point : CrashPointsIn(probe.err)) {
    SCOPED_TRACE(point);
    ++tried;
    for (const char* how : {"FAIL", "CRASH"}) {
      const std::string ctr = "d" + std::to_string(tried) + how;
      ASSERT_EQ(Step("ADD", ctr).exit_code, 0);
      CniRun del = Step("DEL", ctr, {std::string("HCASHARE_CNI_") + how + "_AT=" + point});
      EXPECT_NE(del.exit_code, 0) << del.raw;
      CniRun again = Step("DEL", ctr);
      EXPECT_EQ(again.exit_code, 0) << again.raw << again.err;
      ExpectClean(clean, std::string("a DEL ") + how + " at " + point + ", then DEL");
    }
    if (HasFailure()) break;
  }
  EXPECT_GE(tried, 8);
  std::printf("[ oracle ] DRA step: %d DEL points x {error, kill} + DEL\n", tried);
}

// Multus's network ADD takes rdma0 over from the step: at each of its points (the step's
// attachment detached, then the network's own ADD), failed or killed, then the runtime's DEL
// of the network and of the default network.
TEST_F(CniDraChainFailureTest, EveryPointOfATakeOverFailedOrKilledRestoresTheNode) {
  const Snapshot clean = TakeSnapshot(Scope());
  ASSERT_EQ(Step("ADD", "probe").exit_code, 0);
  CniRun probe = Nad("ADD", "probe", {"HCASHARE_CNI_CRASH_LIST=1"});
  ASSERT_EQ(probe.exit_code, 0) << probe.raw << probe.err;
  ASSERT_EQ(Nad("DEL", "probe").exit_code, 0);
  ASSERT_EQ(Step("DEL", "probe").exit_code, 0);
  ExpectClean(clean, "after a clean take-over");
  const std::vector<std::string> points = CrashPointsIn(probe.err);
  EXPECT_TRUE(std::find(points.begin(), points.end(), "del:state-removed") != points.end())
      << "the take-over detaches the step's attachment";
  int tried = 0;
  for (const std::string& point : points) {
    SCOPED_TRACE(point);
    ++tried;
    for (const char* how : {"FAIL", "CRASH"}) {
      const std::string ctr = "t" + std::to_string(tried) + how;
      ASSERT_EQ(Step("ADD", ctr).exit_code, 0);
      CniRun add = Nad("ADD", ctr, {std::string("HCASHARE_CNI_") + how + "_AT=" + point});
      EXPECT_NE(add.exit_code, 0) << add.raw;
      CniRun del = Nad("DEL", ctr);
      EXPECT_EQ(del.exit_code, 0) << del.raw << del.err;
      CniRun step_del = Step("DEL", ctr);
      EXPECT_EQ(step_del.exit_code, 0) << step_del.raw << step_del.err;
      ExpectClean(clean, std::string("a take-over ") + how + " at " + point);
    }
    if (HasFailure()) break;
  }
  EXPECT_GE(tried, 6);
  std::printf("[ oracle ] DRA step take-over: %d points x {error, kill} + DELs\n", tried);
}

}  // namespace
}  // namespace hcashare::cni
