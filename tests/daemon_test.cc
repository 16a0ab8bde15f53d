// Process-level tests of the hcashare-device-plugin binary: flags, exit codes, signals
// (SIGHUP reload, SIGTERM), kubelet restarts and a rollout overlap of two processes.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "deviceplugin/cdi.h"
#include "node/socket_files.h"
#include "tests/daemon_fixture.h"
#include "tests/support/http_get.h"

namespace fs = std::filesystem;
using std::chrono::milliseconds;

namespace hcashare {
namespace {

using testing::Config;
using testing::DaemonTest;
using testing::HttpGet;

constexpr const char* kRes = testing::kDaemonRes;

// --version prints the version and exits 0; an unknown flag exits 2.
TEST_F(DaemonTest, VersionAndBadFlag) {
  auto p = Spawn({"--version"}, "version.log");
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(*p->Wait(milliseconds(10000)), 0);
  EXPECT_NE(testing::ReadTextFile(tmp_.path() + "/version.log").find("hcashare-device-plugin 0."),
            std::string::npos);
  auto bad = Spawn({"--no-such-flag"}, "bad.log");
  ASSERT_TRUE(bad.ok());
  EXPECT_EQ(*bad->Wait(milliseconds(10000)), 2);
}

// An invalid config exits 2 and prints every error with its JSON path.
TEST_F(DaemonTest, InvalidConfigExitsTwoListingEveryError) {
  WriteConfig(R"({"periodicUpdateInterval": -5, "configList": [
    {"resourceName": "bad$name", "rdmaHCAmax": 3, "devices": ["ib0"]}]})");
  auto p = Spawn({"--config", config_}, "invalid.log");
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(*p->Wait(milliseconds(10000)), 2);
  std::string log = testing::ReadTextFile(tmp_.path() + "/invalid.log");
  EXPECT_NE(log.find("$.periodicUpdateInterval"), std::string::npos) << log;
  EXPECT_NE(log.find("$.configList[0].resourceName"), std::string::npos) << log;
  EXPECT_NE(log.find("rdmaHcaMax"), std::string::npos) << log;
  EXPECT_FALSE(fs::exists(kubelet_root_ + "/device-plugins/hca_shared_devices_a.sock"));
}

// The start-up record's value of `key` (JSON logs in `log`), or "".
std::string StartupField(const std::string& log, const std::string& key) {
  std::istringstream lines(log);
  std::string line;
  while (std::getline(lines, line)) {
    auto rec = nlohmann::json::parse(line, nullptr, false);
    if (rec.is_object() && rec.value("msg", "") == "starting hcashare-device-plugin") {
      return rec.value(key, "");
    }
  }
  return "";
}

// --device-plugin-dir is a flag of its own: a kubelet keeps device-plugins/ at
// /var/lib/kubelet/device-plugins whatever its --root-dir, so another --kubelet-root-dir
// leaves it there (read from the start-up record: an empty config stops the daemon before
// it touches a directory).
TEST_F(DaemonTest, DevicePluginDirDefaultIgnoresTheKubeletRoot) {
  WriteConfig("{}");
  auto p = Subprocess::Spawn(
      {testing::BinDir() + "/hcashare-device-plugin", "--kubelet-root-dir", kubelet_root_,
       "--host-root", host_root_, "--config", config_, "--log-format", "json"},
      tmp_.path() + "/default.log");
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(*p->Wait(milliseconds(10000)), 2);
  const std::string log = testing::ReadTextFile(tmp_.path() + "/default.log");
  EXPECT_EQ(StartupField(log, "kubelet_root"), kubelet_root_) << log;
  EXPECT_EQ(StartupField(log, "device_plugin_dir"), "/var/lib/kubelet/device-plugins") << log;
}

// Given, the daemon registers on the kubelet.sock in that directory and serves its socket
// beside it, with nothing under <kubelet root>/device-plugins.
TEST_F(DaemonTest, RegistersInTheGivenDevicePluginDir) {
  const std::string dir = tmp_.path() + "/fixed/device-plugins";
  kubelet_ = std::make_unique<fake::FakeKubelet>(kubelet_root_, dir);
  ASSERT_TRUE(kubelet_->Start().ok());
  WriteConfig(Config(5));
  std::vector<std::string> argv =
      env_.Argv(testing::BinDir() + "/hcashare-device-plugin", {"--config", config_});
  auto flag = std::find(argv.begin(), argv.end(), "--device-plugin-dir");
  ASSERT_NE(flag, argv.end());
  *(flag + 1) = dir;
  auto p = Subprocess::Spawn(argv, tmp_.path() + "/dir.log");
  ASSERT_TRUE(p.ok());
  ASSERT_TRUE(WaitDevices(5)) << testing::ReadTextFile(tmp_.path() + "/dir.log");
  EXPECT_EQ(kubelet_->View(kRes).endpoint, dir + "/hca_shared_devices_a.sock");
  EXPECT_FALSE(fs::exists(kubelet_root_ + "/device-plugins"));
  ASSERT_TRUE(p->Signal(SIGTERM).ok());
  EXPECT_EQ(*p->Wait(milliseconds(10000)), 0);
  EXPECT_FALSE(fs::exists(dir + "/hca_shared_devices_a.sock"));
  kubelet_->Stop();
}

// The Mellanox flag spelling (-config-file) works; SIGTERM exits 0 and removes the socket.
TEST_F(DaemonTest, MellanoxFlagAndCleanSigterm) {
  WriteConfig(Config(5));
  ASSERT_TRUE(kubelet_->Start().ok());
  auto p = Spawn({"-config-file", config_}, "run.log");
  ASSERT_TRUE(p.ok());
  ASSERT_TRUE(WaitDevices(5)) << testing::ReadTextFile(tmp_.path() + "/run.log");
  ASSERT_TRUE(p->Signal(SIGTERM).ok());
  EXPECT_EQ(*p->Wait(milliseconds(10000)), 0);
  EXPECT_FALSE(fs::exists(kubelet_root_ + "/device-plugins/hca_shared_devices_a.sock"));
  kubelet_->Stop();
}

// SIGHUP applies a valid new config; an invalid one is rejected and the old one kept.
TEST_F(DaemonTest, SighupReload) {
  WriteConfig(Config(5));
  ASSERT_TRUE(kubelet_->Start().ok());
  auto p = Spawn({"--config", config_}, "hup.log");
  ASSERT_TRUE(p.ok());
  ASSERT_TRUE(WaitDevices(5));
  WriteConfig(Config(9));
  ASSERT_TRUE(p->Signal(SIGHUP).ok());
  ASSERT_TRUE(WaitDevices(9)) << testing::ReadTextFile(tmp_.path() + "/hup.log");
  WriteConfig(R"({"configList": [{"resourceName": "hca_shared_devices_a"}]})");
  ASSERT_TRUE(p->Signal(SIGHUP).ok());
  // The daemon has read the bad config and turned it down: only now can it be checked
  // that the rejection changed nothing.
  std::string log;
  EXPECT_TRUE(testing::WaitUntil([&] {
    log = testing::ReadTextFile(tmp_.path() + "/hup.log");
    return log.find("new config rejected") != std::string::npos;
  })) << log;
  EXPECT_FALSE(p->Wait(milliseconds(0)).ok()) << "the daemon must survive a bad reload";
  EXPECT_EQ(kubelet_->View(kRes).devices.size(), 9u);
  EXPECT_TRUE(kubelet_->Allocate(kRes, {"8"}).ok());
  ASSERT_TRUE(p->Signal(SIGTERM).ok());
  EXPECT_EQ(*p->Wait(milliseconds(10000)), 0);
  kubelet_->Stop();
}

// A kubelet restart against the real process: kubelet.sock's re-creation alone brings the
// re-registration (no health poll, and the periodic rescan is a minute away), with the full
// list. bench/dp_storm_bench measures how fast.
TEST_F(DaemonTest, KubeletRestart) {
  WriteConfig(Config(5));
  ASSERT_TRUE(kubelet_->Start().ok());
  auto p = Spawn({"--config", config_, "--health-poll-interval", "0"}, "restart.log");
  ASSERT_TRUE(p.ok());
  ASSERT_TRUE(WaitDevices(5));
  ASSERT_TRUE(kubelet_->Restart().ok());
  ASSERT_TRUE(kubelet_->WaitFor(
      kRes,
      [](const fake::ResourceView& v) {
        return v.registrations >= 2 && v.connected && v.devices.size() == 5;
      },
      milliseconds(10000)))
      << testing::ReadTextFile(tmp_.path() + "/restart.log");
  ASSERT_TRUE(p->Signal(SIGTERM).ok());
  EXPECT_EQ(*p->Wait(milliseconds(10000)), 0);
  kubelet_->Stop();
}

// DaemonSet overlap: old and new processes (same config, same kubelet, CDI and pool-info
// directories) run at once; the new one registers and its socket replaces the old one's;
// then the old one terminates. Its shutdown must leave the new instance's socket, CDI spec
// and pool description in place, and the kubelet keeps the new one's open ListAndWatch and
// full list. The parameter: whether the old one gets its SIGTERM only once it has noticed
// the new one and stands by. The old one polls health every 50 ms, so it republishes (and
// is tempted to rewrite the shared files) meanwhile; the new one does not poll, so it would
// not repair a file deleted under it.
class OverlapTest : public DaemonTest, public ::testing::WithParamInterface<bool> {
 protected:
  Result<Subprocess> SpawnInstance(const std::string& log, const std::string& health_poll) {
    return Spawn({"--config", config_, "--use-cdi", "--cdi-spec-dir", tmp_.path() + "/cdi",
                  "--health-poll-interval", health_poll, "--log-level", "debug"},
                 log);
  }
  std::string Socket() const { return kubelet_root_ + "/device-plugins/hca_shared_devices_a.sock"; }
  std::string CdiSpec() const {
    return tmp_.path() + "/cdi/hcashare-rdma_hca_shared_devices_a." +
           dp::CdiInstanceTag(kubelet_root_) + ".json";
  }
  std::string PoolInfo() const { return tmp_.path() + "/pools/rdma_hca_shared_devices_a.json"; }
};

TEST_P(OverlapTest, OldInstanceExitLeavesNewRegistration) {
  WriteConfig(Config(5));
  ASSERT_TRUE(kubelet_->Start().ok());
  auto old_p = SpawnInstance("old.log", "0.05");
  ASSERT_TRUE(old_p.ok());
  ASSERT_TRUE(WaitDevices(5));
  ASSERT_TRUE(fs::exists(CdiSpec()) && fs::exists(PoolInfo()));
  auto new_p = SpawnInstance("new.log", "0");
  ASSERT_TRUE(new_p.ok());
  ASSERT_TRUE(kubelet_->WaitFor(
      kRes,
      [](const fake::ResourceView& v) {
        return v.registrations == 2 && v.connected && v.devices.size() == 5;
      },
      milliseconds(5000)));
  const bool standing_by = GetParam();
  if (standing_by) {
    ASSERT_TRUE(testing::WaitUntil([&] {
      return testing::ReadTextFile(tmp_.path() + "/old.log").find("standing by") !=
             std::string::npos;
    })) << testing::ReadTextFile(tmp_.path() + "/old.log");
  }
  const auto before = kubelet_->View(kRes);
  const ino_t socket_inode = node::InodeOf(Socket());
  ASSERT_NE(socket_inode, 0u);

  ASSERT_TRUE(old_p->Signal(SIGTERM).ok());
  EXPECT_EQ(*old_p->Wait(milliseconds(10000)), 0);
  // The new instance has handled what the old one's exit caused (file events in the
  // directories it watches) once its loop has served a later request: a SIGHUP, whose
  // reload of the same file it logs as unchanged.
  ASSERT_TRUE(new_p->Signal(SIGHUP).ok());
  EXPECT_TRUE(testing::WaitUntil([&] {
    return testing::ReadTextFile(tmp_.path() + "/new.log").find("config file unchanged") !=
           std::string::npos;
  })) << testing::ReadTextFile(tmp_.path() + "/new.log");
  const std::string logs = "\nold:\n" + testing::ReadTextFile(tmp_.path() + "/old.log") +
                           "\nnew:\n" + testing::ReadTextFile(tmp_.path() + "/new.log");
  EXPECT_EQ(node::InodeOf(Socket()), socket_inode) << "the new instance's socket" << logs;
  EXPECT_TRUE(fs::exists(CdiSpec())) << logs;
  EXPECT_TRUE(fs::exists(PoolInfo())) << logs;
  const auto after = kubelet_->View(kRes);
  EXPECT_TRUE(after.connected) << logs;
  EXPECT_EQ(after.registrations, before.registrations) << "no re-registration needed" << logs;
  EXPECT_EQ(after.devices.size(), 5u);
  EXPECT_TRUE(kubelet_->Allocate(kRes, {"0"}).ok());
  if (standing_by) {
    EXPECT_NE(logs.find("standing by"), std::string::npos) << logs;
  }
  // The new instance's shutdown removes its socket and leaves the files for the next one.
  ASSERT_TRUE(new_p->Signal(SIGTERM).ok());
  EXPECT_EQ(*new_p->Wait(milliseconds(10000)), 0);
  EXPECT_FALSE(fs::exists(Socket()));
  EXPECT_TRUE(fs::exists(CdiSpec()));
  EXPECT_TRUE(fs::exists(PoolInfo()));
  kubelet_->Stop();
}

// SIGTERM at once (the old one may not have noticed the new one yet), and once it stands by.
INSTANTIATE_TEST_SUITE_P(Overlap, OverlapTest, ::testing::Bool());

// --metrics-address serves Prometheus metrics and the probes of the running daemon.
TEST_F(DaemonTest, MetricsAndProbes) {
  WriteConfig(Config(5));
  ASSERT_TRUE(kubelet_->Start().ok());
  auto p = Spawn({"--config", config_, "--metrics-address", "127.0.0.1:0"}, "metrics.log");
  ASSERT_TRUE(p.ok());
  ASSERT_TRUE(WaitDevices(5));
  std::string log = testing::ReadTextFile(tmp_.path() + "/metrics.log");
  auto at = log.find("serving metrics and probes");
  ASSERT_NE(at, std::string::npos) << log;
  auto port_at = log.find("port=", at);
  ASSERT_NE(port_at, std::string::npos);
  const int port = std::atoi(log.c_str() + port_at + 5);
  ASSERT_TRUE(kubelet_->Allocate(kRes, {"1"}).ok());
  ASSERT_FALSE(kubelet_->Allocate(kRes, {"99"}).ok());

  // Registration is counted when Register returns, after the kubelet (which dials back
  // inside Register) has listed the devices; /readyz follows it.
  std::string metrics;
  ASSERT_TRUE(testing::WaitUntil([&] {
    metrics = HttpGet(port, "/metrics");
    return metrics.find("hcashare_registrations_total{resource=\"rdma/hca_shared_devices_a\"} 1") !=
           std::string::npos;
  })) << metrics;
  EXPECT_NE(metrics.find("HTTP/1.1 200"), std::string::npos) << metrics;
  EXPECT_NE(metrics.find("hcashare_devices_advertised{resource=\"rdma/hca_shared_devices_a\"} 5"),
            std::string::npos)
      << metrics;
  EXPECT_NE(metrics.find("hcashare_devices_healthy{resource=\"rdma/hca_shared_devices_a\"} 5"),
            std::string::npos);
  EXPECT_NE(metrics.find("hcashare_allocations_total{resource=\"rdma/hca_shared_devices_a\","
                         "result=\"ok\"} 1"),
            std::string::npos)
      << metrics;
  EXPECT_NE(metrics.find("result=\"error\"} 1"), std::string::npos);
  EXPECT_NE(metrics.find("hcashare_allocate_duration_seconds_count{resource="), std::string::npos);
  // At least the start-up scan: a uevent on a busy test machine may add more.
  const std::string sample = "\nhcashare_rescans_total ";  // not the # HELP/# TYPE lines
  const auto rescans = metrics.find(sample);
  ASSERT_NE(rescans, std::string::npos) << metrics;
  EXPECT_GE(std::atoi(metrics.c_str() + rescans + sample.size()), 1) << metrics;
  EXPECT_NE(metrics.find("hcashare_config_reloads_total{result=\"ok\"} 0"), std::string::npos);
  EXPECT_NE(HttpGet(port, "/healthz").find("HTTP/1.1 200"), std::string::npos);
  EXPECT_NE(HttpGet(port, "/readyz").find("HTTP/1.1 200"), std::string::npos);
  EXPECT_NE(HttpGet(port, "/nope").find("HTTP/1.1 404"), std::string::npos);

  // The kubelet goes away for good: not ready any more.
  kubelet_->Stop();
  fs::remove(kubelet_root_ + "/device-plugins/hca_shared_devices_a.sock");
  std::string ready;
  for (int i = 0; i < 100; ++i) {
    ready = HttpGet(port, "/readyz");
    if (ready.find("HTTP/1.1 503") != std::string::npos) break;
    std::this_thread::sleep_for(milliseconds(50));
  }
  EXPECT_NE(ready.find("HTTP/1.1 503"), std::string::npos) << ready;
  ASSERT_TRUE(p->Signal(SIGTERM).ok());
  EXPECT_EQ(*p->Wait(milliseconds(10000)), 0);
}

}  // namespace
}  // namespace hcashare
