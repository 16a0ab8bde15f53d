#include "webhook/service.h"

#include <chrono>
#include <cstdint>
#include <utility>

#include "common/log.h"
#include "injector/admission.h"

namespace hcashare::webhook {

namespace {

// One review's lookups on its lane: on the workers' lane quick ones only (a miss is
// remembered, and the review deferred); on the slow lane at most `max_slow` slow ones.
class LaneLookup final : public injector::NadLookup {
 public:
  LaneLookup(injector::NadLookup& inner, bool quick_only, size_t max_slow)
      : inner_(inner), quick_only_(quick_only), max_slow_(max_slow) {}
  Result<injector::NadInfo> Find(const std::string& ns, const std::string& name) override {
    return FindBy(ns, name, std::chrono::steady_clock::time_point::max());
  }
  Result<injector::NadInfo> FindBy(const std::string& ns, const std::string& name,
                                   std::chrono::steady_clock::time_point deadline) override {
    if (auto quick = inner_.FindQuick(ns, name)) return std::move(*quick);
    if (quick_only_) {
      missed_ = true;
      return Status::Unavailable("not in the cache");
    }
    if (slow_ >= max_slow_) {
      return Status::Unavailable("more than " + std::to_string(max_slow_) +
                                 " of the pod's NetworkAttachmentDefinitions are not in the "
                                 "cache (" +
                                 ns + "/" + name + " among them); try again");
    }
    ++slow_;
    return inner_.FindBy(ns, name, deadline);
  }
  bool missed() const { return missed_; }

 private:
  injector::NadLookup& inner_;
  const bool quick_only_;
  const size_t max_slow_;
  size_t slow_ = 0;
  bool missed_ = false;
};

HttpResponse Text(int status, std::string body) {
  HttpResponse r;
  r.status = status;
  r.body = std::move(body);
  return r;
}

}  // namespace

WebhookService::WebhookService(injector::NadLookup& nads, injector::MutateOptions options,
                               metrics::Registry& registry, std::function<Readiness()> readiness)
    : nads_(nads),
      options_(options),
      registry_(registry),
      readiness_(std::move(readiness)),
      latency_(registry.GetHistogram(
          "hcashare_webhook_request_duration_seconds",
          "Time to answer one AdmissionReview, from the whole request to the answer.",
          {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5})) {}

void WebhookService::Count(const char* result) {
  registry_
      .GetCounter("hcashare_webhook_requests_total",
                  "AdmissionReview requests by result: patched (resources added), allowed "
                  "(nothing to add), denied, invalid (not an AdmissionReview: HTTP 400).",
                  {{"result", result}})
      .Inc();
}

HttpResponse WebhookService::Handle(const HttpRequest& request) {
  if (request.path == "/mutate") {
    if (request.method != "POST") return Text(405, "POST an AdmissionReview\n");
    return Mutate(request);
  }
  if (request.method == "POST") return Text(405, "only /mutate takes POST\n");
  if (request.path == "/healthz") return Text(200, "ok\n");
  if (request.path == "/readyz") {
    Readiness r = readiness_();
    if (r.ready) return Text(200, r.reason.empty() ? "ok\n" : "ok, but " + r.reason + "\n");
    return Text(503, "not ready: " + r.reason + "\n");
  }
  if (request.path == "/metrics") {
    HttpResponse r = Text(200, registry_.Render());
    r.content_type = "text/plain; version=0.0.4; charset=utf-8";
    return r;
  }
  return Text(404, "not found\n");
}

HttpResponse WebhookService::HandleProbe(const HttpRequest& request) {
  if (request.method != "GET" || request.path == "/mutate") {
    return Text(404, "reviews are served on the webhook's listen address, not here\n");
  }
  return Handle(request);
}

HttpResponse WebhookService::Mutate(const HttpRequest& request) {
  const auto start = std::chrono::steady_clock::now();
  injector::MutateOptions options = options_;
  // From when the request was read: time spent queued counts.
  const auto received =
      request.received == std::chrono::steady_clock::time_point{} ? start : request.received;
  if (review_budget_.count() > 0) options.deadline = received + review_budget_;
  const size_t max_slow = slow_budget_ ? slow_budget_() : SIZE_MAX;
  LaneLookup lookups(nads_, /*quick_only=*/!request.slow_lane, max_slow);
  Result<injector::AdmissionReply> reply =
      injector::ReviewAdmission(request.body, lookups, options);
  if (lookups.missed()) {
    registry_
        .GetCounter("hcashare_webhook_reviews_deferred_total",
                    "Reviews that needed the API server (NADs not in the cache), answered on "
                    "the slow lane so that cached ones never wait behind them.")
        .Inc();
    return HttpResponse::Deferred();
  }
  const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
  latency_.Observe(took.count());
  if (!reply.ok()) {
    Count("invalid");
    LogWarn("not an AdmissionReview", {{"error", reply.status().message()}});
    return Text(400, reply.status().message() + "\n");
  }
  const char* result = !reply->allowed ? "denied" : reply->patch_ops > 0 ? "patched" : "allowed";
  Count(result);
  // Pods with nothing to add are the common case: logged only at debug level.
  const LogLevel level = !reply->allowed        ? LogLevel::kWarn
                         : reply->patch_ops > 0 ? LogLevel::kInfo
                                                : LogLevel::kDebug;
  Log(level, "admission",
      {{"uid", reply->uid},
       {"pod", reply->pod},
       {"result", result},
       {"patch_ops", reply->patch_ops},
       {"message", reply->message},
       {"warnings", reply->warnings}});
  HttpResponse r;
  r.content_type = "application/json";
  r.body = std::move(reply->body);
  return r;
}

}  // namespace hcashare::webhook
