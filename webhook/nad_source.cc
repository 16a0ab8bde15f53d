#include "webhook/nad_source.h"

#include <algorithm>

#include <utility>

#include "injector/networks.h"
#include "json/parse.h"
#include "kube/status_error.h"

namespace hcashare::webhook {

using json = nlohmann::json;

constexpr int kMaxNadDepth = 64;  // a NAD's nesting; its CNI config is a string

json SlimNad(json nad) {
  json out = json::object();
  const json* meta = nad.is_object() ? &nad["metadata"] : nullptr;
  if (meta == nullptr || !meta->is_object()) return out;
  json slim_meta = json::object();
  for (const char* key : {"name", "namespace", "resourceVersion"}) {
    if (meta->contains(key)) slim_meta[key] = std::move((*meta)[key]);
  }
  auto ann = meta->find("annotations");
  if (ann != meta->end() && ann->is_object()) {
    json kept = json::object();
    for (const char* key : injector::kNadAnnotationsRead) {
      auto v = ann->find(key);
      if (v == ann->end()) continue;
      // A value longer than any valid one is kept as a short marker (the pod naming the NAD
      // is refused, told why), never whole.
      kept[key] = v->is_string() ? json(injector::CutNadAnnotationValue(v->get<std::string>()))
                                 : json(injector::CutNadAnnotationValue(v->dump()));
    }
    if (!kept.empty()) slim_meta["annotations"] = std::move(kept);
  }
  out["metadata"] = std::move(slim_meta);
  return out;
}

NadSource::NadSource(const kube::Informer* informer, kube::RestClient* client,
                     metrics::Registry& registry, std::chrono::milliseconds get_timeout)
    : informer_(informer), client_(client), registry_(registry), get_timeout_(get_timeout) {}

metrics::Counter& NadSource::Lookups(const char* source, const char* result) {
  return registry_.GetCounter("hcashare_webhook_nad_lookups_total",
                              "NetworkAttachmentDefinition lookups, by where they were "
                              "answered (cache, api) and their result (found, missing, error).",
                              {{"source", source}, {"result", result}});
}

Result<injector::NadInfo> NadSource::Find(const std::string& ns, const std::string& name) {
  return FindBy(ns, name, std::chrono::steady_clock::time_point::max());
}

std::optional<Result<injector::NadInfo>> NadSource::FindQuick(const std::string& ns,
                                                              const std::string& name) {
  if (informer_ == nullptr || !informer_->Synced()) return std::nullopt;
  kube::CachedObject nad = informer_->Get(ns, name);
  if (!nad) return std::nullopt;
  Lookups("cache", "found").Inc();
  return Result<injector::NadInfo>(injector::NadInfoFromObject(*nad));
}

Result<injector::NadInfo> NadSource::FindBy(const std::string& ns, const std::string& name,
                                            std::chrono::steady_clock::time_point deadline) {
  const std::string what = "NetworkAttachmentDefinition " + ns + "/" + name;
  // The parser admits only DNS names; checked again because they become a URL path here.
  if (!injector::IsDns1123Label(ns) || !injector::IsDns1123Subdomain(name)) {
    return Status::InvalidArgument(what + ": not a valid namespace and name");
  }
  if (informer_ != nullptr && informer_->Synced()) {
    if (kube::CachedObject nad = informer_->Get(ns, name)) {
      Lookups("cache", "found").Inc();
      return injector::NadInfoFromObject(*nad);
    }
  }
  kube::Request get;
  get.path =
      "/apis/k8s.cni.cncf.io/v1/namespaces/" + ns + "/network-attachment-definitions/" + name;
  get.timeout = get_timeout_;
  if (deadline != std::chrono::steady_clock::time_point::max()) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      Lookups("api", "error").Inc();
      return Status::Unavailable("cannot read " + what + ": the review's time is up");
    }
    get.timeout = std::min(get.timeout, left);
  }
  Result<kube::Response> r = client_->Call(get);
  if (!r.ok()) {
    if (kube::IsNotFound(r.status())) {
      Lookups("api", "missing").Inc();
      return Status::NotFound(what + " does not exist");
    }
    Lookups("api", "error").Inc();
    return Status::Unavailable("cannot read " + what + ": " + r.status().message());
  }
  Result<json> nad = jsonin::ParseJson(r->body, {/*max_depth=*/kMaxNadDepth});
  if (!nad.ok() || !nad->is_object()) {
    Lookups("api", "error").Inc();
    return Status::Unavailable("cannot read " + what +
                               ": the API server's answer is not an object");
  }
  Lookups("api", "found").Inc();
  return injector::NadInfoFromObject(*nad);
}

}  // namespace hcashare::webhook
