// Hot-unplug without a uevent until the kubelet hears of it, and the churn it causes in an
// unrelated pool. An HCA of pool b is removed from the fixture tree at a random phase of
// the rescan timer (no uevent: as when the uevent is lost or the daemon's netlink socket
// overflowed), and the time until the fake kubelet receives b's changed list is taken. Pool a
// (another HCA) must receive nothing meanwhile. Run once per (rescan interval, health
// poll) pair given.
// Run: build/bin/unplug_bench [--rounds 20] [--interval 1] [--health-poll 2]
#include <algorithm>
#include <cstdio>
#include <random>
#include <thread>

#include <CLI/CLI.hpp>

#include "bench/bench_util.h"
#include "common/host.h"
#include "common/log.h"
#include "common/temp_dir.h"
#include "common/uevent.h"
#include "config/config.h"
#include "daemon/control_loop.h"
#include "deviceplugin/allocation.h"
#include "nl/rdma_netlink.h"
#include "testing/fake_kubelet.h"
#include "testing/fake_rdma_system.h"
#include "testing/fake_uevent_source.h"
#include "testing/sim_node.h"

namespace hcashare {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr const char* kHcaA = "0000:3b:00.0";
constexpr const char* kHcaB = "0000:86:00.0";

int Main(int argc, char** argv) {
  int rounds = 20;
  int interval = 1;
  double poll_seconds = 2;
  CLI::App app{"unplug_bench: hot-unplug without a uevent -> ListAndWatch, and churn"};
  app.add_option("--rounds", rounds, "removals to measure")->capture_default_str();
  app.add_option("--interval", interval, "periodicUpdateInterval, seconds")->capture_default_str();
  app.add_option("--health-poll", poll_seconds, "health poll, seconds (0 = off; daemon: 2)")
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  SetLogLevel(LogLevel::kError);

  TempDir tmp("hcashare-unplug-");
  fake::SimNode node(tmp.path() + "/host");
  if (!node.AddPciFunction(fake::SimNode::IbHca(kHcaA, "ib0", "mlx5_0", 0)).ok()) return 1;
  if (!node.AddPciFunction(fake::SimNode::IbHca(kHcaB, "ib1", "mlx5_1", 1)).ok()) return 1;
  auto host = NewRootedHost(tmp.path() + "/host");
  fake::FakeKubelet kubelet(tmp.path() + "/kubelet");
  if (!kubelet.Start().ok()) return 1;
  fake::FakeRdmaSystem rdma(Status::Unavailable("bench"));
  fake::FakeUeventSource uevents;  // never fires: the removal has no uevent
  daemon::ControlLoopOptions opts;
  opts.server.kubelet_root = tmp.path() + "/kubelet";
  opts.server.device_plugin_dir = opts.server.kubelet_root + "/device-plugins";
  opts.server.mode = dp::RegistrationMode::kKubelet;
  opts.health_poll_interval = milliseconds(static_cast<int>(poll_seconds * 1000));
  daemon::ControlLoop manager(opts, *host, rdma, &uevents);
  auto cfg = config::ParseConfig(R"({"periodicUpdateInterval": )" + std::to_string(interval) +
                                 R"(, "configList": [
    {"resourceName": "a", "rdmaHcaMax": 100, "selectors": {"rdmaDevices": ["mlx5_0"]}},
    {"resourceName": "b", "rdmaHcaMax": 100, "selectors": {"rdmaDevices": ["mlx5_1"]}}]})");
  if (!cfg.ok() || !manager.Start(*cfg.config).ok()) return 1;
  auto health_is = [](const char* h) {
    return [h](const fake::ResourceView& v) { return fake::AllDevices(v, h); };
  };
  if (!kubelet.WaitFor("rdma/a", health_is(dp::kHealthy), milliseconds(10000)) ||
      !kubelet.WaitFor("rdma/b", health_is(dp::kHealthy), milliseconds(10000))) {
    return 1;
  }
  const int a_lists = kubelet.View("rdma/a").lists_received;
  std::mt19937 rng(42);
  const int period_ms = std::max(1, static_cast<int>(interval * 1000));
  std::uniform_int_distribution<int> phase(0, period_ms - 1);
  std::vector<double> unplug;
  for (int i = 0; i < rounds; ++i) {
    // A random phase of the rescan timer (not synchronisation: the removal is unannounced).
    std::this_thread::sleep_for(milliseconds(phase(rng)));
    auto t0 = Clock::now();
    (void)node.RemovePciFunction(kHcaB);
    if (!kubelet.WaitFor("rdma/b", health_is(dp::kUnhealthy), milliseconds(120000))) {
      std::fprintf(stderr, "round %d: the removal never reached the kubelet\n", i);
      return 1;
    }
    unplug.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
    (void)node.AddPciFunction(fake::SimNode::IbHca(kHcaB, "ib1", "mlx5_1", 1));
    if (!kubelet.WaitFor("rdma/b", health_is(dp::kHealthy), milliseconds(120000))) return 1;
  }
  std::printf(
      "unplug_no_uevent_to_listandwatch interval=%ds health_poll=%.1fs: n=%zu p50=%.0f ms "
      "p99=%.0f ms max=%.0f ms\n",
      interval, poll_seconds, unplug.size(), bench::Percentile(unplug, 0.5),
      bench::Percentile(unplug, 0.99), *std::max_element(unplug.begin(), unplug.end()));
  std::printf("unrelated_pool_lists_per_cycle: %.2f (%d over %d unplug/replug cycles)\n",
              static_cast<double>(kubelet.View("rdma/a").lists_received - a_lists) / rounds,
              kubelet.View("rdma/a").lists_received - a_lists, rounds);
  manager.Stop();
  kubelet.Stop();
  return 0;
}

}  // namespace
}  // namespace hcashare

int main(int argc, char** argv) { return hcashare::Main(argc, argv); }
