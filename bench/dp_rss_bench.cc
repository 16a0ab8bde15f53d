// Resource limits of the real hcashare-device-plugin process (issue 9): does VmRSS grow
// over 10,000 Allocate calls and 1,000 rescans? Runs the daemon on the demo node against
// the fake kubelet, with CDI and metrics on, and samples VmRSS (/proc/<pid>/status)
// through two phases after a warm-up:
//   - Allocate: calls through the fake kubelet on a shared resource (1-4 random IDs);
//   - rescans: each round hot-plugs (adds or removes) an HCA in the fixture and rewrites
//     the config file (the daemon's inotify reload path: reload, full rescan, publish),
//     then waits until the kubelet receives the changed list of the exclusive resource
//     selecting that HCA, so every rescan is known to have happened.
// Prints start and end VmRSS and the least-squares slope in KiB per 1,000 operations.
// Run: build/bin/dp_rss_bench [--allocs 10000] [--rescans 1000]
#include <signal.h>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <random>
#include <set>

#include <CLI/CLI.hpp>

#include "bench/bench_util.h"
#include "bench/daemon_env.h"
#include "testing/fake_kubelet.h"

namespace hcashare {
namespace {

using std::chrono::milliseconds;

constexpr const char* kShared = "rdma/hca_a";
constexpr const char* kHotplugged = "rdma/hca_x";
constexpr const char* kHotplugAddress = "0000:d8:00.0";

// `interval` alternates so that every rewrite is a config change (and so a rescan).
std::string Config(int interval) {
  return R"({"periodicUpdateInterval": )" + std::to_string(interval) + R"(, "configList": [
    {"resourceName": "hca_a", "rdmaHcaMax": 1000, "selectors": {"ifNames": ["ib0", "ib1"]}},
    {"resourceName": "hca_x", "mode": "exclusive", "selectors": {"ifNames": ["ib9"]}}]})";
}

// VmRSS samples against the operation count.
struct Series {
  std::vector<double> ops, rss_kib;
  void Sample(pid_t pid, int op) {
    ops.push_back(op);
    rss_kib.push_back(static_cast<double>(bench::ProcStatusKib(pid, "VmRSS:")));
  }
  void Report(const char* what) const {
    std::printf("%s: n=%.0f start_rss_kib=%.0f end_rss_kib=%.0f slope_kib_per_1000_ops=%.2f\n",
                what, ops.back(), rss_kib.front(), rss_kib.back(),
                1000.0 * bench::LeastSquaresSlope(ops, rss_kib));
  }
};

int Main(int argc, char** argv) {
  int allocs = 10000;
  int rescans = 1000;
  int warmup = 100;
  std::string plugin = SelfDir() + "/hcashare-device-plugin";
  CLI::App app{"dp_rss_bench: daemon RSS over Allocate calls and rescans"};
  app.add_option("--allocs", allocs, "Allocate calls")->capture_default_str();
  app.add_option("--rescans", rescans, "rescans")->capture_default_str();
  app.add_option("--warmup", warmup, "unmeasured rescans (and 10x Allocates) first")
      ->capture_default_str();
  app.add_option("--plugin", plugin, "daemon binary")->capture_default_str();
  std::string log_level = "warn";
  app.add_option("--log-level", log_level, "the daemon's --log-level")->capture_default_str();
  CLI11_PARSE(app, argc, argv);

  bench::DaemonEnv env;
  if (!env.Prepare(Config(3600)).ok()) return 1;
  fake::FakeKubelet kubelet(env.kubelet);
  if (!kubelet.Start().ok()) return 1;
  auto proc = env.Spawn(plugin, {"--log-level", log_level, "--use-cdi", "--cdi-spec-dir",
                                 env.tmp.path() + "/cdi", "--device-info-dir",
                                 env.tmp.path() + "/devinfo", "--metrics-address", "127.0.0.1:0"});
  if (!proc.ok()) return 1;
  const pid_t pid = proc->pid();
  if (!kubelet.WaitFor(
          kShared,
          [](const fake::ResourceView& v) { return v.connected && v.devices.size() == 1000; },
          milliseconds(10000))) {
    std::cerr << "the daemon never registered\n";
    return 1;
  }

  std::mt19937 rng(1);
  // 1-4 distinct random IDs of the shared resource.
  auto allocate = [&]() -> Status {
    std::set<std::string> ids;
    for (size_t n = 1 + rng() % 4; ids.size() < n;) ids.insert(std::to_string(rng() % 1000));
    return kubelet.Allocate(kShared, {ids.begin(), ids.end()}).status();
  };
  int round = 0;
  auto rescan = [&]() -> Status {
    const bool add = round++ % 2 == 0;
    RETURN_IF_ERROR(
        add ? env.node.AddPciFunction(fake::SimNode::IbHca(kHotplugAddress, "ib9", "mlx5_9", 1))
            : env.node.RemovePciFunction(kHotplugAddress));
    const int lists = kubelet.View(kHotplugged).lists_received;
    env.WriteConfig(Config(add ? 3601 : 3600));  // always differs from the running one
    const bool seen = kubelet.WaitFor(
        kHotplugged,
        [&](const fake::ResourceView& v) {
          return v.lists_received > lists && v.devices.size() == (add ? 1u : 0u);
        },
        milliseconds(10000));
    return seen ? Status::Ok() : Status::Unavailable("the kubelet never saw the rescan");
  };
  auto fail = [&](const std::string& what, const Status& st) {
    std::cerr << what << ": " << st.ToString() << "\ndaemon log:\n"
              << std::ifstream(env.log).rdbuf();
    return 1;
  };

  for (int i = 0; i < warmup; ++i) {
    for (int j = 0; j < 10; ++j) {
      if (Status st = allocate(); !st.ok()) return fail("warm-up Allocate", st);
    }
    if (Status st = rescan(); !st.ok()) return fail("warm-up rescan", st);
  }
  Series a;
  a.Sample(pid, 0);
  for (int i = 1; i <= allocs; ++i) {
    if (Status st = allocate(); !st.ok()) return fail("Allocate " + std::to_string(i), st);
    if (i % 100 == 0) a.Sample(pid, i);
  }
  Series r;
  r.Sample(pid, 0);
  for (int i = 1; i <= rescans; ++i) {
    if (Status st = rescan(); !st.ok()) return fail("rescan " + std::to_string(i), st);
    if (i % 10 == 0) r.Sample(pid, i);
  }
  std::printf("after %d warm-up rounds (10 Allocates + 1 rescan each):\n", warmup);
  a.Report("allocate");
  r.Report("rescan");
  std::printf("peak VmHWM_kib=%ld\n", bench::ProcStatusKib(pid, "VmHWM:"));
  (void)proc->Signal(SIGTERM);
  auto rc = proc->Wait(milliseconds(10000));
  if (!rc.ok() || *rc != 0) {
    std::cerr << "daemon did not exit cleanly\n";
    return 1;
  }
  return 0;
}

}  // namespace
}  // namespace hcashare

int main(int argc, char** argv) { return hcashare::Main(argc, argv); }
