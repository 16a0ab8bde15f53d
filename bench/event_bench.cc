// Event-to-ListAndWatch latency: a fixture change plus its kernel event (injected through
// the uevent seam, since the test machine has no RDMA hardware) until the fake kubelet
// receives the updated device list, with periodic rescans off. Also the same for a port
// state change picked up by the health poll. Reports p50/p99/max.
// Run: build/bin/event_bench [--rounds 200] [--health-poll 2]
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <thread>

#include <CLI/CLI.hpp>

#include "bench/bench_util.h"
#include "common/host.h"
#include "common/log.h"
#include "common/temp_dir.h"
#include "common/uevent.h"
#include "config/config.h"
#include "daemon/control_loop.h"
#include "nl/rdma_netlink.h"
#include "testing/fake_kubelet.h"
#include "testing/fake_rdma_system.h"
#include "testing/fake_uevent_source.h"
#include "testing/sim_node.h"

namespace hcashare {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

void Report(const char* what, const std::vector<double>& ms) {
  std::printf("%s: n=%zu p50=%.1f ms p99=%.1f ms max=%.1f ms\n", what, ms.size(),
              bench::Percentile(ms, 0.5), bench::Percentile(ms, 0.99),
              *std::max_element(ms.begin(), ms.end()));
}

int Main(int argc, char** argv) {
  int rounds = 200;
  CLI::App app{"event_bench: uevent/port change -> ListAndWatch latency"};
  app.add_option("--rounds", rounds, "changes to measure")->capture_default_str();
  double poll_seconds = 2;
  app.add_option("--health-poll", poll_seconds, "health poll interval (the daemon's default: 2)")
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  SetLogLevel(LogLevel::kError);

  TempDir tmp("hcashare-evbench-");
  fake::SimNode node(tmp.path() + "/host");
  if (!node.AddPciFunction(fake::SimNode::IbHca("0000:3b:00.0", "ib0", "mlx5_0", 0)).ok()) return 1;
  auto host = NewRootedHost(tmp.path() + "/host");
  fake::FakeKubelet kubelet(tmp.path() + "/kubelet");
  if (!kubelet.Start().ok()) return 1;
  fake::FakeRdmaSystem rdma(Status::Unavailable("bench"));
  fake::FakeUeventSource uevents;
  daemon::ControlLoopOptions opts;
  opts.server.kubelet_root = tmp.path() + "/kubelet";
  opts.server.device_plugin_dir = opts.server.kubelet_root + "/device-plugins";
  opts.server.mode = dp::RegistrationMode::kKubelet;
  opts.health_poll_interval = milliseconds(static_cast<int>(poll_seconds * 1000));
  opts.watch_links = true;  // as the daemon runs
  daemon::ControlLoop manager(opts, *host, rdma, &uevents);
  auto cfg = config::ParseConfig(R"({"periodicUpdateInterval": 0, "configList": [
    {"resourceName": "hca", "rdmaHcaMax": 16, "selectors": {"vendors": ["15b3"]}}]})");
  if (!cfg.ok() || !manager.Start(*cfg.config).ok()) return 1;
  const std::string res = "rdma/hca";
  auto health_is = [&](const char* h) {
    return [h](const fake::ResourceView& v) {
      return v.connected && !v.devices.empty() && v.devices[0].health() == h;
    };
  };
  if (!kubelet.WaitFor(res, health_is("Healthy"), milliseconds(10000))) return 1;

  // Hot-plug: remove / re-add the HCA, each followed by its uevent.
  std::vector<double> hotplug;
  for (int i = 0; i < rounds; ++i) {
    const bool remove = i % 2 == 0;
    auto t0 = Clock::now();
    if (remove) {
      (void)node.RemovePciFunction("0000:3b:00.0");
    } else {
      (void)node.AddPciFunction(fake::SimNode::IbHca("0000:3b:00.0", "ib0", "mlx5_0", 0));
    }
    uevents.Inject(Uevent{
        remove ? "remove" : "add", "/devices/pci0000:00/0000:00:01.0/0000:3b:00.0", "pci", {}});
    if (!kubelet.WaitFor(res, health_is(remove ? "Unhealthy" : "Healthy"), milliseconds(5000))) {
      std::fprintf(stderr, "round %d: no update\n", i);
      return 1;
    }
    hotplug.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
  }
  Report("hotplug_uevent_to_listandwatch", hotplug);

  // Port state: no uevent exists for it; the health poll finds it.
  std::vector<double> port;
  for (int i = 0; i < std::min(rounds, 10); ++i) {
    const bool down = i % 2 == 0;
    std::this_thread::sleep_for(milliseconds(2100));  // past the debounce window
    auto t0 = Clock::now();
    (void)node.SetPortState("0000:3b:00.0", 1, down ? "1: DOWN" : "4: ACTIVE");
    if (!kubelet.WaitFor(res, health_is(down ? "Unhealthy" : "Healthy"), milliseconds(10000))) {
      return 1;
    }
    port.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
  }
  Report("port_state_poll_to_listandwatch", port);

  // Netdev state with its rtnetlink notification (a veth added/removed stands in for the
  // HCA netdev's carrier change, which the fixture cannot produce). Needs root and ip.
  std::vector<double> link;
  const std::string veth = "hcbv" + std::to_string(::getpid() % 100000);
  for (int i = 0; i < std::min(rounds, 10) && ::geteuid() == 0; ++i) {
    const bool down = i % 2 == 0;
    std::this_thread::sleep_for(milliseconds(2100));  // past the debounce window
    auto t0 = Clock::now();
    (void)node.SetOperState("0000:3b:00.0", "ib0", down ? "down" : "up");
    const std::string cmd = down ? "ip link add " + veth + "a type veth peer name " + veth + "b"
                                 : "ip link del " + veth + "a";
    if (std::system((cmd + " 2>/dev/null").c_str()) != 0) break;
    if (!kubelet.WaitFor(res, health_is(down ? "Unhealthy" : "Healthy"), milliseconds(10000))) {
      return 1;
    }
    link.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
  }
  (void)std::system(("ip link del " + veth + "a 2>/dev/null").c_str());
  if (!link.empty()) Report("netdev_state_link_event_to_listandwatch", link);
  manager.Stop();
  kubelet.Stop();
  return 0;
}

}  // namespace
}  // namespace hcashare

int main(int argc, char** argv) { return hcashare::Main(argc, argv); }
