// Process-level tests of the hcashare-device-plugin binary: flags, exit codes, signals
// (SIGHUP reload, SIGTERM), kubelet restarts and a rollout overlap of two processes.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>

#include "common/sim_node.h"
#include "common/subprocess.h"
#include "common/temp_dir.h"
#include "tests/test_util.h"
#include "tools/fake_kubelet.h"

namespace fs = std::filesystem;
using std::chrono::milliseconds;

namespace hcashare {
namespace {

using testing::BinDir;

constexpr const char* kRes = "rdma/hca_shared_devices_a";

std::string Config(int max) {
  return R"({"configList": [{"resourceName": "hca_shared_devices_a", "rdmaHcaMax": )" +
         std::to_string(max) + R"(, "devices": ["ib0", "ib1"]}]})";
}

class DaemonTest : public ::testing::Test {
 protected:
  void SetUp() override {
    host_root_ = tmp_.path() + "/host";
    kubelet_root_ = tmp_.path() + "/kubelet";
    config_ = tmp_.path() + "/config.json";
    SimNode node(host_root_);
    ASSERT_TRUE(node.PopulateDemo().ok());
    kubelet_ = std::make_unique<fake::FakeKubelet>(kubelet_root_);
  }

  void WriteConfig(const std::string& text) { std::ofstream(config_) << text; }

  Result<Subprocess> Spawn(const std::vector<std::string>& extra, const std::string& log) {
    std::vector<std::string> argv = {BinDir() + "/hcashare-device-plugin",
                                     "--host-root",
                                     host_root_,
                                     "--kubelet-root-dir",
                                     kubelet_root_,
                                     "--pool-info-dir",
                                     tmp_.path() + "/pools"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    return Subprocess::Spawn(argv, tmp_.path() + "/" + log);
  }

  bool WaitDevices(size_t n, milliseconds t = milliseconds(10000)) {
    return kubelet_->WaitFor(
        kRes, [&](const fake::ResourceView& v) { return v.connected && v.devices.size() == n; }, t);
  }

  TempDir tmp_;
  std::string host_root_, kubelet_root_, config_;
  std::unique_ptr<fake::FakeKubelet> kubelet_;
};

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
  std::this_thread::sleep_for(milliseconds(500));
  EXPECT_FALSE(p->Wait(milliseconds(10)).ok()) << "the daemon must survive a bad reload";
  EXPECT_EQ(kubelet_->View(kRes).devices.size(), 9u);
  EXPECT_TRUE(kubelet_->Allocate(kRes, {"8"}).ok());
  std::string log = testing::ReadTextFile(tmp_.path() + "/hup.log");
  EXPECT_NE(log.find("new config rejected"), std::string::npos) << log;
  ASSERT_TRUE(p->Signal(SIGTERM).ok());
  EXPECT_EQ(*p->Wait(milliseconds(10000)), 0);
  kubelet_->Stop();
}

// A kubelet restart against the real process: re-registered in under a second.
TEST_F(DaemonTest, KubeletRestart) {
  WriteConfig(Config(5));
  ASSERT_TRUE(kubelet_->Start().ok());
  auto p = Spawn({"--config", config_}, "restart.log");
  ASSERT_TRUE(p.ok());
  ASSERT_TRUE(WaitDevices(5));
  auto t0 = std::chrono::steady_clock::now();
  ASSERT_TRUE(kubelet_->Restart().ok());
  ASSERT_TRUE(kubelet_->WaitFor(
      kRes,
      [](const fake::ResourceView& v) {
        return v.registrations >= 2 && v.connected && v.devices.size() == 5;
      },
      milliseconds(5000)))
      << testing::ReadTextFile(tmp_.path() + "/restart.log");
  EXPECT_LT(std::chrono::steady_clock::now() - t0, milliseconds(1000));
  ASSERT_TRUE(p->Signal(SIGTERM).ok());
  EXPECT_EQ(*p->Wait(milliseconds(10000)), 0);
  kubelet_->Stop();
}

// Rollout overlap: old and new processes run at once; the old one terminates; the new
// one's socket and registration survive.
TEST_F(DaemonTest, RolloutOverlap) {
  WriteConfig(Config(5));
  ASSERT_TRUE(kubelet_->Start().ok());
  auto old_p = Spawn({"--config", config_}, "old.log");
  ASSERT_TRUE(old_p.ok());
  ASSERT_TRUE(WaitDevices(5));
  auto new_p = Spawn({"--config", config_}, "new.log");
  ASSERT_TRUE(new_p.ok());
  ASSERT_TRUE(kubelet_->WaitFor(
      kRes, [](const fake::ResourceView& v) { return v.registrations >= 2 && v.connected; },
      milliseconds(5000)));
  std::this_thread::sleep_for(milliseconds(2500));  // let the old one notice and stand by
  ASSERT_TRUE(old_p->Signal(SIGTERM).ok());
  EXPECT_EQ(*old_p->Wait(milliseconds(10000)), 0);
  EXPECT_TRUE(fs::exists(kubelet_root_ + "/device-plugins/hca_shared_devices_a.sock"));
  std::this_thread::sleep_for(milliseconds(500));
  EXPECT_TRUE(kubelet_->View(kRes).connected) << testing::ReadTextFile(tmp_.path() + "/new.log");
  EXPECT_TRUE(kubelet_->Allocate(kRes, {"0"}).ok());
  EXPECT_NE(testing::ReadTextFile(tmp_.path() + "/old.log").find("standing by"), std::string::npos);
  ASSERT_TRUE(new_p->Signal(SIGTERM).ok());
  EXPECT_EQ(*new_p->Wait(milliseconds(10000)), 0);
  EXPECT_FALSE(fs::exists(kubelet_root_ + "/device-plugins/hca_shared_devices_a.sock"));
  kubelet_->Stop();
}

// A plain HTTP GET to 127.0.0.1:`port`; returns the whole response ("" on failure).
std::string HttpGet(int port, const std::string& path) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return "";
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::string out;
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0) {
    std::string req = "GET " + path + " HTTP/1.1\r\nHost: localhost\r\n\r\n";
    if (::send(fd, req.data(), req.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(req.size())) {
      char buf[4096];
      ssize_t n;
      while ((n = ::recv(fd, buf, sizeof(buf), 0)) > 0) out.append(buf, static_cast<size_t>(n));
    }
  }
  ::close(fd);
  return out;
}

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

  std::string metrics = HttpGet(port, "/metrics");
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
  EXPECT_NE(metrics.find("hcashare_registrations_total{resource=\"rdma/hca_shared_devices_a\"} 1"),
            std::string::npos);
  EXPECT_NE(metrics.find("hcashare_rescans_total 1"), std::string::npos);
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
