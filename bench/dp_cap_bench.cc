// The daemon's memory at the config limits (issue 15): total device IDs across all
// resources and the resource count are capped (config::kMaxTotalDeviceIds,
// kMaxResources) so that the daemon stays inside its DaemonSet memory limit (64 MiB).
// Runs the real daemon on the demo node against the fake kubelet with R shared resources
// of M IDs each, waits until the kubelet holds every list, and prints VmRSS and VmHWM.
// Run: build/bin/dp_cap_bench [--resources 4] [--ids 25000]
#include <signal.h>

#include <cstdio>
#include <fstream>
#include <iostream>

#include <CLI/CLI.hpp>

#include "bench/bench_util.h"
#include "bench/daemon_env.h"
#include "testing/fake_kubelet.h"
#include "tests/support/dp_configs.h"

namespace hcashare {
namespace {

using std::chrono::milliseconds;

int Main(int argc, char** argv) {
  int resources = 4;
  int ids = 25000;
  std::string plugin = SelfDir() + "/hcashare-device-plugin";
  CLI::App app{"dp_cap_bench: daemon memory with R resources of M IDs"};
  app.add_option("--resources", resources, "shared resources")->capture_default_str();
  app.add_option("--ids", ids, "rdmaHcaMax of each")->capture_default_str();
  app.add_option("--plugin", plugin, "daemon binary")->capture_default_str();
  CLI11_PARSE(app, argc, argv);

  bench::DaemonEnv env;
  if (!env.Prepare(testing::ManySharedResources(resources, ids, "hca_")).ok()) return 1;
  fake::FakeKubelet kubelet(env.kubelet);
  if (!kubelet.Start().ok()) return 1;
  const auto start = std::chrono::steady_clock::now();
  auto proc = env.Spawn(plugin, {"--log-level", "warn", "--metrics-address", "127.0.0.1:0"});
  if (!proc.ok()) return 1;
  for (int r = 0; r < resources; ++r) {
    const bool listed = kubelet.WaitFor(
        "rdma/hca_" + std::to_string(r),
        [&](const fake::ResourceView& v) {
          return v.connected && v.devices.size() == static_cast<size_t>(ids);
        },
        milliseconds(120000));
    if (!listed) {
      std::cerr << "resource " << r << " never listed; daemon log:\n"
                << std::ifstream(env.log).rdbuf();
      return 1;
    }
  }
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  std::printf(
      "resources=%d ids_each=%d total_ids=%d all_listed_ms=%.0f VmRSS_kib=%ld "
      "VmHWM_kib=%ld\n",
      resources, ids, resources * ids, ms, bench::ProcStatusKib(proc->pid(), "VmRSS:"),
      bench::ProcStatusKib(proc->pid(), "VmHWM:"));
  (void)proc->Signal(SIGTERM);
  auto rc = proc->Wait(milliseconds(10000));
  return rc.ok() && *rc == 0 ? 0 : 1;
}

}  // namespace
}  // namespace hcashare

int main(int argc, char** argv) { return hcashare::Main(argc, argv); }
