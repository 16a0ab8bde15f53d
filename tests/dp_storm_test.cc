// Kubelet restart storms against the real hcashare-device-plugin process (issue 9): 100
// restarts back to back, 100 at random pauses (10-200 ms after the previous
// re-registration), and 100 overlapping restarts 10-50 ms apart. Every waited-for restart
// must end re-registered with the full, healthy list; nothing may be lost. The time
// bounds are only hang guards: bench/dp_storm_bench.cc reports the latencies.
#include <signal.h>

#include <algorithm>
#include <ostream>
#include <random>

#include <gtest/gtest.h>

#include "testing/restart_storm.h"
#include "tests/daemon_fixture.h"

using std::chrono::milliseconds;

namespace hcashare {
namespace {

constexpr int kDevices = 16;

// One kind of storm: the pauses before each restart, and whether restarts overlap (hit
// the plugin while it is still re-registering; only the last one is waited for).
struct StormKind {
  const char* name;
  int min_pause_ms, max_pause_ms;
  bool overlapping;
};
// Names the kind in test listings (and so in the CTest test names).
void PrintTo(const StormKind& k, std::ostream* os) { *os << k.name; }

class StormTest : public testing::DaemonTest, public ::testing::WithParamInterface<StormKind> {
 protected:
  void SetUp() override {
    DaemonTest::SetUp();
    WriteConfig(testing::Config(kDevices));
    ASSERT_TRUE(kubelet_->Start().ok());
    auto p = Spawn({"--config", config_}, "storm.log");
    ASSERT_TRUE(p.ok());
    daemon_ = std::make_unique<Subprocess>(std::move(p).value());
    ASSERT_TRUE(WaitDevices(kDevices));
  }

  std::unique_ptr<Subprocess> daemon_;
};

TEST_P(StormTest, HundredRestartsEndReRegistered) {
  fake::StormOptions o;
  o.resource = testing::kDaemonRes;
  o.devices = kDevices;
  o.restarts = 100;
  o.min_pause = milliseconds(GetParam().min_pause_ms);
  o.max_pause = milliseconds(GetParam().max_pause_ms);
  o.overlapping = GetParam().overlapping;
  o.timeout = milliseconds(15000);
  o.stop_on_failure = true;
  o.seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(o.seed));

  const fake::StormResult r = fake::RunRestartStorm(*kubelet_, o);
  const std::string log = testing::ReadTextFile(tmp_.path() + "/storm.log");
  EXPECT_EQ(r.failed, 0) << r.first_failure << "\n"
                         << log.substr(log.size() - std::min<size_t>(log.size(), 8000));
  EXPECT_EQ(r.lost_devices, 0);
  EXPECT_EQ(r.reregister_ms.size(), o.overlapping ? 1u : 100u);
  // The daemon still serves, and exits cleanly.
  EXPECT_TRUE(kubelet_->Allocate(testing::kDaemonRes, {"0", "15"}).ok());
  ASSERT_TRUE(daemon_->Signal(SIGTERM).ok());
  EXPECT_EQ(*daemon_->Wait(milliseconds(10000)), 0);
  kubelet_->Stop();
}

INSTANTIATE_TEST_SUITE_P(Storms, StormTest,
                         ::testing::Values(StormKind{"BackToBack", 0, 0, false},
                                           StormKind{"RandomPauses", 10, 200, false},
                                           StormKind{"Overlapping", 10, 50, true}),
                         [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace hcashare
