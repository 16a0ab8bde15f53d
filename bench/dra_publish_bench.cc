// dra_publish_bench: the ResourceSlice publisher's latency against the fake API server (in
// this process, HTTPS on loopback), issue 27's target: a change published within 100 ms with
// a warm client.
//
// Starts a SlicePublisher with its client already made (a warm client: TLS context and
// credentials loaded) and measures the first publication from Start() (discovery, the Node,
// LIST, WATCH, POST). Then --rounds changes of one device's attribute among --devices
// (default 128, a full slice: the largest PUT; each an update in place), and --rounds changes of
// the device count across 128 (129 <-> 128 devices: a generation bump, a POST or a DELETE and a
// PUT), each time from Update() to the server's answer to the last write
// (PublisherStatus::last_latency). The client's rate limit is off: a node's changes are rare, the
// limit would measure itself.
//
// Prints: dra_publish devices=N rounds=N in_place_p50_ms= in_place_p99_ms= in_place_max_ms=
// bump_p50_ms= bump_p99_ms= bump_max_ms= first_publish_ms= generation= errors=N
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "bench/bench_util.h"
#include "bench/fake_cluster.h"
#include "dra/publisher.h"
#include "kube/config.h"
#include "kube/rest.h"
#include "testing/fake_apiserver.h"
#include "testing/test_pki.h"

namespace hcashare {
namespace {

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

dra::PoolContent Pool(int devices, int round) {
  dra::PoolContent p{dra::kDefaultDriver, "node-a", "node-a", {}};
  for (int i = 0; i < devices; ++i) {
    char name[16];
    std::snprintf(name, sizeof(name), "dev-%04d", i);
    const bool down = i == round % devices && round % 2 == 1;
    p.devices.push_back({{"name", name},
                         {"attributes",
                          {{"resource.kubernetes.io/pcieRoot", {{"string", "pci0000:3a"}}},
                           {"rdmaDevice", {{"string", "mlx5_" + std::to_string(i)}}},
                           {"portState", {{"string", down ? "DOWN" : "ACTIVE"}}}}}});
  }
  return p;
}

double Ms(std::chrono::microseconds us) { return static_cast<double>(us.count()) / 1000.0; }

// Publishes `pool` and returns the publisher's Update() -> acknowledgement time in ms, or a
// negative value on failure.
double Publish(dra::SlicePublisher& p, dra::PoolContent pool) {
  if (!p.Update(std::move(pool)).ok()) return -1;
  if (!p.WaitPublished(std::chrono::milliseconds(10000))) return -1;
  return Ms(p.status().last_latency);
}

int Run(int devices, int rounds) {
  auto cluster = bench::StartFakeCluster();
  if (!cluster.ok()) {
    std::fprintf(stderr, "fake cluster: %s\n", cluster.status().ToString().c_str());
    return 1;
  }
  fake::FakeApiServer* api = cluster->api.get();
  api->Seed("/api/v1/nodes", {{"metadata", {{"name", "node-a"}}}});
  dra::PublisherOptions po;
  po.node_name = "node-a";
  po.backoff.initial = std::chrono::milliseconds(10);
  dra::SlicePublisher publisher(cluster->client.get(), po);
  int errors = 0;
  const auto started = Clock::now();
  if (!publisher.Update(Pool(devices, 0)).ok() || !publisher.Start().ok() ||
      !publisher.WaitPublished(std::chrono::milliseconds(10000))) {
    std::fprintf(stderr, "first publication: %s\n",
                 publisher.status().last_error.ToString().c_str());
    return 1;
  }
  const double first_ms = std::chrono::duration<double, std::milli>(Clock::now() - started).count();

  std::vector<double> in_place;
  for (int r = 1; r <= rounds; ++r) {
    const double ms = Publish(publisher, Pool(devices, r));
    if (ms < 0) {
      ++errors;
    } else {
      in_place.push_back(ms);
    }
  }
  std::vector<double> bump;
  for (int r = 1; r <= rounds; ++r) {
    const double ms = Publish(publisher, Pool(r % 2 == 1 ? 129 : 128, 0));
    if (ms < 0) {
      ++errors;
    } else {
      bump.push_back(ms);
    }
  }
  if (in_place.empty() || bump.empty()) return 1;
  std::printf(
      "dra_publish devices=%d rounds=%d in_place_p50_ms=%.2f in_place_p99_ms=%.2f "
      "in_place_max_ms=%.2f bump_p50_ms=%.2f bump_p99_ms=%.2f bump_max_ms=%.2f "
      "first_publish_ms=%.2f generation=%lld errors=%d\n",
      devices, rounds, bench::Percentile(in_place, 0.5), bench::Percentile(in_place, 0.99),
      bench::Percentile(in_place, 1.0), bench::Percentile(bump, 0.5), bench::Percentile(bump, 0.99),
      bench::Percentile(bump, 1.0), first_ms, static_cast<long long>(publisher.status().generation),
      errors);
  return errors == 0 ? 0 : 1;
}

}  // namespace
}  // namespace hcashare

int main(int argc, char** argv) {
  int devices = 128;  // a full slice: the largest PUT
  int rounds = 200;
  if (argc % 2 == 0) {
    std::fprintf(stderr, "usage: dra_publish_bench [--devices N] [--rounds N]\n");
    return 2;
  }
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--devices") {
      devices = std::atoi(argv[i + 1]);
    } else if (a == "--rounds") {
      rounds = std::atoi(argv[i + 1]);
    } else {
      std::fprintf(stderr, "usage: dra_publish_bench [--devices N] [--rounds N]\n");
      return 2;
    }
  }
  if (devices < 1 || devices > 128 || rounds < 1 || rounds > 100000) {
    std::fprintf(stderr, "--devices must be 1..128 and --rounds 1..100000\n");
    return 2;
  }
  return hcashare::Run(devices, rounds);
}
