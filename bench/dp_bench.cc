// Whole-process benchmark of hcashare-device-plugin against the fake kubelet:
//   - start -> first ListAndWatch message (every resource), over several runs;
//   - Allocate round trip over the unix socket, p50/p99/max;
//   - idle RSS with 4 resources x 1000 IDs;
//   - idle wake-ups: context switches of all the daemon's threads while nothing happens.
// Run: build/bin/dp_bench [--runs 5] [--allocs 5000] [--idle-seconds 10] [--inspect]
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <thread>

#include <CLI/CLI.hpp>

#include "bench/bench_util.h"
#include "bench/daemon_env.h"
#include "testing/fake_kubelet.h"

namespace hcashare {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr const char* kConfig = R"({"periodicUpdateInterval": 60, "configList": [
  {"resourceName": "hca_a", "rdmaHcaMax": 1000, "selectors": {"ifNames": ["ib0", "ib1"]}},
  {"resourceName": "hca_b", "rdmaHcaMax": 1000, "selectors": {"vendors": ["15b3"], "deviceIDs": ["1017"]}},
  {"resourceName": "hca_c", "rdmaHcaMax": 1000, "selectors": {"rdmaDevices": ["mlx5_0"]}},
  {"resourceName": "hca_d", "rdmaHcaMax": 1000, "selectors": {"numaNodes": [1]}}]})";

const std::vector<std::string> kResources = {"rdma/hca_a", "rdma/hca_b", "rdma/hca_c",
                                             "rdma/hca_d"};

// Prints the threads of `pid` and its mappings with the most resident memory (from smaps).
void PrintMemoryBreakdown(pid_t pid) {
  std::string proc = "/proc/" + std::to_string(pid);
  std::printf("threads:");
  for (const auto& entry : std::filesystem::directory_iterator(proc + "/task")) {
    std::ifstream comm(entry.path() / "comm");
    std::string name;
    std::getline(comm, name);
    std::printf(" %s", name.c_str());
  }
  std::printf("\n");
  std::ifstream smaps(proc + "/smaps");
  std::vector<std::pair<long, std::string>> maps;
  std::string line, current;
  while (std::getline(smaps, line)) {
    if (!line.empty() && std::isxdigit(static_cast<unsigned char>(line[0])) &&
        line.find(' ') != std::string::npos && line.find(':') > line.find(' ')) {
      current = line;
    } else if (line.rfind("Rss:", 0) == 0) {
      maps.emplace_back(std::stol(line.substr(4)), current);
    }
  }
  std::sort(maps.rbegin(), maps.rend());
  for (size_t i = 0; i < maps.size() && i < 12; ++i) {
    std::printf("  %6ld KiB  %s\n", maps[i].first, maps[i].second.c_str());
  }
}

// User + system CPU time of `pid` so far, in milliseconds (/proc/<pid>/stat fields 14, 15).
double CpuMillis(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::istringstream rest(stat.substr(stat.rfind(')') + 2));  // after "pid (comm) "
  std::string field;
  long utime = 0, stime = 0;
  for (int i = 3; i <= 15 && rest >> field; ++i) {
    if (i == 14) utime = std::stol(field);
    if (i == 15) stime = std::stol(field);
  }
  return 1000.0 * static_cast<double>(utime + stime) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

// Context switches (each a wake-up or a preemption) of every thread of `pid` so far,
// keyed by "tid name".
std::map<std::string, long> ContextSwitches(pid_t pid) {
  std::map<std::string, long> out;
  for (const auto& entry :
       std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/task")) {
    std::ifstream status(entry.path() / "status");
    std::string line, name;
    long total = 0;
    while (std::getline(status, line)) {
      if (line.rfind("Name:", 0) == 0) name = line.substr(line.find_first_not_of(" \t", 5));
      for (const char* key : {"voluntary_ctxt_switches:", "nonvoluntary_ctxt_switches:"}) {
        if (line.rfind(key, 0) == 0) total += std::stol(line.substr(std::strlen(key)));
      }
    }
    out[entry.path().filename().string() + " " + name] = total;
  }
  return out;
}

int Main(int argc, char** argv) {
  int runs = 5;
  int allocs = 5000;
  std::string plugin = SelfDir() + "/hcashare-device-plugin";
  CLI::App app{"dp_bench: whole-process device plugin benchmark"};
  app.add_option("--runs", runs, "start-up runs")->capture_default_str();
  app.add_option("--allocs", allocs, "Allocate calls")->capture_default_str();
  app.add_option("--plugin", plugin, "daemon binary")->capture_default_str();
  bool trace = false;
  app.add_flag("--trace", trace, "print the plugin's debug log of each start-up");
  std::string health_poll = "0.5";  // the daemon's default
  app.add_option("--health-poll", health_poll, "the daemon's --health-poll-interval")
      ->capture_default_str();
  double idle_seconds = 10;
  app.add_option("--idle-seconds", idle_seconds, "how long idle wake-ups are counted")
      ->capture_default_str();
  bool inspect = false;
  app.add_flag("--inspect", inspect, "print the idle daemon's threads and largest mappings");
  CLI11_PARSE(app, argc, argv);

  bench::DaemonEnv env;
  if (!env.Prepare(kConfig).ok()) return 1;

  std::vector<double> startup_ms;
  for (int run = 0; run < runs; ++run) {
    fake::FakeKubelet kubelet(env.kubelet);
    if (!kubelet.Start().ok()) return 1;
    auto t0 = Clock::now();
    auto wall0 = std::chrono::system_clock::now();
    auto proc = env.Spawn(
        plugin, {"--log-level", trace ? "debug" : "warn", "--health-poll-interval", health_poll});
    if (!proc.ok()) return 1;
    double worst = 0;
    for (const auto& r : kResources) {
      if (!kubelet.WaitFor(
              r, [](const fake::ResourceView& v) { return v.lists_received > 0; },
              milliseconds(10000))) {
        std::cerr << "resource " << r << " never listed\n";
        return 1;
      }
      auto at = kubelet.View(r).last_list_at;
      worst = std::max(worst, std::chrono::duration<double, std::milli>(at - t0).count());
    }
    startup_ms.push_back(worst);
    if (trace) {
      auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(wall0.time_since_epoch());
      std::printf("run %d: spawned at epoch %.3f s; plugin log:\n", run,
                  static_cast<double>(ms.count()) / 1000.0);
      std::ifstream log(env.log);
      std::cout << log.rdbuf();
    }

    if (run + 1 == runs) {
      std::vector<double> lat_us;
      lat_us.reserve(static_cast<size_t>(allocs));
      for (int i = 0; i < allocs; ++i) {
        auto a = Clock::now();
        auto resp = kubelet.Allocate("rdma/hca_a", {std::to_string(i % 1000)});
        auto b = Clock::now();
        if (!resp.ok()) {
          std::cerr << "Allocate failed: " << resp.status().ToString() << "\n";
          return 1;
        }
        lat_us.push_back(std::chrono::duration<double, std::micro>(b - a).count());
      }
      std::this_thread::sleep_for(milliseconds(2000));
      const long rss = bench::ProcStatusKib(proc->pid(), "VmRSS:");
      const long hwm = bench::ProcStatusKib(proc->pid(), "VmHWM:");
      std::printf("allocate_round_trip_us: n=%d p50=%.0f p99=%.0f max=%.0f\n", allocs,
                  bench::Percentile(lat_us, 0.50), bench::Percentile(lat_us, 0.99),
                  *std::max_element(lat_us.begin(), lat_us.end()));
      std::printf(
          "idle_rss_kib (4 resources x 1000 IDs, after %d Allocates): VmRSS=%ld VmHWM=%ld "
          "RssAnon=%ld RssFile=%ld\n",
          allocs, rss, hwm, bench::ProcStatusKib(proc->pid(), "RssAnon:"),
          bench::ProcStatusKib(proc->pid(), "RssFile:"));
      if (inspect) PrintMemoryBreakdown(proc->pid());
      const auto before = ContextSwitches(proc->pid());
      const double cpu_before = CpuMillis(proc->pid());
      std::this_thread::sleep_for(std::chrono::duration<double>(idle_seconds));
      long total = 0;
      std::string busy;
      for (const auto& [thread, n] : ContextSwitches(proc->pid())) {
        auto it = before.find(thread);
        long d = n - (it == before.end() ? 0 : it->second);
        total += d;
        if (d > 0) busy += " " + thread + "=" + std::to_string(d);
      }
      std::printf(
          "idle_wakeups (%.0f s, health poll %s s, rescan 60 s): %ld context switches, "
          "%.0f ms CPU\n",
          idle_seconds, health_poll.c_str(), total, CpuMillis(proc->pid()) - cpu_before);
      if (inspect) std::printf("  by thread:%s\n", busy.c_str());
    }
    (void)proc->Signal(SIGTERM);
    auto rc = proc->Wait(milliseconds(10000));
    if (!rc.ok() || *rc != 0) {
      std::cerr << "daemon did not exit cleanly\n";
      return 1;
    }
  }
  std::printf("start_to_first_list_ms (all 4 resources, %d runs): min=%.1f median=%.1f max=%.1f\n",
              runs, *std::min_element(startup_ms.begin(), startup_ms.end()),
              bench::Percentile(startup_ms, 0.5),
              *std::max_element(startup_ms.begin(), startup_ms.end()));
  return 0;
}

}  // namespace
}  // namespace hcashare

int main(int argc, char** argv) { return hcashare::Main(argc, argv); }
