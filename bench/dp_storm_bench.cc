// Kubelet restart storm against the real hcashare-device-plugin process (issue 9): the
// fake kubelet restarts (stop, sockets wiped, new kubelet.sock) N times back to back, N
// times at random pauses after each re-registration, and N times overlapping (restarts
// 10-50 ms apart, only the last waited for). Prints the re-registration time (Restart()
// call -> full list received on the new registration) p50/p99/max and lost devices.
// Run: build/bin/dp_storm_bench [--restarts 100] [--min-pause 10] [--max-pause 500]
#include <signal.h>

#include <cstdio>
#include <iostream>
#include <random>

#include <CLI/CLI.hpp>

#include "bench/bench_util.h"
#include "bench/daemon_env.h"
#include "testing/fake_kubelet.h"
#include "testing/restart_storm.h"

namespace hcashare {
namespace {

using std::chrono::milliseconds;

constexpr const char* kResource = "rdma/hca_a";
constexpr int kDevices = 1000;

void Report(const char* what, const fake::StormResult& r) {
  std::printf("%s: restarts_waited=%zu failed=%d lost_devices=%d", what, r.reregister_ms.size(),
              r.failed, r.lost_devices);
  if (!r.reregister_ms.empty()) {
    std::printf(" reregister_ms p50=%.1f p99=%.1f max=%.1f",
                bench::Percentile(r.reregister_ms, 0.5), bench::Percentile(r.reregister_ms, 0.99),
                bench::Percentile(r.reregister_ms, 1.0));
  }
  std::printf(" (fake kubelet Restart() call p50=%.1f ms)\n",
              bench::Percentile(r.restart_call_ms, 0.5));
  if (!r.first_failure.empty()) std::printf("  first failure: %s\n", r.first_failure.c_str());
}

int Main(int argc, char** argv) {
  int restarts = 100;
  int min_pause = 10;
  int max_pause = 500;
  unsigned seed = std::random_device{}();
  std::string plugin = SelfDir() + "/hcashare-device-plugin";
  CLI::App app{"dp_storm_bench: kubelet restart storm against the real daemon"};
  app.add_option("--restarts", restarts, "restarts per phase")->capture_default_str();
  app.add_option("--min-pause", min_pause, "random phase: shortest pause, ms")
      ->capture_default_str();
  app.add_option("--max-pause", max_pause, "random phase: longest pause, ms")
      ->capture_default_str();
  app.add_option("--seed", seed, "random seed (default: random)");
  app.add_option("--plugin", plugin, "daemon binary")->capture_default_str();
  std::string log_level = "warn";
  app.add_option("--log-level", log_level, "the daemon's --log-level")->capture_default_str();
  CLI11_PARSE(app, argc, argv);

  bench::DaemonEnv env;
  const std::string config = R"({"configList": [{"resourceName": "hca_a", "rdmaHcaMax": )" +
                             std::to_string(kDevices) +
                             R"(, "selectors": {"ifNames": ["ib0", "ib1"]}}]})";
  if (!env.Prepare(config).ok()) return 1;
  fake::FakeKubelet kubelet(env.kubelet);
  if (!kubelet.Start().ok()) return 1;
  auto proc = env.Spawn(plugin, {"--log-level", log_level});
  if (!proc.ok()) return 1;
  if (!kubelet.WaitFor(
          kResource,
          [](const fake::ResourceView& v) { return v.connected && v.devices.size() == kDevices; },
          milliseconds(10000))) {
    std::cerr << "the daemon never registered\n";
    return 1;
  }
  std::printf("seed=%u, %d restarts per phase, %d devices\n", seed, restarts, kDevices);
  fake::StormOptions o;
  o.resource = kResource;
  o.devices = kDevices;
  o.restarts = restarts;
  o.seed = seed;
  int failed = 0;
  auto phase = [&](const char* name) {
    fake::StormResult r = fake::RunRestartStorm(kubelet, o);
    Report(name, r);
    failed += r.failed + r.lost_devices;
  };
  phase("back_to_back");
  o.min_pause = milliseconds(min_pause);
  o.max_pause = milliseconds(max_pause);
  phase("random_pauses");
  o.min_pause = milliseconds(10);
  o.max_pause = milliseconds(50);
  o.overlapping = true;
  phase("overlapping_10_50ms");
  (void)proc->Signal(SIGTERM);
  auto rc = proc->Wait(milliseconds(10000));
  if (!rc.ok() || *rc != 0) {
    std::cerr << "daemon did not exit cleanly\n";
    return 1;
  }
  return failed == 0 ? 0 : 1;
}

}  // namespace
}  // namespace hcashare

int main(int argc, char** argv) { return hcashare::Main(argc, argv); }
