// Crash injection (issue 9): the real hcashare-cni binary killed with SIGKILL at every
// crash point of ADD and of DEL (cni/fault_points.h), enumerated, not sampled; then DEL,
// or separately GC with no valid attachments, must restore everything: the VF netdev back
// in the host under its name with its MAC, MTU and down, nothing left in the pod, no
// state file, owner marker or held lock, the IPAM lease and the device-info file gone.
#include <signal.h>

#include <set>
#include <sstream>

#include "cni/fault_points.h"
#include "tests/cni_binary_fixture.h"

namespace hcashare::cni {
namespace {

using json = nlohmann::json;

// Points this fixture cannot reach: the PF-side ones need a PF that reports its VFs, the
// RDMA ones an RDMA device with the RDMA netns mode exclusive.
const std::set<std::string> kNeedsHardware = {"add:pf-set", "add:rdma-moved", "del:rdma-returned",
                                              "add:child-created", "del:child-deleted"};

class CniCrashTest : public CniBinaryTest {
 protected:
  void SetUp() override {
    CniBinaryTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    if (!fs::exists(std::string(kIpamDir) + "/host-local")) {
      GTEST_SKIP() << "needs containernetworking-plugins";
    }
    pod_ = AddPod();
    conf_ = Conf("1.1.0", AddVf(2));
    conf_["mac"] = "02:00:00:00:00:5a";
    conf_["mtu"] = 1400;
    conf_["ipam"] = HostLocal();
    conf_["runtimeConfig"] = {{"CNIDeviceInfoFile", DeviceInfoFile()}};
    host_before_ = Links(host_ns_);
    pod_before_ = Links(netns_.back());
  }

  std::string DeviceInfoFile() const { return tmp_.path() + "/devinfo/net1.json"; }

  // The crash points one ADD and one DEL of conf_ reach, in order.
  std::vector<std::string> ReachedPoints() {
    const std::vector<std::string> list = {"HCASHARE_CNI_CRASH_LIST=1"};
    CniRun add = Run("ADD", pod_, conf_, "net1", "probe", "", list);
    CniRun del = Run("DEL", pod_, conf_, "net1", "probe", "", list);
    EXPECT_EQ(add.exit_code, 0) << add.raw << add.err;
    EXPECT_EQ(del.exit_code, 0) << del.raw << del.err;
    std::vector<std::string> points;
    std::istringstream lines(add.err + del.err);
    const std::string prefix = "hcashare-cni crash point: ";
    for (std::string line; std::getline(lines, line);) {
      if (line.rfind(prefix, 0) == 0) points.push_back(line.substr(prefix.size()));
    }
    return points;
  }

  // Releases container `ctr` with DEL, or with GC and no valid attachments.
  void Recover(const std::string& how, const std::string& ctr) {
    CniRun run;
    if (how == "DEL") {
      run = Run("DEL", pod_, conf_, "net1", ctr);
    } else {
      json gc = conf_;
      gc["cni.dev/valid-attachments"] = json::array();
      run = Run("GC", "", gc, "net1", ctr);
    }
    EXPECT_EQ(run.exit_code, 0) << how << ": " << run.raw << run.err;
  }

  // The host is as before the first ADD.
  void ExpectRestored() {
    EXPECT_EQ(Links(host_ns_), host_before_) << "VF netdev back with its name, MAC, MTU, down";
    EXPECT_EQ(Links(netns_.back()), pod_before_) << "nothing left in the pod";
    EXPECT_EQ(StateFiles(), 0u) << "no attachment state or owner marker";
    size_t held = 0;
    LockFiles(&held);
    EXPECT_EQ(held, 0u) << "no lock held";
    EXPECT_EQ(IpamLeases(), 0u) << "IPAM lease released";
    EXPECT_FALSE(fs::exists(DeviceInfoFile())) << "device-info file removed";
  }

  // For every reached point of `verb` ("add" or "del"): kill there, recover with `how`,
  // check. Returns how many points were tried.
  int KillAtEveryPoint(const std::string& verb, const std::string& how) {
    int tried = 0;
    for (const std::string& point : ReachedPoints()) {
      if (point.rfind(verb + ":", 0) != 0) continue;
      SCOPED_TRACE(point + ", then " + how);
      const std::string ctr = "c" + std::to_string(tried++);
      const std::vector<std::string> crash = {"HCASHARE_CNI_CRASH_AT=" + point};
      if (verb == "del") {
        CniRun add = Run("ADD", pod_, conf_, "net1", ctr);
        EXPECT_EQ(add.exit_code, 0) << add.raw << add.err;
      }
      CniRun killed = Run(verb == "add" ? "ADD" : "DEL", pod_, conf_, "net1", ctr, "", crash);
      EXPECT_EQ(killed.exit_code, 128 + SIGKILL) << "killed at " << point << ": " << killed.raw;
      Recover(how, ctr);
      ExpectRestored();
      if (HasFailure()) break;  // one broken point is enough to read
    }
    return tried;
  }

  std::string pod_;
  json conf_;
  std::vector<LinkInfo> host_before_, pod_before_;
};

// The points reached are known ones, and all but the hardware-only ones are reached.
TEST_F(CniCrashTest, EveryPointIsReached) {
  const std::vector<std::string> reached = ReachedPoints();
  std::set<std::string> expected;
  for (std::string_view p : kFaultPoints) expected.emplace(p);
  for (const auto& p : reached) EXPECT_EQ(expected.count(p), 1u) << p << " is not in kFaultPoints";
  for (const auto& p : kNeedsHardware) expected.erase(p);
  EXPECT_EQ(std::set<std::string>(reached.begin(), reached.end()), expected);
  std::vector<std::string> in_table_order;
  for (std::string_view p : kFaultPoints) {
    if (expected.count(std::string(p))) in_table_order.emplace_back(p);
  }
  EXPECT_EQ(reached, in_table_order) << "each reached once, in the order of kFaultPoints";
  std::printf("[ crash points ] %zu reached of %zu\n", reached.size(), kFaultPoints.size());
}

// Without HCASHARE_CNI_CRASH_AT the points are inert.
TEST_F(CniCrashTest, UnsetMeansNoCrash) {
  CniRun add = Run("ADD", pod_, conf_, "net1", "c0", "", {"HCASHARE_CNI_CRASH_AT=no-such"});
  EXPECT_EQ(add.exit_code, 0) << add.raw;
  EXPECT_EQ(Run("DEL", pod_, conf_, "net1", "c0").exit_code, 0);
  ExpectRestored();
}

TEST_F(CniCrashTest, KillDuringAddThenDel) { EXPECT_GT(KillAtEveryPoint("add", "DEL"), 0); }
TEST_F(CniCrashTest, KillDuringAddThenGc) { EXPECT_GT(KillAtEveryPoint("add", "GC"), 0); }
TEST_F(CniCrashTest, KillDuringDelThenDel) { EXPECT_GT(KillAtEveryPoint("del", "DEL"), 0); }
TEST_F(CniCrashTest, KillDuringDelThenGc) { EXPECT_GT(KillAtEveryPoint("del", "GC"), 0); }

}  // namespace
}  // namespace hcashare::cni
