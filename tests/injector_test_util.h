// Shared pieces of the injector tests: a map-backed NadLookup, a pod builder, and the
// three-step check every mutation test makes (exact patch, patched pod, idempotent rerun).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "common/status.h"
#include "injector/mutate.h"

namespace hcashare::testing {

using nlohmann::json;

// NADs in a map keyed "ns/name"; counts the lookups of each.
class MapNadLookup : public injector::NadLookup {
 public:
  // Adds NAD ns/name with `resource` ("" for none) and an optional target container.
  MapNadLookup& Add(const std::string& ns, const std::string& name, const std::string& resource,
                    std::optional<std::string> container = std::nullopt) {
    nads_[ns + "/" + name] = injector::NadInfo{resource, std::move(container), std::nullopt};
    return *this;
  }
  // Adds NAD ns/name as `info`.
  MapNadLookup& Set(const std::string& ns, const std::string& name, injector::NadInfo info) {
    nads_[ns + "/" + name] = std::move(info);
    return *this;
  }
  // Makes lookups of ns/name fail with `status`.
  MapNadLookup& Fail(const std::string& ns, const std::string& name, Status status) {
    failures_.emplace(ns + "/" + name, std::move(status));
    return *this;
  }
  Result<injector::NadInfo> Find(const std::string& ns, const std::string& name) override {
    const std::string key = ns + "/" + name;
    ++calls[key];
    if (auto f = failures_.find(key); f != failures_.end()) return f->second;
    auto it = nads_.find(key);
    if (it == nads_.end()) return Status::NotFound("no NAD " + key);
    return it->second;
  }

  std::map<std::string, int> calls;  // lookups per "ns/name"

 private:
  std::map<std::string, injector::NadInfo> nads_;
  std::map<std::string, Status> failures_;
};

// A pod in namespace `ns` with `annotations` and `containers` (an array).
inline json MakePod(const json& annotations, const json& containers, const std::string& ns = "ml") {
  json pod = {{"apiVersion", "v1"},
              {"kind", "Pod"},
              {"metadata", {{"name", "p"}, {"namespace", ns}}},
              {"spec", {{"containers", containers}}}};
  if (!annotations.is_null()) pod["metadata"]["annotations"] = annotations;
  return pod;
}

// A pod whose networks annotation is `networks`, with containers named `names`.
inline json NetPod(const std::string& networks,
                   std::initializer_list<const char*> names = {"app"}) {
  json containers = json::array();
  for (const char* n : names) containers.push_back({{"name", n}, {"image", "busybox"}});
  return MakePod({{"k8s.v1.cni.cncf.io/networks", networks}}, containers);
}

// Mutates `pod`, expects it admitted with exactly `want_patch`; applies the patch (nlohmann's
// RFC 6902 implementation) and expects `want_pod`; mutates the result again and expects an
// empty patch. Returns the first result.
inline injector::MutateResult ExpectMutation(const json& pod, injector::NadLookup& nads,
                                             const json& want_patch, const json& want_pod,
                                             const injector::MutateOptions& options = {}) {
  injector::MutateResult first = injector::Mutate(pod, "", nads, options);
  EXPECT_TRUE(first.allowed) << first.message;
  EXPECT_EQ(first.patch, want_patch) << first.patch.dump(2);
  json patched;
  try {
    patched = pod.patch(first.patch);
  } catch (const std::exception& e) {
    ADD_FAILURE() << "patch does not apply: " << e.what();
    return first;
  }
  EXPECT_EQ(patched, want_pod) << patched.dump(2);
  injector::MutateResult again = injector::Mutate(patched, "", nads, options);
  EXPECT_TRUE(again.allowed) << again.message;
  EXPECT_EQ(again.patch, json::array()) << "not idempotent: " << again.patch.dump(2);
  return first;
}

}  // namespace hcashare::testing
