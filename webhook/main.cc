// hcashare-webhook: the network resources injector. A mutating admission webhook that adds
// the RDMA resource of each NetworkAttachmentDefinition a pod names in its
// k8s.v1.cni.cncf.io/networks annotation to the pod's requests and limits (docs/injector.md).
//
// Exit codes: 0 after SIGTERM/SIGINT, 1 on a start-up failure (no cluster config, the
// certificate does not load, the port cannot be bound), 2 on an invalid command line.
#include <signal.h>

#include <chrono>
#include <iostream>
#include <memory>
#include <string>

#include <CLI/CLI.hpp>

#include "common/log.h"
#include "common/version.h"
#include "http/tls_server.h"
#include "injector/admission.h"
#include "kube/config.h"
#include "kube/informer.h"
#include "kube/rest.h"
#include "metrics/registry.h"
#include "webhook/nad_source.h"
#include "webhook/service.h"

namespace hcashare::webhook {
namespace {

struct Flags {
  std::string tls_cert_file;
  std::string tls_key_file;
  std::string client_ca_file;
  std::string listen_address = ":8443";
  std::string probe_address;  // "": the probes are served on listen_address
  std::string kubeconfig;
  std::string missing_network = "refuse";
  bool downward_api_volume = false;
  size_t cache_max_objects = 50000;  // 73 MiB RSS measured, under the 128 MiB limit
  double shutdown_delay = 5;
  double review_seconds = 4;  // under the shipped webhook configuration's timeoutSeconds: 5
  std::string log_level = "info";
  std::string log_format = "text";
  bool version = false;
};

// The HTTPS server's bounds. An AdmissionReview holds one pod (etcd stores at most 1.5 MiB
// of it); 3 MiB leaves room for the envelope. Four bodies of that size at most are held at
// once, so a client posting large bodies on every connection cannot exhaust memory.
// GETs one review may make while the NAD cache is synced.
constexpr size_t kMaxGetsPerReview = 4;

HttpServerOptions ServerOptions() {
  HttpServerOptions o;
  o.worker_paths = {"/mutate", "/metrics"};
  o.worker_threads = 2;
  // Reviews that must ask the API server (NADs not in the cache) run here, never in front
  // of those the cache answers.
  o.slow_threads = 2;
  o.io_timeout = std::chrono::milliseconds(10000);
  o.max_connections = 128;
  o.max_body_bytes = injector::kMaxAdmissionReviewBytes;
  o.max_body_bytes_in_flight = size_t{12} << 20;
  o.keep_alive = true;  // the API server reuses its connection: one TLS handshake, not one a pod
  return o;
}

int UsageError(const std::string& flag, const std::string& error) {
  if (GetLogFormat() == LogFormat::kJson) {
    LogError("invalid command line", {{"flag", flag}, {"error", error}});
  } else {
    std::cerr << "hcashare-webhook: " << flag << ": " << error << "\n";
  }
  return 2;
}

int Run(int argc, char** argv) {
  Flags f;
  CLI::App app{"hcashare-webhook: adds the RDMA resources of a pod's networks to its requests"};
  app.add_option("--tls-cert-file", f.tls_cert_file,
                 "serving certificate (PEM, chain after it); reloaded when it changes")
      ->required();
  app.add_option("--tls-private-key-file", f.tls_key_file, "its private key (PEM)")->required();
  app.add_option("--client-ca-file", f.client_ca_file,
                 "accept reviews only from clients with a certificate this CA (PEM) signed: "
                 "the API server's, when it is given one (--admission-control-config-file)");
  app.add_option("--listen-address", f.listen_address,
                 "HTTPS on HOST:PORT or :PORT: /mutate, /healthz, /readyz, /metrics")
      ->capture_default_str();
  app.add_option("--probe-address", f.probe_address,
                 "also HTTPS on HOST:PORT, for any client: /healthz, /readyz, /metrics only "
                 "(for the kubelet's probes and scrapers when --client-ca-file is set)");
  app.add_option("--kubeconfig", f.kubeconfig,
                 "kubeconfig file (its current context); the in-cluster config when absent");
  app.add_option(
         "--missing-network", f.missing_network,
         "a pod naming a NetworkAttachmentDefinition that does not exist, or a "
         "malformed networks annotation: refuse, or warn (admit it with a warning; the NADs that "
         "exist still get their resources)")
      ->capture_default_str()
      ->check(CLI::IsMember({"refuse", "warn"}));
  app.add_flag("--downward-api-volume", f.downward_api_volume,
               "also mount the pod's network-status annotation at /etc/podnetinfo");
  app.add_option("--nad-cache-max-objects", f.cache_max_objects,
                 "NetworkAttachmentDefinitions the cache holds at most; past it every "
                 "lookup is a GET")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--review-seconds", f.review_seconds,
                 "answer each review within this long (set it under the webhook "
                 "configuration's timeoutSeconds): a NAD still to be read after it refuses the "
                 "pod with 503, try again, rather than let the API server's call time out")
      ->capture_default_str()
      ->check(CLI::Range(0.1, 30.0));
  app.add_option("--shutdown-delay-seconds", f.shutdown_delay,
                 "after SIGTERM, report not ready and keep serving this long, so that the "
                 "API server stops sending requests before the process leaves")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  app.add_option("--log-level", f.log_level, "debug, info, warn or error")->capture_default_str();
  app.add_option("--log-format", f.log_format, "text or json")->capture_default_str();
  app.add_flag("-v,--version", f.version, "print the version and exit");
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "-v" || std::string(argv[i]) == "--version") {
      std::cout << "hcashare-webhook " << VersionString() << "\n";
      return 0;
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  auto level = ParseLogLevel(f.log_level);
  if (!level.ok()) return UsageError("--log-level", level.status().message());
  auto format = ParseLogFormat(f.log_format);
  if (!format.ok()) return UsageError("--log-format", format.status().message());
  if (Status s = HttpServer::CheckAddress(f.listen_address); !s.ok()) {
    return UsageError("--listen-address", s.message());
  }
  SetLogLevel(*level);
  SetLogFormat(*format);

  sigset_t sigs;
  sigemptyset(&sigs);
  sigaddset(&sigs, SIGTERM);
  sigaddset(&sigs, SIGINT);
  pthread_sigmask(SIG_BLOCK, &sigs, nullptr);

  LogInfo("starting hcashare-webhook", {{"version", VersionString()},
                                        {"listen_address", f.listen_address},
                                        {"kubeconfig", f.kubeconfig},
                                        {"missing_network", f.missing_network},
                                        {"downward_api_volume", f.downward_api_volume}});
  Result<kube::ClusterConfig> cluster = kube::LoadClusterConfig(f.kubeconfig, "");
  if (!cluster.ok()) {
    LogError("no cluster configuration", {{"error", cluster.status().message()}});
    return 1;
  }
  kube::RestOptions rest;
  rest.user_agent = kube::UserAgent("hcashare-webhook");
  rest.qps = 20;  // NAD GETs on cache misses, and the informer's lists and watches
  rest.burst = 40;
  Result<std::unique_ptr<kube::RestClient>> client = kube::RestClient::Create(*cluster, rest);
  if (!client.ok()) {
    LogError("cannot make the API client", {{"error", client.status().message()}});
    return 1;
  }
  metrics::Registry registry;
  metrics::AddProcessMetrics(registry);

  kube::InformerOptions io;
  io.path = kNadCollection;
  io.transform = SlimNad;
  io.max_objects = f.cache_max_objects;
  // Past its bound the cache is tried again now and then: NADs may have been deleted.
  io.retry_after_give_up = std::chrono::minutes(10);
  kube::Informer informer(client->get(), io);
  registry.AddCollector([&registry, &informer] {
    registry
        .GetGauge("hcashare_webhook_nad_cache_objects",
                  "NetworkAttachmentDefinitions in the watched cache.")
        .Set(static_cast<double>(informer.Size()));
    registry
        .GetGauge("hcashare_webhook_nad_cache_synced",
                  "1 while the NAD cache is synced with the API server, else 0.")
        .Set(informer.Synced() ? 1 : 0);
    registry
        .GetGauge("hcashare_webhook_nad_cache_over_bound",
                  "1 while the NAD cache is over its bound: every lookup is a GET (it is "
                  "listed again every 10 minutes).")
        .Set(informer.GaveUp() ? 1 : 0);
  });
  NadSource nads(&informer, client->get(), registry, std::chrono::milliseconds(3000));
  injector::MutateOptions mo;
  mo.refuse_missing = f.missing_network == "refuse";
  mo.downward_api_volume = f.downward_api_volume;
  std::atomic<bool> stopping{false};
  WebhookService service(nads, mo, registry, [&informer, &stopping] {
    if (stopping.load()) return Readiness{false, "shutting down"};
    if (informer.Synced()) return Readiness{true, ""};
    // Past its memory bound every lookup is a GET: slower, but correct; /readyz says so.
    if (informer.GaveUp()) {
      return Readiness{true, "the NAD cache is over its bound (" + informer.LastError().message() +
                                 "); every lookup is a GET until a relist fits"};
    }
    Status last = informer.LastError();
    return Readiness{false, "the NetworkAttachmentDefinition cache is not synced yet" +
                                (last.ok() ? std::string() : ": " + last.message())};
  });
  service.SetReviewBudget(std::chrono::milliseconds(static_cast<int64_t>(f.review_seconds * 1000)));
  // A synced cache misses only NADs created a moment ago: a few GETs per review cover them;
  // a pod naming more absent ones is refused (try again) without holding the slow lane.
  // Past its memory bound the cache answers nothing, and every lookup is a GET.
  service.SetSlowLookupBudget(
      [&informer]() -> size_t { return informer.Synced() ? kMaxGetsPerReview : SIZE_MAX; });
  auto server = HttpsServer::Start(
      f.listen_address, TlsFiles{f.tls_cert_file, f.tls_key_file, f.client_ca_file},
      [&service](const HttpRequest& r) { return service.Handle(r); }, ServerOptions());
  if (!server.ok()) {
    LogError("cannot serve", {{"address", f.listen_address}, {"error", server.status().message()}});
    return 1;
  }
  // The probes' listener: the same serving pair, no client authentication, no reviews.
  std::unique_ptr<HttpsServer> probes;
  if (!f.probe_address.empty()) {
    HttpServerOptions po = ServerOptions();
    po.worker_paths = {"/metrics"};
    po.max_body_bytes = 0;  // no POST
    po.max_body_bytes_in_flight = 0;
    po.slow_threads = 0;
    auto started = HttpsServer::Start(
        f.probe_address, TlsFiles{f.tls_cert_file, f.tls_key_file, ""},
        [&service](const HttpRequest& r) { return service.HandleProbe(r); }, po);
    if (!started.ok()) {
      LogError("cannot serve the probes",
               {{"address", f.probe_address}, {"error", started.status().message()}});
      return 1;
    }
    probes = std::move(started).value();
    LogInfo("probe listener", {{"address", f.probe_address}, {"port", probes->port()}});
  }
  registry.AddCollector([&registry, s = server->get()] {
    registry
        .GetCounter("hcashare_webhook_tls_reloads_total",
                    "Serving certificate pairs loaded after the first.")
        .RaiseTo(static_cast<double>(s->reloads()));
    registry
        .GetCounter("hcashare_webhook_tls_reload_failures_total",
                    "Changed certificate pairs that did not load (the previous pair is kept).")
        .RaiseTo(static_cast<double>(s->reload_failures()));
    registry
        .GetGauge("hcashare_webhook_tls_certificate_expiry_timestamp_seconds",
                  "When the serving certificate in use expires (notAfter, Unix seconds): alert "
                  "well before it, renewal is reloaded without a restart.")
        .Set(static_cast<double>(s->certificate_not_after()));
  });
  if (Status s = informer.Start(); !s.ok()) {
    LogError("cannot start the NAD cache", {{"error", s.message()}});
    return 1;
  }
  LogInfo("serving", {{"address", f.listen_address}, {"port", (*server)->port()}});

  int sig = 0;
  while (sigwait(&sigs, &sig) != 0) {
  }
  LogInfo("shutting down",
          {{"signal", sig == SIGTERM ? "SIGTERM" : "SIGINT"}, {"delay_seconds", f.shutdown_delay}});
  stopping = true;
  // Every answer from now on closes its connection, so the API server's next review opens
  // a new one, to a replica the endpoints still list.
  (*server)->StartDraining();
  // Serving on while the endpoint is removed: a bounded wait for what cannot be observed
  // from here (the API server's view of the endpoints), cut short by a second signal.
  timespec delay{
      static_cast<time_t>(f.shutdown_delay),
      static_cast<long>((f.shutdown_delay - static_cast<time_t>(f.shutdown_delay)) * 1e9)};
  sigtimedwait(&sigs, nullptr, &delay);
  // The reviews already read are answered before the process leaves.
  if (!(*server)->Drain(
          std::chrono::milliseconds(static_cast<int64_t>(f.review_seconds * 1000) + 1000))) {
    LogWarn("reviews still unanswered at exit");
  }
  server->reset();
  probes.reset();
  informer.Stop();
  LogInfo("stopped");
  return 0;
}

}  // namespace
}  // namespace hcashare::webhook

int main(int argc, char** argv) { return hcashare::webhook::Run(argc, argv); }
