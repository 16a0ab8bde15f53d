// webhook_bench: hcashare-webhook under admission load (issue 26's targets: p99 under 5 ms at
// 200 requests/s with a warm cache; memory under the Deployment's limit with 10,000 NADs).
//
// Starts the fake API server (in this process, HTTPS) holding --nads NADs over 100
// namespaces, each with a CNI config as a real NAD carries, then the real hcashare-webhook
// against it, and waits until /readyz says the cache is synced. Then it sends
// AdmissionReviews open-loop: request i is due at start + i/rate, whatever happened to the
// earlier ones, and its latency counts from when it was due (so a stall delays every request
// behind it, as the API server would see). Each request is a new TLS connection, as the
// webhook closes every connection, and names two random NADs of its namespace.
//
// --keep-alive sends each thread's requests over one TLS connection kept open, as the API
// server does; without it, each request is a new connection (the worst case).
//
// --no-cache runs the same load with the cache turned off (--nad-cache-max-objects 1: every
// lookup is a GET to the API server), the cost a cold or failed informer has, and what an
// injector without one pays on every pod.
//
// --miss-flood N adds N clients that, during the load, send pods naming 128 NADs that do not
// exist as fast as they can (each over its own kept connection, waiting for its answer):
// issue 34's attacker. Their reviews are counted (miss_reviews=) and not in the latencies.
//
// --relist, after the load, has the API server end the NAD watch with 410 (as after its
// restart or a compaction) and measures the relist: relist_ms until the new watch starts,
// relist_hwm_kib the webhook's peak memory during it (VmHWM reset first).
//
// --hostile-nads adds a tenant's NADs as issue 34 describes them, in namespace ns-hostile:
// 60 whose spec.config is 1 MiB and 128 whose resourceName annotation is 256 KiB (92 MiB
// of list answers). --webhook PATH runs another build (a baseline); --ready-seconds N
// bounds the wait for /readyz (a webhook that never gets Ready prints ready=no and its
// peak memory, and exits 1).
//
// Prints one line: webhook nads=N rate=R requests=N errors=N p50_ms= p90_ms= p99_ms= max_ms=
// decision_mean_us= (the webhook's own histogram: body in, answer out) sync_ms= rss_kib=
// hwm_kib= (the webhook's VmRSS after the load and its peak, VmHWM) hostile_hwm_kib= (its
// peak after 8 bodies at the cap at once, each a million empty objects).
#include <signal.h>

#include <atomic>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <optional>
#include <random>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/bench_util.h"
#include "common/process.h"
#include "common/temp_dir.h"
#include "injector/admission.h"
#include "kube/rest.h"
#include "testing/fake_apiserver.h"
#include "testing/test_pki.h"

namespace hcashare {
namespace {

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

struct Args {
  int nads = 10000;
  double rate = 200;
  double seconds = 10;
  int threads = 4;
  bool no_cache = false;
  bool keep_alive = false;
  int miss_flood = 0;
  bool hostile_nads = false;
  bool relist = false;
  std::string webhook;  // the binary; "" for hcashare-webhook beside this one
  int ready_seconds = 120;
};

// One TLS connection kept open across requests, as the API server keeps its connection to
// a webhook (HTTP keep-alive); reconnects when the webhook closed it.
class KeptConnection {
 public:
  KeptConnection(int port, const std::string& ca_pem)
      : port_(port), ctx_(boost::asio::ssl::context::tls_client) {
    ctx_.add_certificate_authority(boost::asio::buffer(ca_pem));
    ctx_.set_verify_mode(boost::asio::ssl::verify_peer);
  }

  // The answer's body to POST /mutate of `body`; "" on any failure.
  std::string Post(const std::string& body) {
    namespace bhttp = boost::beast::http;
    try {
      if (!stream_) Connect();
      bhttp::request<bhttp::string_body> req(bhttp::verb::post, "/mutate?timeout=5s", 11);
      req.set(bhttp::field::host, "127.0.0.1");
      req.set(bhttp::field::content_type, "application/json");
      req.body() = body;
      req.prepare_payload();
      boost::beast::get_lowest_layer(*stream_).expires_after(std::chrono::seconds(5));
      bhttp::write(*stream_, req);
      bhttp::response<bhttp::string_body> res;
      bhttp::read(*stream_, buffer_, res);
      if (!res.keep_alive()) stream_.reset();
      return res.result_int() == 200 ? res.body() : "";
    } catch (const std::exception&) {
      stream_.reset();
      return "";
    }
  }

 private:
  void Connect() {
    stream_.emplace(io_, ctx_);
    auto& tcp = boost::beast::get_lowest_layer(*stream_);
    tcp.expires_after(std::chrono::seconds(5));
    tcp.connect(boost::asio::ip::tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"),
                                               static_cast<unsigned short>(port_)));
    stream_->handshake(boost::asio::ssl::stream_base::client);
    buffer_.clear();
  }

  const int port_;
  boost::asio::io_context io_;
  boost::asio::ssl::context ctx_;
  std::optional<boost::beast::ssl_stream<boost::beast::tcp_stream>> stream_;
  boost::beast::flat_buffer buffer_;
};

// A pod of namespace ns-0 naming 128 NADs that do not exist.
std::string MissReview(int uid) {
  std::string networks;
  for (int i = 0; i < 128; ++i)
    networks += (i ? "," : "") + std::string("absent-") + std::to_string(i);
  json r = {{"apiVersion", "admission.k8s.io/v1"},
            {"kind", "AdmissionReview"},
            {"request",
             {{"uid", "miss-" + std::to_string(uid)},
              {"kind", {{"group", ""}, {"version", "v1"}, {"kind", "Pod"}}},
              {"resource", {{"group", ""}, {"version", "v1"}, {"resource", "pods"}}},
              {"namespace", "ns-0"},
              {"operation", "CREATE"},
              {"object",
               {{"apiVersion", "v1"},
                {"kind", "Pod"},
                {"metadata",
                 {{"name", "flood"},
                  {"namespace", "ns-0"},
                  {"annotations", {{"k8s.v1.cni.cncf.io/networks", networks}}}}},
                {"spec", {{"containers", json::array({{{"name", "main"}, {"image", "x"}}})}}}}}}}};
  return r.dump();
}

std::string Review(int ns, int a, int b, int uid) {
  json pod = {
      {"apiVersion", "v1"},
      {"kind", "Pod"},
      {"metadata",
       {{"name", "trainer-" + std::to_string(uid)},
        {"namespace", "ns-" + std::to_string(ns)},
        {"annotations",
         {{"k8s.v1.cni.cncf.io/networks",
           "nad-" + std::to_string(a) + ", nad-" + std::to_string(b) + "@net2"}}}}},
      {"spec",
       {{"containers", json::array({{{"name", "main"},
                                     {"image", "registry.example/train:1"},
                                     {"resources", {{"limits", {{"nvidia.com/gpu", "8"}}}}}}})}}}};
  json r = {{"apiVersion", "admission.k8s.io/v1"},
            {"kind", "AdmissionReview"},
            {"request",
             {{"uid", "uid-" + std::to_string(uid)},
              {"kind", {{"group", ""}, {"version", "v1"}, {"kind", "Pod"}}},
              {"resource", {{"group", ""}, {"version", "v1"}, {"resource", "pods"}}},
              {"namespace", "ns-" + std::to_string(ns)},
              {"operation", "CREATE"},
              {"object", pod}}}};
  return r.dump();
}

int Run(const Args& args) {
  TempDir dir;
  auto pki = fake::TestPki::Create("bench-ca");
  if (!pki.ok()) return 1;
  auto api = fake::FakeApiServer::Start(pki->get());
  if (!api.ok()) {
    std::fprintf(stderr, "fake API server: %s\n", api.status().ToString().c_str());
    return 1;
  }
  const int per_ns = std::max(1, args.nads / 100);
  for (int i = 0; i < args.nads; ++i) {
    const int ns = i / per_ns;
    json nad = {
        {"apiVersion", "k8s.cni.cncf.io/v1"},
        {"kind", "NetworkAttachmentDefinition"},
        {"metadata",
         {{"name", "nad-" + std::to_string(i % per_ns)},
          {"annotations",
           {{"k8s.v1.cni.cncf.io/resourceName", "rdma/vfs_" + std::to_string(i % 8)}}}}},
        {"spec",
         {{"config",
           R"({"cniVersion":"1.0.0","name":"rdma-net","type":"hcashare-cni","vlan":100,)"
           R"("ipam":{"type":"whereabouts","range":"192.168.0.0/16","exclude":["192.168.0.1/32"]}})"}}}};
    (*api)->Seed("/apis/k8s.cni.cncf.io/v1/namespaces/ns-" + std::to_string(ns) +
                     "/network-attachment-definitions",
                 nad);
  }
  if (args.hostile_nads) {
    const std::string tenant =
        "/apis/k8s.cni.cncf.io/v1/namespaces/ns-hostile/"
        "network-attachment-definitions";
    const std::string big_config = R"({"cniVersion":"1.0.0","name":"x","type":"macvlan","pad":")" +
                                   std::string(1 << 20, 'p') + R"("})";
    for (int i = 0; i < 60; ++i) {
      (*api)->Seed(tenant, {{"apiVersion", "k8s.cni.cncf.io/v1"},
                            {"kind", "NetworkAttachmentDefinition"},
                            {"metadata", {{"name", "big-config-" + std::to_string(i)}}},
                            {"spec", {{"config", big_config}}}});
    }
    for (int i = 0; i < 128; ++i) {
      (*api)->Seed(
          tenant,
          {{"apiVersion", "k8s.cni.cncf.io/v1"},
           {"kind", "NetworkAttachmentDefinition"},
           {"metadata",
            {{"name", "big-annotation-" + std::to_string(i)},
             {"annotations", {{"k8s.v1.cni.cncf.io/resourceName", std::string(256 << 10, 'r')}}}}},
           {"spec", {{"config", R"({"cniVersion":"1.0.0","type":"macvlan"})"}}}});
    }
  }
  std::ofstream(dir.path() + "/kubeconfig")
      << "apiVersion: v1\nkind: Config\ncurrent-context: b\nclusters:\n- name: f\n  cluster:\n"
         "    server: "
      << (*api)->url()
      << "\n    certificate-authority-data: " << injector::EncodeBase64((*pki)->ca_pem())
      << "\nusers:\n- name: u\n  user:\n    token: test-token\n"
         "contexts:\n- name: b\n  context: {cluster: f, user: u}\n";
  auto pair = (*pki)->IssueServer("hcashare-injector", {"IP:127.0.0.1"});
  if (!pair.ok()) return 1;
  std::ofstream(dir.path() + "/tls.crt") << pair->cert_pem;
  std::ofstream(dir.path() + "/tls.key") << pair->key_pem;

  const std::string bin = args.webhook.empty() ? SelfDir() + "/hcashare-webhook" : args.webhook;
  std::vector<std::string> argv = {bin,
                                   "--tls-cert-file=" + dir.path() + "/tls.crt",
                                   "--tls-private-key-file=" + dir.path() + "/tls.key",
                                   "--listen-address=127.0.0.1:0",
                                   "--kubeconfig=" + dir.path() + "/kubeconfig",
                                   "--shutdown-delay-seconds=0"};
  if (args.no_cache) argv.push_back("--nad-cache-max-objects=1");
  const std::string log_path = dir.path() + "/webhook.log";
  const auto started = Clock::now();
  auto proc = Subprocess::Spawn(argv, log_path);
  if (!proc.ok()) {
    std::fprintf(stderr, "%s\n", proc.status().ToString().c_str());
    return 1;
  }
  // The port from the start-up line.
  int port = 0;
  const std::regex port_re("serving .*port=([0-9]+)");
  kube::ClusterConfig c;
  c.ca_pem = (*pki)->ca_pem();
  c.source = "bench";
  std::unique_ptr<kube::RestClient> client;
  for (int i = 0; i < 6000 && client == nullptr; ++i) {
    std::ifstream in(log_path);
    std::stringstream ss;
    ss << in.rdbuf();
    std::smatch m;
    const std::string log = ss.str();
    if (std::regex_search(log, m, port_re)) {
      port = std::stoi(m[1]);
      c.server = "https://127.0.0.1:" + std::to_string(port);
      c.url = kube::ParseServerUrl(c.server, "bench").value();
      kube::RestOptions o;
      o.qps = 0;
      o.timeout = std::chrono::milliseconds(5000);
      client = std::move(kube::RestClient::Create(c, o)).value();
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));  // polling the log file
  }
  if (client == nullptr) {
    std::fprintf(stderr, "the webhook did not start\n");
    return 1;
  }
  for (;;) {
    auto r = client->Do({kube::Verb::kGet, "/readyz", "", "", std::chrono::milliseconds(0)});
    if (r.ok() && r->status == 200) break;
    if (Clock::now() - started > std::chrono::seconds(args.ready_seconds)) {
      std::printf("webhook nads=%d hostile_nads=%s ready=no after_s=%d hwm_kib=%ld\n", args.nads,
                  args.hostile_nads ? "yes" : "no", args.ready_seconds,
                  bench::ProcStatusKib(proc->pid(), "VmHWM:"));
      (void)proc->Signal(SIGTERM);
      (void)proc->Wait(std::chrono::milliseconds(5000));
      return 1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));  // polling readiness
  }
  const double sync_ms = std::chrono::duration<double, std::milli>(Clock::now() - started).count();

  // The attackers, until the load is done.
  std::atomic<bool> load_done{false};
  std::atomic<int> miss_reviews{0};
  std::vector<std::thread> flood;
  for (int f = 0; f < args.miss_flood; ++f) {
    flood.emplace_back([&, f] {
      KeptConnection kept(port, (*pki)->ca_pem());
      for (int i = 0; !load_done.load(); ++i) {
        (void)kept.Post(MissReview(f * 1000000 + i));
        ++miss_reviews;
      }
    });
  }
  const int total = static_cast<int>(args.rate * args.seconds);
  std::vector<double> latency(static_cast<size_t>(total), 0);
  std::atomic<int> errors{0};
  const auto t0 = Clock::now() + std::chrono::milliseconds(100);
  std::vector<std::thread> threads;
  for (int t = 0; t < args.threads; ++t) {
    threads.emplace_back([&, t] {
      kube::RestOptions o;
      o.qps = 0;
      o.timeout = std::chrono::milliseconds(5000);
      auto cl = std::move(kube::RestClient::Create(c, o)).value();
      KeptConnection kept(port, (*pki)->ca_pem());
      std::mt19937 rng(static_cast<unsigned>(t + 1));
      for (int i = t; i < total; i += args.threads) {
        const auto due = t0 + std::chrono::nanoseconds(static_cast<long long>(i * 1e9 / args.rate));
        std::this_thread::sleep_until(due);  // the load's schedule
        const int ns = static_cast<int>(rng() % 100);
        const int a = static_cast<int>(rng() % static_cast<unsigned>(per_ns));
        const int b = static_cast<int>(rng() % static_cast<unsigned>(per_ns));
        std::string answer;
        if (args.keep_alive) {
          answer = kept.Post(Review(ns, a, b, i));
        } else {
          kube::Request req;
          req.verb = kube::Verb::kPost;
          req.path = "/mutate?timeout=5s";
          req.body = Review(ns, a, b, i);
          auto r = cl->Do(req);
          if (r.ok() && r->status == 200) answer = std::move(r->body);
        }
        latency[static_cast<size_t>(i)] =
            std::chrono::duration<double, std::milli>(Clock::now() - due).count();
        if (answer.find("\"patch\"") == std::string::npos) ++errors;
      }
    });
  }
  for (auto& th : threads) th.join();
  load_done = true;
  for (auto& th : flood) th.join();
  // The decision alone (the whole body to the answer, inside the webhook): its mean.
  double decision_us = -1;
  if (auto m = client->Do({kube::Verb::kGet, "/metrics", "", "", std::chrono::milliseconds(0)});
      m.ok()) {
    auto sample = [&](const std::string& name) {
      const size_t at = m->body.find("\n" + name + " ");
      return at == std::string::npos ? -1.0 : std::atof(m->body.c_str() + at + name.size() + 2);
    };
    const double sum = sample("hcashare_webhook_request_duration_seconds_sum");
    const double count = sample("hcashare_webhook_request_duration_seconds_count");
    if (sum >= 0 && count > 0) decision_us = sum / count * 1e6;
  }
  const long rss = bench::ProcStatusKib(proc->pid(), "VmRSS:");
  const long hwm = bench::ProcStatusKib(proc->pid(), "VmHWM:");
  double relist_ms = -1;
  long relist_hwm = -1;
  if (args.relist) {
    std::ofstream("/proc/" + std::to_string(proc->pid()) + "/clear_refs") << "5";  // VmHWM := RSS
    auto watches = [&] {
      int n = 0;
      for (const auto& r : (*api)->Requests()) n += r.target.find("watch=") != std::string::npos;
      return n;
    };
    (*api)->ClearRequests();  // its log keeps the last 100 requests: a relist's pages fill it
    const auto t = Clock::now();
    (*api)->ExpireWatches();
    while (watches() == 0 && Clock::now() - t < std::chrono::seconds(120)) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));  // polling the fake's log
    }
    relist_ms = std::chrono::duration<double, std::milli>(Clock::now() - t).count();
    relist_hwm = bench::ProcStatusKib(proc->pid(), "VmHWM:");
  }
  // Then the worst a client can send: 8 bodies at once, each at the cap and made of the
  // values that cost the most once parsed (empty objects). Their answers do not matter
  // (400, 503, or the connection closed); the webhook's peak memory does.
  std::string hostile =
      R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","junk":[{})";
  while (hostile.size() + 8 < injector::kMaxAdmissionReviewBytes) hostile += ",{}";
  hostile += "]}";
  std::vector<std::thread> attackers;
  for (int t = 0; t < 8; ++t) {
    attackers.emplace_back([&] {
      kube::RestOptions o;
      o.qps = 0;
      o.timeout = std::chrono::milliseconds(20000);
      auto cl = std::move(kube::RestClient::Create(c, o)).value();
      (void)cl->Do({kube::Verb::kPost, "/mutate", hostile, "application/json",
                    std::chrono::milliseconds(0)});
    });
  }
  for (auto& th : attackers) th.join();
  const long hostile_hwm = bench::ProcStatusKib(proc->pid(), "VmHWM:");
  (void)proc->Signal(SIGTERM);
  (void)proc->Wait(std::chrono::milliseconds(5000));
  std::printf(
      "webhook nads=%d hostile_nads=%s ready=yes cache=%s keep_alive=%s miss_flood=%d "
      "miss_reviews=%d rate=%.0f requests=%d errors=%d p50_ms=%.2f p90_ms=%.2f "
      "p99_ms=%.2f max_ms=%.2f decision_mean_us=%.0f sync_ms=%.0f rss_kib=%ld hwm_kib=%ld "
      "hostile_hwm_kib=%ld relist_ms=%.0f relist_hwm_kib=%ld\n",
      args.nads, args.hostile_nads ? "yes" : "no", args.no_cache ? "off" : "on",
      args.keep_alive ? "on" : "off", args.miss_flood, miss_reviews.load(), args.rate, total,
      errors.load(), bench::Percentile(latency, 0.5), bench::Percentile(latency, 0.9),
      bench::Percentile(latency, 0.99), bench::Percentile(latency, 1.0), decision_us, sync_ms, rss,
      hwm, hostile_hwm, relist_ms, relist_hwm);
  return errors.load() == 0 ? 0 : 1;
}

}  // namespace
}  // namespace hcashare

int main(int argc, char** argv) {
  hcashare::Args args;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string { return i + 1 < argc ? argv[++i] : ""; };
    if (a == "--nads") {
      args.nads = std::atoi(next().c_str());
    } else if (a == "--rate") {
      args.rate = std::atof(next().c_str());
    } else if (a == "--seconds") {
      args.seconds = std::atof(next().c_str());
    } else if (a == "--threads") {
      args.threads = std::atoi(next().c_str());
    } else if (a == "--no-cache") {
      args.no_cache = true;
    } else if (a == "--keep-alive") {
      args.keep_alive = true;
    } else if (a == "--miss-flood") {
      args.miss_flood = std::atoi(next().c_str());
    } else if (a == "--relist") {
      args.relist = true;
    } else if (a == "--hostile-nads") {
      args.hostile_nads = true;
    } else if (a == "--webhook") {
      args.webhook = next();
    } else if (a == "--ready-seconds") {
      args.ready_seconds = std::atoi(next().c_str());
    } else {
      std::fprintf(stderr,
                   "usage: webhook_bench [--nads N] [--rate R] [--seconds S] [--threads T] "
                   "[--no-cache] [--keep-alive] [--miss-flood N] [--hostile-nads] "
                   "[--webhook PATH] [--ready-seconds N] [--relist]\n");
      return 2;
    }
  }
  if (args.nads < 100 || args.rate <= 0 || args.seconds <= 0 || args.threads < 1) return 2;
  return hcashare::Run(args);
}
