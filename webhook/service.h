// WebhookService: the HTTP side of hcashare-webhook. Routes the HTTPS server's requests:
//   POST /mutate   an AdmissionReview v1 for the injector (injector/admission.h);
//   GET  /healthz  200 while the process serves;
//   GET  /readyz   200 once the NAD cache is synced (or has given up on its memory bound,
//                  when every lookup is a GET), else 503 saying why;
//   GET  /metrics  Prometheus text: requests by result, latency, the NAD cache.
// Handle() is thread-safe: /mutate runs on the server's worker threads. A review whose
// lookups all answer quickly (the NAD cache) is answered there; one that would wait for the
// API server is deferred to the server's slow lane (HttpResponse::Deferred) and done again
// there, so that reviews answered from the cache never wait behind cache misses.
#pragma once

#include <chrono>
#include <functional>
#include <string>

#include "http/server.h"
#include "injector/mutate.h"
#include "metrics/registry.h"

namespace hcashare::webhook {

// What /readyz says: ready, or why not.
struct Readiness {
  bool ready = false;
  std::string reason;  // why not ready; when ready, what is degraded ("" for nothing)
};

class WebhookService {
 public:
  // `nads` and `registry` must outlive the service; `readiness` is asked on every /readyz.
  WebhookService(injector::NadLookup& nads, injector::MutateOptions options,
                 metrics::Registry& registry, std::function<Readiness()> readiness);

  // How long a review may take, from when its request was read (MutateOptions::deadline):
  // queued past it, it is answered at once. None by default. Set before serving.
  void SetReviewBudget(std::chrono::milliseconds budget) { review_budget_ = budget; }
  // The most lookups one review may make that are not quick (NadLookup::FindQuick: GETs on
  // cache misses), asked per review; past it the pod is refused with 503 (try again).
  // Unset: no limit. Set before serving.
  void SetSlowLookupBudget(std::function<size_t()> budget) { slow_budget_ = std::move(budget); }

  // The answer to one request (see the file comment); unknown paths get 404.
  HttpResponse Handle(const HttpRequest& request);
  // The same on the probes' listener (--probe-address), which serves any client: GET
  // /healthz, /readyz and /metrics only; reviews get 404.
  HttpResponse HandleProbe(const HttpRequest& request);

 private:
  HttpResponse Mutate(const HttpRequest& request);
  void Count(const char* result);

  injector::NadLookup& nads_;
  const injector::MutateOptions options_;
  std::chrono::milliseconds review_budget_{0};  // 0: no deadline
  std::function<size_t()> slow_budget_;         // unset: no limit
  metrics::Registry& registry_;
  const std::function<Readiness()> readiness_;
  metrics::Histogram& latency_;
};

}  // namespace hcashare::webhook
