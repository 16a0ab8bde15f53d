// Micro-benchmarks: the CNI's pod device lookup (kubelet/podresources.h) against the fake
// kubelet pod-resources server holding 250 pods with RDMA devices, over a real unix socket.
// Each iteration is one whole lookup as a CNI invocation makes it: dial a fresh channel,
// call, decode, group. Times are wall-clock (the server runs on other threads).
// Run: build/bin/podres_bench
#include <benchmark/benchmark.h>

#include <cstdio>
#include <string>
#include <vector>

#include "common/temp_dir.h"
#include "kubelet/podresources.h"
#include "testing/fake_podresources.h"

namespace hcashare {
namespace {

using fake::FakeContainer;
using fake::FakeDevices;
using fake::FakePodResources;

constexpr int kPods = 250;

// 250 pods, each with 3 containers: two with a shared HCA (listed on NUMA 0 and 1, as the
// kubelet does for a device without affinity to one node) and an SR-IOV VF, one without
// devices.
struct Node {
  Node() : server(kubelet::PodResourcesSocketPath(tmp.path())) {
    for (int p = 0; p < kPods; ++p) {
      std::vector<FakeContainer> containers;
      for (int c = 0; c < 2; ++c) {
        char vf[32];
        std::snprintf(vf, sizeof(vf), "0000:%02x:%02x.%d", 0x3b + p / 32, (p % 32) / 8 * 2 + c,
                      p % 8);
        containers.push_back(
            {"worker-" + std::to_string(c),
             {{"rdma/hca_shared_devices_a", {"mlx5_" + std::to_string(p % 8)}, {0, 1}},
              {"intel.com/sriov_rdma", {vf}, {p % 2}}}});
      }
      containers.push_back({"sidecar", {}});
      server.AddPod("training", "job-" + std::to_string(p), "uid-" + std::to_string(p), containers);
    }
    ok = server.Start().ok();
    opts.kubelet_root = tmp.path();
  }
  TempDir tmp;
  FakePodResources server;
  kubelet::PodResourcesOptions opts;
  bool ok = false;
};

void RunLookups(benchmark::State& state, FakePodResources::GetMode mode, const char* want) {
  Node node;
  if (!node.ok) {
    state.SkipWithError("fake pod-resources server did not start");
    return;
  }
  node.server.SetGetMode(mode);
  int i = 0;
  for (auto _ : state) {
    kubelet::PodRef pod{"training", "job-" + std::to_string(i++ % kPods), ""};
    auto r = kubelet::LookupPodDevices(node.opts, pod);
    if (!r.ok() || r->source != want || r->by_resource.size() != 2) {
      const std::string error =
          r.ok() ? "unexpected answer from " + r->source : r.status().ToString();
      state.SkipWithError(error.c_str());
      return;
    }
    benchmark::DoNotOptimize(r);
  }
}

void BM_GetLookup(benchmark::State& state) {
  RunLookups(state, FakePodResources::GetMode::kServe, "v1 Get");
}
BENCHMARK(BM_GetLookup)->Unit(benchmark::kMillisecond)->UseRealTime()->Repetitions(5);

void BM_ListLookup(benchmark::State& state) {
  RunLookups(state, FakePodResources::GetMode::kDisabled, "v1 List");
}
BENCHMARK(BM_ListLookup)->Unit(benchmark::kMillisecond)->UseRealTime()->Repetitions(5);

}  // namespace
}  // namespace hcashare

BENCHMARK_MAIN();
