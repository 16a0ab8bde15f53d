// Micro-benchmarks: one discovery scan over a large simulated node, and building an
// Allocate response. Run: build/bin/discovery_bench
#include <benchmark/benchmark.h>

#include <cstdio>

#include "common/host.h"
#include "common/temp_dir.h"
#include "deviceplugin/allocation.h"
#include "hostfacts/reader.h"
#include "node/discovery.h"
#include "testing/sim_node.h"

namespace hcashare {
namespace {

// A node with `n` PCI functions: a quarter are RDMA HCAs, the rest plain NICs and other
// devices, spread over 4 buses per root port as on a large host.
struct BigNode {
  explicit BigNode(int n) : node(tmp.path()) {
    for (int i = 0; i < n; ++i) {
      fake::SimPciFunction f;
      char addr[32];
      std::snprintf(addr, sizeof(addr), "0000:%02x:%02x.%x", 1 + i / 64, (i / 8) % 8, i % 8);
      f.address = addr;
      f.numa_node = i % 2;
      if (i % 4 == 0) {
        f.class_code = "0x020700";
        f.netdevs = {"ib" + std::to_string(i)};
        f.link_type = "infiniband";
        f.rdma_device = "mlx5_" + std::to_string(i);
      } else if (i % 4 == 1) {
        f.vendor = "8086";
        f.driver = "ice";
        f.netdevs = {"eth" + std::to_string(i)};
      } else {
        f.vendor = "8086";
        f.class_code = "0x010802";
        f.driver = "nvme";
      }
      (void)node.AddPciFunction(f);
    }
  }
  TempDir tmp;
  fake::SimNode node;
};

void BM_DiscoveryScan(benchmark::State& state) {
  BigNode big(static_cast<int>(state.range(0)));
  auto host = NewRootedHost(big.tmp.path());
  node::Discoverer d(*host);
  size_t found = 0;
  for (auto _ : state) {
    node::Inventory inv = d.Scan();
    found = inv.functions.size();
    benchmark::DoNotOptimize(inv);
  }
  state.counters["rdma_functions"] = static_cast<double>(found);
}
BENCHMARK(BM_DiscoveryScan)->Arg(64)->Arg(1024)->Unit(benchmark::kMillisecond);

// The full read (every function's details, bridges' ACS, CPUs, NVIDIA GPUs): what topo and
// doctor read, and what hcashare-cni adds to an ADD when the pod has GPUs (issue 17).
void BM_FullHostRead(benchmark::State& state) {
  BigNode big(static_cast<int>(state.range(0)));
  auto host = NewRootedHost(big.tmp.path());
  size_t functions = 0;
  for (auto _ : state) {
    hostfacts::HostSnapshot snap = hostfacts::ReadHostSnapshot(*host);
    functions = snap.pci.size();
    benchmark::DoNotOptimize(snap);
  }
  state.counters["functions"] = static_cast<double>(functions);
}
BENCHMARK(BM_FullHostRead)->Arg(64)->Arg(1024)->Unit(benchmark::kMillisecond);

void BM_BuildAllocateResponse(benchmark::State& state) {
  BigNode big(64);
  auto host = NewRootedHost(big.tmp.path());
  node::Inventory inv = node::Discoverer(*host).Scan();
  config::ResourceConfig rc;
  rc.resource_name = "hca";
  rc.resource_prefix = "rdma";
  rc.rdma_hca_max = 1000;
  node::PoolState pool = node::BuildPool(rc, inv);
  v1beta1::AllocateRequest req;
  req.add_container_requests()->add_devices_ids("7");
  for (auto _ : state) {
    auto resp = dp::BuildAllocateResponse(rc, pool, req, *host);
    benchmark::DoNotOptimize(resp);
  }
}
BENCHMARK(BM_BuildAllocateResponse)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace hcashare

BENCHMARK_MAIN();
