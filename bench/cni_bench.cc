// Whole-process benchmark of hcashare-cni: ADD then DEL of a VF whose netdev is a veth, no
// IPAM, as the runtime runs it (a fresh process per verb, config on stdin). Reports
// p50/p90/p99 of ADD, DEL and ADD+DEL, and of one bare netns move of the same veth (the
// kernel's share: each verb moves the netdev once). Runs in a private network namespace
// (needs root).
// Run: build/bin/cni_bench [--cycles 200]
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "common/exec.h"
#include "common/netdev.h"
#include "common/netns.h"
#include "common/sim_node.h"
#include "common/subprocess.h"
#include "common/temp_dir.h"

namespace hcashare {
namespace {

using Clock = std::chrono::steady_clock;

double Pct(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(p * static_cast<double>(v.size())))];
}

void Report(const char* what, const std::vector<double>& ms) {
  std::printf("%s: n=%zu p50=%.2f ms p90=%.2f ms p99=%.2f ms\n", what, ms.size(), Pct(ms, 0.5),
              Pct(ms, 0.9), Pct(ms, 0.99));
}

int Main(int argc, char** argv) {
  int cycles = 200;
  CLI::App app{"cni_bench: hcashare-cni ADD+DEL latency, whole process"};
  app.add_option("--cycles", cycles, "ADD+DEL cycles")->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  if (::unshare(CLONE_NEWNET) != 0) {
    std::perror("unshare(CLONE_NEWNET) (run as root)");
    return 1;
  }
  TempDir tmp("hcashare-cnibench-");
  const std::string pod = "hcbench" + std::to_string(::getpid());
  if (std::system(("ip link add bvf0 type veth peer name bvf0p && ip netns add " + pod).c_str()) !=
      0) {
    return 1;
  }
  SimNode node(tmp.path() + "/host");
  SimPciFunction pf;
  pf.address = "0000:3b:00.0";
  pf.netdevs = {"pf0"};
  SimPciFunction vf;
  vf.address = "0000:3b:00.2";
  vf.physfn = pf.address;
  vf.netdevs = {"bvf0"};
  if (!node.AddPciFunction(pf).ok() || !node.AddPciFunction(vf).ok()) return 1;
  const nlohmann::json conf = {{"cniVersion", "1.0.0"},
                               {"name", "bench"},
                               {"type", "hcashare-cni"},
                               {"deviceID", vf.address},
                               {"hostRoot", tmp.path() + "/host"},
                               {"stateDir", tmp.path() + "/state"}};
  const std::string bin = SelfDir() + "/hcashare-cni";
  auto run = [&](const char* verb) {
    return Execute(bin, {bin},
                   {std::string("CNI_COMMAND=") + verb, "CNI_CONTAINERID=bench",
                    "CNI_NETNS=/var/run/netns/" + pod, "CNI_IFNAME=net1", "CNI_PATH=/usr/lib/cni"},
                   conf.dump(), std::chrono::milliseconds(10000));
  };
  std::vector<double> add_ms, del_ms, both_ms;
  int rc = 0;
  for (int i = 0; i < cycles; ++i) {
    auto t0 = Clock::now();
    auto add = run("ADD");
    auto t1 = Clock::now();
    auto del = run("DEL");
    auto t2 = Clock::now();
    if (!add.ok() || add->exit_code != 0 || !del.ok() || del->exit_code != 0) {
      std::fprintf(stderr, "cycle %d failed: %s %s\n", i, add.ok() ? add->out.c_str() : "",
                   del.ok() ? del->out.c_str() : "");
      rc = 1;
      break;
    }
    add_ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    del_ms.push_back(std::chrono::duration<double, std::milli>(t2 - t1).count());
    both_ms.push_back(std::chrono::duration<double, std::milli>(t2 - t0).count());
  }
  // The kernel's share: one move of the same veth into the pod and back, in process.
  std::vector<double> move_ms;
  auto netdev = NewNetlinkNetdevOps();
  auto pod_ns = Netns::Open("/var/run/netns/" + pod);
  auto here = Netns::Current();
  for (int i = 0; rc == 0 && pod_ns.ok() && here.ok() && i < std::min(cycles, 50); ++i) {
    auto t0 = Clock::now();
    Status st = netdev->MoveToNetns("bvf0", *pod_ns);
    move_ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
    NetnsGuard in_pod(*pod_ns);
    if (!st.ok() || !in_pod.status().ok() || !netdev->MoveToNetns("bvf0", *here).ok()) {
      rc = 1;
    }
  }
  std::system(("ip netns del " + pod).c_str());
  if (rc != 0) return rc;
  Report("cni_add", add_ms);
  Report("cni_del", del_ms);
  Report("cni_add_plus_del", both_ms);
  Report("kernel_netns_move_in_process", move_ms);
  return 0;
}

}  // namespace
}  // namespace hcashare

int main(int argc, char** argv) { return hcashare::Main(argc, argv); }
