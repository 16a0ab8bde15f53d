#include "webhook/service.h"

#include <chrono>
#include <utility>

#include "common/log.h"
#include "injector/admission.h"

namespace hcashare::webhook {

namespace {

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
    return r.ready ? Text(200, "ok\n") : Text(503, "not ready: " + r.reason + "\n");
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
  if (review_budget_.count() > 0) options.deadline = start + review_budget_;
  Result<injector::AdmissionReply> reply = injector::ReviewAdmission(request.body, nads_, options);
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
