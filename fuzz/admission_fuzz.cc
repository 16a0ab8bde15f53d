// Fuzzes the injector's AdmissionReview path, ReviewAdmission, on request bodies (the
// webhook's input from any client that reaches it), with a fixed set of NADs: "rdma-a" and
// "rdma-b" in namespace "team-a" (resources rdma/vfs_a and example.com/b~x), "c" in "shared"
// (rdma/vfs_c), "plain" with no resource, and "broken" whose lookup fails. The first byte
// of the input chooses the options (bit 0: --missing-network=warn, bit 1: the downward-API
// volume); the rest is the body.
// Invariants beyond "no crash":
//  - an error is InvalidArgument only (HTTP 400), and then nothing else was decided;
//  - an answer is an AdmissionReview v1 whose response.uid and allowed are the reply's, with
//    a patch only when allowed, and then a base64 JSON array that applies to the pod;
//  - the patched pod, admitted again, gets no patch (the injector is idempotent), and in it
//    every resource the patch touched has request == limit.
#include <cstddef>
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "fuzz/fuzz_check.h"
#include "injector/admission.h"
#include "injector/mutate.h"
#include "json/parse.h"
#include "kube/pem.h"

namespace {

using hcashare::Result;
using hcashare::Status;
using hcashare::StatusCode;
using nlohmann::json;
namespace injector = hcashare::injector;

class FixedNads : public injector::NadLookup {
 public:
  Result<injector::NadInfo> Find(const std::string& ns, const std::string& name) override {
    if (ns == "team-a" && name == "rdma-a") return injector::NadInfo{"rdma/vfs_a", {}, {}};
    if (ns == "team-a" && name == "rdma-b") {
      return injector::NadInfo{"example.com/b~x", {"side"}, {}};
    }
    if (ns == "shared" && name == "c") return injector::NadInfo{"rdma/vfs_c", {}, {}};
    if (ns == "team-a" && name == "plain") return injector::NadInfo{"", {}, {}};
    if (ns == "team-a" && name == "dra") return injector::NadInfo{"rdma/hca_vfs", {}, {"dra"}};
    if (ns == "team-a" && name == "odd") return injector::NadInfo{"rdma/vfs_a", {}, {"Dra"}};
    if (name == "broken") return Status::Unavailable("the API server is down");
    return Status::NotFound("no NAD " + ns + "/" + name);
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  injector::MutateOptions options;
  options.refuse_missing = (data[0] & 1) == 0;
  options.downward_api_volume = (data[0] & 2) != 0;
  const std::string body(reinterpret_cast<const char*>(data) + 1, size - 1);
  FixedNads nads;
  Result<injector::AdmissionReply> reply = injector::ReviewAdmission(body, nads, options);
  if (!reply.ok()) {
    FUZZ_CHECK(reply.status().code() == StatusCode::kInvalidArgument);
    return 0;
  }
  const json answer = json::parse(reply->body, nullptr, /*allow_exceptions=*/false);
  FUZZ_CHECK(answer.is_object());
  FUZZ_CHECK(answer.value("apiVersion", "") == "admission.k8s.io/v1");
  FUZZ_CHECK(answer.value("kind", "") == "AdmissionReview");
  const json& response = answer["response"];
  FUZZ_CHECK(response.is_object());
  FUZZ_CHECK(response.value("uid", "") == reply->uid);
  FUZZ_CHECK(response.value("allowed", !reply->allowed) == reply->allowed);
  if (!response.contains("patch")) {
    FUZZ_CHECK(reply->patch_ops == 0);
    return 0;
  }
  FUZZ_CHECK(reply->allowed);
  FUZZ_CHECK(response.value("patchType", "") == "JSONPatch");
  Result<std::string> raw = hcashare::kube::DecodeBase64(response["patch"].get<std::string>());
  FUZZ_CHECK(raw.ok());
  const json patch = json::parse(*raw, nullptr, /*allow_exceptions=*/false);
  FUZZ_CHECK(patch.is_array() && patch.size() == reply->patch_ops && !patch.empty());

  // The pod as the reply saw it: request.object of a body ReviewAdmission accepted.
  Result<json> review = hcashare::jsonin::ParseJson(body, {/*max_depth=*/128});
  FUZZ_CHECK(review.ok());
  const json& request = (*review)["request"];
  const json& pod = request["object"];
  json patched;
  try {
    patched = pod.patch(patch);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "the patch does not apply: %s\n%s\n", e.what(), patch.dump().c_str());
    FUZZ_CHECK(false);
  }
  const std::string ns = request.value("namespace", "");
  const injector::MutateResult again = injector::Mutate(patched, ns, nads, options);
  if (!again.allowed || !again.patch.empty()) {
    std::fprintf(stderr, "not idempotent: %s\npatch: %s\nagain: %s\n", again.message.c_str(),
                 patch.dump().c_str(), again.patch.dump().c_str());
  }
  FUZZ_CHECK(again.allowed);
  FUZZ_CHECK(again.patch.empty());
  for (const json& c : patched["spec"]["containers"]) {
    if (!c.is_object() || !c.contains("resources")) continue;
    const json& res = c["resources"];
    if (!res.is_object() || !res.contains("requests") || !res.contains("limits")) continue;
    for (const auto& op : patch) {
      const std::string path = op.value("path", "");
      if (path.find("/resources") == std::string::npos) continue;
      for (const auto& [name, q] : res["requests"].items()) {
        if (path.find(injector::EscapeJsonPointer(name)) != std::string::npos) {
          FUZZ_CHECK(res["limits"].contains(name) && res["limits"][name] == q);
        }
      }
    }
  }
  return 0;
}
