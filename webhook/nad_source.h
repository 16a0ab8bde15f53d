// NadSource: how the webhook finds a NetworkAttachmentDefinition for the injector. The
// watched cache (kube::Informer) answers first; a NAD the cache does not hold (created a
// moment ago, or the cache is not synced or gave up on its memory bound) is read with a GET,
// so a miss costs one API call and is never answered from a stale negative. The API
// client's rate limit bounds those calls: a flood of pods naming NADs that do not exist
// makes lookups wait for their slot or fail (the pod is then refused with 503), it does not
// flood the API server.
#pragma once

#include <chrono>
#include <string>

#include <nlohmann/json.hpp>

#include "injector/mutate.h"
#include "kube/informer.h"
#include "kube/rest.h"
#include "metrics/registry.h"

namespace hcashare::webhook {

// The NAD collection of every namespace, as the informer watches it.
inline constexpr char kNadCollection[] = "/apis/k8s.cni.cncf.io/v1/network-attachment-definitions";

// What the cache keeps of a NAD: its name, namespace and the annotations the injector
// reads (injector::kNadAnnotationsRead); the CNI config and everything else are dropped.
nlohmann::json SlimNad(nlohmann::json nad);

class NadSource : public injector::NadLookup {
 public:
  // `informer` may be null (GETs only); both must outlive this. Lookups are counted in
  // `registry` by source (cache, api) and result (found, missing, error).
  NadSource(const kube::Informer* informer, kube::RestClient* client, metrics::Registry& registry,
            std::chrono::milliseconds get_timeout);

  // The injector's lookup: the cache, else a GET. NotFound when the API server says so;
  // Unavailable (naming the NAD) when it cannot be asked.
  Result<injector::NadInfo> Find(const std::string& ns, const std::string& name) override;
  // The same, a GET given at most what is left until `deadline` (Unavailable when nothing is).
  Result<injector::NadInfo> FindBy(const std::string& ns, const std::string& name,
                                   std::chrono::steady_clock::time_point deadline) override;
  // The cache's answer while it is synced; nullopt for a miss (or no synced cache).
  std::optional<Result<injector::NadInfo>> FindQuick(const std::string& ns,
                                                     const std::string& name) override;

 private:
  metrics::Counter& Lookups(const char* source, const char* result);

  const kube::Informer* const informer_;
  kube::RestClient* const client_;
  metrics::Registry& registry_;
  const std::chrono::milliseconds get_timeout_;
};

}  // namespace hcashare::webhook
