// Tests for daemon/probes: /healthz follows the control loop and /readyz the
// registrations, and neither waits for the loop; SIGTERM's Stop(grace) leaves a stuck loop
// behind within its bound (issue 25).
#include "daemon/probes.h"

#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <mutex>

#include <gtest/gtest.h>

#include "tests/metrics_test_util.h"
#include "tests/server_fixture.h"
#include "tests/test_util.h"

#include "http/server.h"
#include "metrics/registry.h"

namespace hcashare::dp {
namespace {

using Clock = std::chrono::steady_clock;
using testing::HttpGet;
using testing::MsSince;
using testing::WaitUntil;

// The manager with its probes served on loopback, and a config read that, once armed,
// blocks until released: the slow file system of the issue (a read that took 30 s).
class ProbeTest : public ServerTest {
 protected:
  void StartWithProbes(std::chrono::milliseconds stall_limit) {
    ASSERT_TRUE(kubelet_->Start().ok());
    const std::string config_path = tmp_.path() + "/config.json";
    std::ofstream(config_path) << TwoResources();
    daemon::ControlLoopOptions o = Options();
    o.config_path = config_path;
    o.load_config = [this](const std::string& path) {
      std::unique_lock<std::mutex> lock(mu_);
      if (armed_) {
        entered_ = true;
        cv_.notify_all();
        cv_.wait(lock, [this] { return released_; });
      }
      lock.unlock();
      return config::LoadConfigFile(path);
    };
    manager_ = StartManager(TwoResources(), o);
    auto s = HttpServer::Start(
        "127.0.0.1:0",
        [this, stall_limit](const std::string& path) {
          return daemon::ProbeEndpoint(path, registry_, *manager_, stall_limit);
        },
        daemon::ProbeServerOptions());
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    http_ = std::move(s).value();
  }
  // Makes the next config read block (a SIGHUP starts one) and waits until it does.
  void StickTheLoop() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      armed_ = true;
    }
    manager_->ReloadFromFile();
    std::unique_lock<std::mutex> lock(mu_);
    ASSERT_TRUE(cv_.wait_for(lock, std::chrono::seconds(10), [this] { return entered_; }));
  }
  void Release() {
    std::lock_guard<std::mutex> lock(mu_);
    released_ = true;
    cv_.notify_all();
  }
  void TearDown() override {
    Release();
    http_.reset();
    ServerTest::TearDown();
  }
  int Status(const std::string& path) { return HttpGet(http_->port(), path).status; }

  std::mutex mu_;
  std::condition_variable cv_;
  bool armed_ = false, entered_ = false, released_ = false;
  metrics::Registry registry_;
  daemon::ControlLoop* manager_ = nullptr;
  std::unique_ptr<HttpServer> http_;
};

// Issue 25: with the config on a file system whose reads took 30 s, a SIGHUP held the loop
// while /healthz said 200 throughout, and SIGTERM took 26 s. Now liveness fails once the
// step has run past the limit, /readyz still answers at once, and Stop(500 ms) returns
// within a second, with the resources' sockets gone.
TEST_F(ProbeTest, AStuckConfigReadFailsLivenessAndStopStaysPrompt) {
  StartWithProbes(std::chrono::milliseconds(300));
  ASSERT_TRUE(WaitUntil([&] { return Status("/readyz") == 200; }));
  EXPECT_EQ(Status("/healthz"), 200);

  StickTheLoop();
  const auto stuck = Clock::now();
  ASSERT_TRUE(WaitUntil([&] { return Status("/healthz") == 503; }, std::chrono::seconds(10)));
  EXPECT_LT(MsSince(stuck), 1500) << "liveness failed long after the 300 ms limit";
  const auto reply = HttpGet(http_->port(), "/healthz");
  EXPECT_NE(reply.body.find("reloading the config file"), std::string::npos) << reply.body;

  const auto probe = Clock::now();
  EXPECT_EQ(Status("/readyz"), 200);  // registered all along; answered without the loop
  EXPECT_LT(MsSince(probe), 300);

  const std::string socket = kubelet_root_ + "/device-plugins/hca_a.sock";
  const auto stop = Clock::now();
  EXPECT_FALSE(manager_->Stop(std::chrono::milliseconds(500)));
  EXPECT_LT(MsSince(stop), 1000);
  EXPECT_FALSE(std::filesystem::exists(socket)) << "the stuck daemon still serves";

  Release();
  EXPECT_TRUE(manager_->Stop(std::chrono::seconds(10)));  // the loop ends now; the stop completes
}

// A loop that is merely busy for less than the limit is alive.
TEST_F(ProbeTest, ABusyLoopUnderTheLimitIsAlive) {
  StartWithProbes(std::chrono::seconds(60));
  StickTheLoop();
  EXPECT_EQ(Status("/healthz"), 200);
  EXPECT_EQ(manager_->LoopBusy().second, "reloading the config file");
  EXPECT_TRUE(WaitUntil([&] { return manager_->LoopBusy().first.count() > 0; }));  // it counts
  Release();
  ASSERT_TRUE(WaitUntil([&] { return manager_->LoopBusy().first.count() == 0; }));
}

// /readyz names the unregistered resources; unknown paths are 404; /metrics is the
// registry's text.
TEST_F(ProbeTest, ReadinessListsWhatIsNotRegistered) {
  StartWithProbes(std::chrono::seconds(60));
  ASSERT_TRUE(WaitUntil([&] { return Status("/readyz") == 200; }));
  kubelet_->Stop();  // the kubelet dies: its streams end
  // Both resources' streams end; each is listed once it has.
  EXPECT_TRUE(WaitUntil(
      [&] {
        const auto r = HttpGet(http_->port(), "/readyz");
        return r.status == 503 && r.body.find(kResA) != std::string::npos &&
               r.body.find(kResB) != std::string::npos;
      },
      std::chrono::seconds(5)))
      << HttpGet(http_->port(), "/readyz").body;
  EXPECT_EQ(Status("/nope"), 404);
  EXPECT_EQ(Status("/metrics"), 200);
}

}  // namespace
}  // namespace hcashare::dp
