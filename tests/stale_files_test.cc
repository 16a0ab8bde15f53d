// Stale files (issue 15): the daemon owns every file it writes through a per-instance,
// flock'ed ledger. A restart after a SIGKILL removes the CDI specs and pool descriptions of
// resources its config no longer has; files of a live instance (a rollout overlap), of
// another kubelet root, or rewritten by someone else since are never removed.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "common/owned_files.h"
#include "common/temp_dir.h"
#include "deviceplugin/cdi.h"
#include "tests/daemon_fixture.h"

namespace hcashare {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

constexpr const char* kRoot = "/var/lib/kubelet";

class OwnedFilesLedgerTest : public ::testing::Test {
 protected:
  bool Exists(const std::string& name) const { return fs::exists(dir_ + "/" + name); }
  // The ledgers in the directory.
  int Ledgers() const {
    int n = 0;
    for (const auto& e : fs::directory_iterator(dir_)) {
      n += e.path().filename().string().rfind(".hcashare-owned.", 0) == 0;
    }
    return n;
  }

  TempDir tmp_;
  const std::string dir_ = tmp_.path() + "/d";
};

// A run that dies without its clean-up (its lock goes with it): the next run of the same
// owner removes the files of resources it no longer has and owns the others again.
TEST_F(OwnedFilesLedgerTest, RestartAfterADeathRemovesWhatIsNoLongerConfigured) {
  {
    OwnedFiles dead(dir_, kRoot);
    ASSERT_TRUE(dead.Write("a.json", "a").ok());
    ASSERT_TRUE(dead.Write("b.json", "b").ok());
  }  // no RemoveAll: as after SIGKILL
  ASSERT_TRUE(Exists("b.json"));
  OwnedFiles next(dir_, kRoot);
  EXPECT_THAT(next.Reclaim({"a.json"}), ElementsAre("b.json"));
  EXPECT_TRUE(Exists("a.json"));
  EXPECT_FALSE(Exists("b.json"));
  EXPECT_EQ(Ledgers(), 1) << "the dead run's ledger is replaced by ours";
  next.RemoveAll();
  EXPECT_FALSE(Exists("a.json")) << "the kept file is ours again";
  EXPECT_EQ(Ledgers(), 0);
}

// A live instance holds its ledger's lock: an overlapping new one leaves its files alone.
TEST_F(OwnedFilesLedgerTest, LiveInstanceFilesAreNeverReclaimed) {
  OwnedFiles live(dir_, kRoot);
  ASSERT_TRUE(live.Write("b.json", "b").ok());
  OwnedFiles next(dir_, kRoot);
  EXPECT_THAT(next.Reclaim({}), IsEmpty());
  EXPECT_TRUE(Exists("b.json"));
  live.RemoveAll();
  EXPECT_FALSE(Exists("b.json"));
}

// Another owner (a daemon with another kubelet root) and a file rewritten since: never.
TEST_F(OwnedFilesLedgerTest, OtherOwnersAndRewrittenFilesAreNeverRemoved) {
  {
    OwnedFiles other(dir_, "/var/lib/kubelet2");
    ASSERT_TRUE(other.Write("x.json", "x").ok());
  }
  {
    OwnedFiles dead(dir_, kRoot);
    ASSERT_TRUE(dead.Write("b.json", "b").ok());
  }
  std::ofstream(dir_ + "/b.json.new") << "b2";
  fs::rename(dir_ + "/b.json.new", dir_ + "/b.json");  // someone's new inode, same name
  OwnedFiles next(dir_, kRoot);
  EXPECT_THAT(next.Reclaim({}), IsEmpty());
  EXPECT_TRUE(Exists("x.json"));
  EXPECT_TRUE(Exists("b.json"));
}

// A ledger with lines this code does not write (or a path) is never acted on.
TEST_F(OwnedFilesLedgerTest, ForeignLedgerLinesAreIgnored) {
  fs::create_directories(dir_);
  std::ofstream(dir_ + "/victim") << "v";
  struct stat st {};
  ASSERT_EQ(::stat((dir_ + "/victim").c_str(), &st), 0);
  std::ofstream(dir_ + "/.hcashare-owned._var_lib_kubelet.feed") << "hcashare owned files v1\n"
                                                                 << st.st_ino << " ../d/victim\n"
                                                                 << "junk\n";
  OwnedFiles next(dir_, kRoot);
  EXPECT_THAT(next.Reclaim({}), IsEmpty());
  EXPECT_TRUE(Exists("victim"));
}

// The real daemon, SIGKILLed and restarted with one resource fewer.
class StaleFilesDaemonTest : public testing::DaemonTest {
 protected:
  std::string TwoResources() const {
    return R"({"configList": [
      {"resourceName": "hca_shared_devices_a", "rdmaHcaMax": 3, "devices": ["ib0"]},
      {"resourceName": "gone", "rdmaHcaMax": 4, "devices": ["ib1"]}]})";
  }
  Result<Subprocess> Start(const std::string& log) {
    return Spawn({"--config", config_, "--use-cdi", "--cdi-spec-dir", tmp_.path() + "/cdi"}, log);
  }
  bool Has(const std::string& rel) const { return fs::exists(tmp_.path() + "/" + rel); }
  // "cdi/<the spec file name of rdma/`name`>" (this kubelet root's instance tag).
  std::string Spec(const std::string& name) const {
    config::ResourceConfig rc;
    rc.resource_prefix = "rdma";
    rc.resource_name = name;
    return "cdi/" + dp::CdiSpecFileName(rc, dp::CdiInstanceTag(kubelet_root_));
  }
};

TEST_F(StaleFilesDaemonTest, RestartAfterSigkillRemovesFilesOfARemovedResource) {
  ASSERT_TRUE(kubelet_->Start().ok());
  WriteConfig(TwoResources());
  {
    auto first = Start("first.log");
    ASSERT_TRUE(first.ok()) << first.status().ToString();
    ASSERT_TRUE(kubelet_->WaitFor(
        "rdma/gone", [](const fake::ResourceView& v) { return v.connected; }, milliseconds(10000)));
    ASSERT_TRUE(testing::WaitUntil([&] { return Has(Spec("gone")) && Has("pools/rdma_gone.json"); },
                                   milliseconds(10000)));
    ASSERT_TRUE(first->Signal(SIGKILL).ok());
    ASSERT_TRUE(first->Wait(milliseconds(5000)).ok());
  }
  ASSERT_TRUE(Has(Spec("gone"))) << "a SIGKILL skips the clean-up";
  WriteConfig(testing::Config(4));  // 4 IDs: the first run had 3, so 4 means the second
  auto second = Start("second.log");
  ASSERT_TRUE(second.ok());
  ASSERT_TRUE(WaitDevices(4));
  EXPECT_FALSE(Has(Spec("gone"))) << "the removed resource's CDI spec";
  EXPECT_FALSE(Has("pools/rdma_gone.json")) << "the removed resource's pool description";
  EXPECT_TRUE(Has(Spec("hca_shared_devices_a")));
  EXPECT_TRUE(Has("pools/rdma_hca_shared_devices_a.json"));
  ASSERT_TRUE(second->Signal(SIGTERM).ok());
  auto code = second->Wait(milliseconds(5000));
  ASSERT_TRUE(code.ok());
  EXPECT_EQ(*code, 0);
  EXPECT_TRUE(Has(Spec("hca_shared_devices_a"))) << "left for the next instance";
  EXPECT_TRUE(Has("pools/rdma_hca_shared_devices_a.json"));
}

}  // namespace
}  // namespace hcashare
