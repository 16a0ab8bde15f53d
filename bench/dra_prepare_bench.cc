// NodePrepareResources latency, the DRA driver's kubelet side end to end: the fake DRA
// kubelet calls v1 Prepare over the driver's unix socket; the Preparer GETs the claim from the
// fake API server over HTTPS with a warm client, writes its CDI spec and checkpoint, and
// answers. Issue 27's target: p99 under 10 ms with a warm API client.
//
//   dra_prepare_bench [--claims N]
// prints "prepare_first n=.. p50_ms=.. p90_ms=.. p99_ms=.. max_ms=..", the same for
// "prepare_again" (a claim already prepared: answered from the checkpoint, no GET) and for
// "unprepare".
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "bench/bench_util.h"
#include "bench/fake_cluster.h"
#include "common/log.h"
#include "common/temp_dir.h"
#include "dra/health.h"
#include "dra/node_server.h"
#include "dra/prepare.h"
#include "interop/dra_checkpoint.h"
#include "kube/rest.h"
#include "testing/fake_apiserver.h"
#include "testing/fake_dra_kubelet.h"
#include "testing/test_pki.h"

namespace hcashare {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

constexpr const char* kDriver = "rdma.hcashare.io";
constexpr const char* kPool = "node-a";
constexpr const char* kClaims = "/apis/resource.k8s.io/v1/namespaces/ml/resourceclaims";

double MsSince(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

void Print(const char* what, const std::vector<double>& ms) {
  std::printf("%s n=%zu p50_ms=%.3f p90_ms=%.3f p99_ms=%.3f max_ms=%.3f\n", what, ms.size(),
              bench::Percentile(ms, 0.50), bench::Percentile(ms, 0.90), bench::Percentile(ms, 0.99),
              bench::Percentile(ms, 1.0));
}

int Run(int claims) {
  SetLogLevel(LogLevel::kWarn);  // a line per claim would be timed too
  auto cluster = bench::StartFakeCluster();
  if (!cluster.ok()) return std::fprintf(stderr, "%s\n", cluster.status().ToString().c_str()), 1;
  fake::FakeApiServer* api = cluster->api.get();
  kube::RestClient* client = cluster->client.get();

  TempDir tmp("hcashare-dra-bench-");
  const std::string root = tmp.path() + "/kubelet";
  std::filesystem::create_directories(root + "/plugins_registry");  // the kubelet makes it
  // One VF per claim, as a node with many VFs would have.
  std::map<std::string, dra::PreparableDevice> devices;
  std::vector<fake::FakeClaim> refs;
  for (int i = 0; i < claims; ++i) {
    const std::string dev =
        "pci-0000-3b-" + std::to_string(10 + i / 8) + "-" + std::to_string(i % 8);
    devices[dev] = {dev,
                    "rdma/hca_vfs",
                    "0000:3b:00." + std::to_string(i % 8),
                    {"mlx5_" + std::to_string(i)},
                    {"/dev/infiniband/uverbs" + std::to_string(i)}};
    const std::string name = "claim-" + std::to_string(i);
    json result = {{"request", "nic"}, {"driver", kDriver}, {"pool", kPool}, {"device", dev}};
    json claim = {{"apiVersion", "resource.k8s.io/v1"},
                  {"kind", "ResourceClaim"},
                  {"metadata", {{"name", name}}}};
    claim["spec"]["devices"]["requests"] = json::array();
    claim["status"]["allocation"]["devices"]["results"] = json::array({result});
    api->Seed(kClaims, claim);
    refs.push_back({"ml", api->Get(kClaims, name)["metadata"]["uid"].get<std::string>(), name});
  }
  dra::RestClaimSource source(client, "v1");
  dra::PreparerOptions po;
  po.driver = kDriver;
  po.pool = kPool;
  po.cdi_dir = tmp.path() + "/cdi";
  po.checkpoint_path = dra::CheckpointPath(root, kDriver);
  po.owner = root;
  auto preparer =
      dra::Preparer::Create(po, &source, [&devices](const std::string&, const std::string& device) {
        auto it = devices.find(device);
        return it == devices.end() ? std::nullopt
                                   : std::optional<dra::PreparableDevice>(it->second);
      });
  if (!preparer.ok()) return std::fprintf(stderr, "%s\n", preparer.status().ToString().c_str()), 1;
  dra::HealthSource health;
  dra::NodeServerOptions so;
  so.kubelet_root = root;
  so.driver = kDriver;
  dra::NodeServer server(so, **preparer, health);
  if (Status st = server.Start(); !st.ok())
    return std::fprintf(stderr, "%s\n", st.ToString().c_str()), 1;
  fake::FakeDraKubelet kubelet(root);
  if (auto info = kubelet.Register(kDriver); !info.ok()) {
    return std::fprintf(stderr, "%s\n", info.status().ToString().c_str()), 1;
  }
  // Warm the API client's connection and the kubelet's channel with one claim first.
  auto warm = kubelet.Prepare(fake::DraApi::kV1, {refs[0]});
  if (!warm.ok() || !warm->claims().at(refs[0].uid).error().empty()) {
    return std::fprintf(stderr, "warm-up Prepare failed\n"), 1;
  }
  std::vector<double> first, again, unprepare;
  for (size_t i = 1; i < refs.size(); ++i) {
    auto t = Clock::now();
    auto r = kubelet.Prepare(fake::DraApi::kV1, {refs[i]});
    first.push_back(MsSince(t));
    if (!r.ok() || !r->claims().at(refs[i].uid).error().empty()) {
      return std::fprintf(stderr, "Prepare of %s failed\n", refs[i].name.c_str()), 1;
    }
  }
  for (size_t i = 1; i < refs.size(); ++i) {
    auto t = Clock::now();
    auto r = kubelet.Prepare(fake::DraApi::kV1, {refs[i]});
    again.push_back(MsSince(t));
    if (!r.ok()) return 1;
  }
  for (size_t i = 1; i < refs.size(); ++i) {
    auto t = Clock::now();
    auto r = kubelet.Unprepare(fake::DraApi::kV1, {refs[i]});
    unprepare.push_back(MsSince(t));
    if (!r.ok()) return 1;
  }
  Print("prepare_first", first);
  Print("prepare_again", again);
  Print("unprepare", unprepare);
  return 0;
}

}  // namespace
}  // namespace hcashare

int main(int argc, char** argv) {
  CLI::App app("NodePrepareResources latency against the fake API server and kubelet");
  int claims = 500;
  app.add_option("--claims", claims, "claims prepared, one after another")
      ->check(CLI::Range(2, 4000));
  CLI11_PARSE(app, argc, argv);
  return hcashare::Run(claims);
}
