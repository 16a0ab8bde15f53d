// The real daemon and the files it publishes (issue 25): a rolling restart (old process
// SIGTERM, then the new one starts) never has a moment without the CDI spec or the pool
// description; --uninstall removes them and nothing foreign; a restart that spells the
// kubelet root differently still cleans up; a foreign file at our spec's name stays.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/inotify.h"
#include "common/unique_fd.h"
#include "deviceplugin/cdi.h"
#include "interop/pool_info.h"
#include "tests/daemon_fixture.h"

namespace hcashare {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;
using testing::Config;
using testing::ReadTextFile;

// Records every moment a watched name leaves its directory (deleted or renamed away), on
// its own thread, from construction to Stop().
class VanishWatcher {
 public:
  VanishWatcher(const std::vector<std::string>& dirs, std::vector<std::string> names)
      : names_(std::move(names)) {
    auto w = InotifyWatcher::Create();
    EXPECT_TRUE(w.ok());
    if (!w.ok()) return;
    watcher_ = std::move(w).value();
    for (const auto& d : dirs) EXPECT_TRUE(watcher_->AddWatch(d, IN_DELETE | IN_MOVED_FROM).ok());
    thread_ = std::thread([this] { Run(); });
  }
  ~VanishWatcher() { Stop(); }

  // Stops watching; returns the names that vanished, in order.
  std::vector<std::string> Stop() {
    stop_ = true;
    if (watcher_) watcher_->Wake();
    if (thread_.joinable()) thread_.join();
    std::lock_guard<std::mutex> lock(mu_);
    return vanished_;
  }

 private:
  void Run() {
    while (!stop_) {
      auto events = watcher_->Wait(milliseconds(1000));
      if (!events.ok()) return;
      std::lock_guard<std::mutex> lock(mu_);
      for (const auto& ev : *events) {
        for (const auto& n : names_) {
          if (ev.name == n) vanished_.push_back(n);
        }
      }
    }
  }

  const std::vector<std::string> names_;
  std::unique_ptr<InotifyWatcher> watcher_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
  std::mutex mu_;
  std::vector<std::string> vanished_;  // guarded by mu_
};

class RolloutFilesTest : public testing::DaemonTest {
 protected:
  std::string CdiDir() const { return tmp_.path() + "/cdi"; }
  // The file names of resource `name` of this kubelet root.
  std::string SpecName(const std::string& name = "hca_shared_devices_a") const {
    config::ResourceConfig rc;
    rc.resource_prefix = "rdma";
    rc.resource_name = name;
    return dp::CdiSpecFileName(rc, dp::CdiInstanceTag(kubelet_root_));
  }
  std::string PoolName(const std::string& name = "hca_shared_devices_a") const {
    return PoolInfoFileName("rdma/" + name);
  }
  std::string Spec() const { return CdiDir() + "/" + SpecName(); }
  std::string Pool() const { return env_.pools + "/" + PoolName(); }

  // The daemon's command line with --kubelet-root-dir `root` and `extra`.
  std::vector<std::string> Argv(const std::string& root, std::vector<std::string> extra) const {
    extra.insert(extra.end(), {"--cdi-spec-dir", CdiDir()});
    auto argv = env_.Argv(testing::BinDir() + "/hcashare-device-plugin", extra);
    for (size_t i = 0; i + 1 < argv.size(); ++i) {
      if (argv[i] == "--kubelet-root-dir") argv[i + 1] = root;
    }
    return argv;
  }
  Result<Subprocess> Start(const std::string& log, const std::string& root = "") {
    return Subprocess::Spawn(
        Argv(root.empty() ? kubelet_root_ : root, {"--config", config_, "--use-cdi"}),
        tmp_.path() + "/" + log);
  }
  // A daemon (output in `log`) serving the 5 IDs of Config(5) to the started kubelet, with
  // its files written; nullopt, after a failure is recorded, when it does not get there.
  std::optional<Subprocess> Serve(const std::string& log) {
    WriteConfig(Config(5));
    EXPECT_TRUE(kubelet_->Start().ok());
    auto p = Start(log);
    if (!p.ok() || !WaitDevices(5) ||
        !testing::WaitUntil([&] { return fs::exists(Spec()) && fs::exists(Pool()); })) {
      ADD_FAILURE() << "not serving" << Logs({log});
      return std::nullopt;
    }
    return std::move(p).value();
  }
  // Runs --uninstall with the daemon's flags; returns its exit code (-1 if it did not end).
  int Uninstall(const std::string& log) {
    auto p = Subprocess::Spawn(Argv(kubelet_root_, {"--uninstall"}), tmp_.path() + "/" + log);
    if (!p.ok()) return -1;
    auto code = p->Wait(milliseconds(10000));
    return code.ok() ? *code : -1;
  }
  static int Stop(Subprocess& p, int sig = SIGTERM) {
    if (!p.Signal(sig).ok()) return -1;
    auto code = p.Wait(milliseconds(10000));
    return code.ok() ? *code : -1;
  }
  // The names in `dir` that start with `prefix`.
  static std::vector<std::string> Named(const std::string& dir, const std::string& prefix) {
    std::vector<std::string> out;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dir, ec)) {
      const std::string n = e.path().filename().string();
      if (n.rfind(prefix, 0) == 0) out.push_back(n);
    }
    return out;
  }
  // True when a live process holds the ledger `dir`/`name`.
  static bool Held(const std::string& dir, const std::string& name) {
    UniqueFd fd(::open((dir + "/" + name).c_str(), O_RDONLY | O_CLOEXEC));
    return fd.valid() && ::flock(fd.get(), LOCK_EX | LOCK_NB) != 0;
  }
  std::string Logs(const std::vector<std::string>& logs) const {
    std::string out;
    for (const auto& l : logs) out += "\n" + l + ":\n" + ReadTextFile(tmp_.path() + "/" + l);
    return out;
  }
};

// Item 4: the DaemonSet's rolling update (the old pod ends before the new one starts)
// leaves the CDI spec and the pool description in place the whole time; the new instance
// owns them again. Then the documented uninstall removes them.
TEST_F(RolloutFilesTest, RollingRestartNeverRemovesTheFiles) {
  auto old_p = Serve("old.log");
  ASSERT_TRUE(old_p);
  VanishWatcher watcher({CdiDir(), env_.pools}, {SpecName(), PoolName()});

  EXPECT_EQ(Stop(*old_p), 0);
  EXPECT_TRUE(fs::exists(Spec()) && fs::exists(Pool())) << "between the two pods";
  auto new_p = Start("new.log");
  ASSERT_TRUE(new_p.ok());
  ASSERT_TRUE(kubelet_->WaitFor(
      testing::kDaemonRes,
      [](const fake::ResourceView& v) {
        return v.registrations == 2 && v.connected && v.devices.size() == 5;
      },
      milliseconds(10000)));
  EXPECT_THAT(watcher.Stop(), ::testing::IsEmpty())
      << "a moment without the file" << Logs({"old.log", "new.log"});
  auto spec = nlohmann::json::parse(ReadTextFile(Spec()), nullptr, false);
  ASSERT_FALSE(spec.is_discarded());
  EXPECT_EQ(spec["kind"], testing::kDaemonRes);
  ASSERT_TRUE(ParsePoolInfo(ReadTextFile(Pool())).ok());
  // The new instance took the old one's ledger over: one ledger per directory, held.
  for (const std::string& dir : {CdiDir(), env_.pools}) {
    const auto ledgers = Named(dir, ".hcashare-owned.");
    ASSERT_EQ(ledgers.size(), 1u) << dir;
    EXPECT_TRUE(Held(dir, ledgers[0])) << dir;
  }
  EXPECT_EQ(Stop(*new_p), 0);
  EXPECT_TRUE(fs::exists(Spec()) && fs::exists(Pool())) << "left for the next instance";
  EXPECT_EQ(Uninstall("uninstall.log"), 0) << Logs({"uninstall.log"});
  EXPECT_FALSE(fs::exists(Spec()));
  EXPECT_FALSE(fs::exists(Pool()));
}

// Item 4: --uninstall removes every file of this kubelet root's daemons and their ledgers,
// nothing foreign (another vendor's spec, another root's files); while the daemon runs it
// removes nothing and fails.
TEST_F(RolloutFilesTest, UninstallRemovesOursAndNothingForeign) {
  auto p = Serve("daemon.log");
  ASSERT_TRUE(p);
  std::ofstream(CdiDir() + "/vendor-other.json") << "{}";
  std::ofstream(CdiDir() + "/hcashare-rdma_other.json") << "{}";
  std::ofstream(env_.pools + "/rdma_other.json") << "{}";
  const std::string spec_before = ReadTextFile(Spec());

  EXPECT_EQ(Uninstall("refused.log"), 1);
  EXPECT_NE(ReadTextFile(tmp_.path() + "/refused.log").find("held by a running"), std::string::npos)
      << Logs({"refused.log"});
  EXPECT_EQ(ReadTextFile(Spec()), spec_before) << "nothing removed while the daemon runs";
  EXPECT_TRUE(fs::exists(Pool()));

  EXPECT_EQ(Stop(*p), 0);
  EXPECT_EQ(Uninstall("uninstall.log"), 0) << Logs({"uninstall.log"});
  EXPECT_FALSE(fs::exists(Spec()));
  EXPECT_FALSE(fs::exists(Pool()));
  EXPECT_THAT(Named(CdiDir(), ".hcashare-owned."), ::testing::IsEmpty());
  EXPECT_THAT(Named(env_.pools, ".hcashare-owned."), ::testing::IsEmpty());
  EXPECT_TRUE(fs::exists(CdiDir() + "/vendor-other.json"));
  EXPECT_TRUE(fs::exists(CdiDir() + "/hcashare-rdma_other.json"));
  EXPECT_TRUE(fs::exists(env_.pools + "/rdma_other.json"));
  EXPECT_EQ(Uninstall("again.log"), 0) << "nothing left to do is fine";
}

// Item 1: SIGKILL, then a restart whose --kubelet-root-dir is a symlink to the same root
// with a trailing '/': the same owner, so the removed resource's files go.
TEST_F(RolloutFilesTest, RestartWithAnotherSpellingOfTheRootCleansUp) {
  ASSERT_TRUE(kubelet_->Start().ok());
  WriteConfig(R"({"configList": [
    {"resourceName": "hca_shared_devices_a", "rdmaHcaMax": 3, "devices": ["ib0"]},
    {"resourceName": "gone", "rdmaHcaMax": 4, "devices": ["ib1"]}]})");
  {
    auto first = Start("first.log");
    ASSERT_TRUE(first.ok());
    ASSERT_TRUE(WaitDevices(3));
    ASSERT_TRUE(
        testing::WaitUntil([&] { return fs::exists(env_.pools + "/" + PoolName("gone")); }));
    EXPECT_EQ(Stop(*first, SIGKILL), 128 + SIGKILL);
  }
  ASSERT_TRUE(fs::exists(CdiDir() + "/" + SpecName("gone")));
  fs::create_directory_symlink(kubelet_root_, tmp_.path() + "/kubelet-link");
  WriteConfig(Config(4));
  auto second = Start("second.log", tmp_.path() + "/kubelet-link/");
  ASSERT_TRUE(second.ok());
  ASSERT_TRUE(WaitDevices(4));
  EXPECT_FALSE(fs::exists(env_.pools + "/" + PoolName("gone"))) << Logs({"second.log"});
  EXPECT_FALSE(fs::exists(CdiDir() + "/" + SpecName("gone")));
  EXPECT_TRUE(fs::exists(Spec()));
  EXPECT_EQ(Stop(*second), 0);
}

// Item 3: a file we did not write at our spec's name is never overwritten or removed;
// Allocate says why the resource's CDI names cannot work.
TEST_F(RolloutFilesTest, ForeignSpecIsLeftAloneAndAllocateSaysWhy) {
  fs::create_directories(CdiDir());
  std::ofstream(Spec()) << "{\"theirs\": true}\n";
  auto p = Serve("daemon.log");
  ASSERT_TRUE(p);
  auto resp = kubelet_->Allocate(testing::kDaemonRes, {"0"});
  ASSERT_FALSE(resp.ok()) << "Allocate answered with CDI names no spec defines";
  EXPECT_NE(resp.status().message().find(Spec()), std::string::npos) << resp.status().ToString();
  EXPECT_EQ(Stop(*p), 0);
  EXPECT_EQ(ReadTextFile(Spec()), "{\"theirs\": true}\n");
  const std::string log = ReadTextFile(tmp_.path() + "/daemon.log");
  EXPECT_NE(log.find("a file this daemon did not write holds its name"), std::string::npos) << log;
}

}  // namespace
}  // namespace hcashare
