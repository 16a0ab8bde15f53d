// The admission.k8s.io/v1 AdmissionReview around Mutate: decodes the API server's request,
// decides for the pod and encodes the response the API server expects (response.uid echoed,
// allowed, a base64 JSONPatch when there is one, warnings, and status when refused).
//
// Only CREATE of a pod (resource "pods", no subresource) is mutated. UPDATE is admitted
// unchanged, whatever Mutate says: Kubernetes forbids changing a pod's container resources
// after creation, so a patch would fail the update (and a refusal would block it) - for a
// pod made before the webhook existed that could block even the removal of its finalizers.
// What Mutate would have added or refused is reported as a warning instead. Every other
// operation, kind or subresource is admitted unchanged.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "injector/mutate.h"

namespace hcashare::injector {

// The largest request body accepted: twice the largest pod the API server can store (etcd's
// default object limit is 1.5 MiB) with room for the envelope, so only garbage is refused.
// hcashare-webhook's HTTPS server takes no larger body.
inline constexpr size_t kMaxAdmissionReviewBytes = size_t{3} << 20;
// The most JSON values one request may hold (see admission.cc).
inline constexpr size_t kMaxAdmissionReviewValues = 200000;
// Warnings sent back, at most, and the bytes of each (the API server cuts longer ones).
inline constexpr size_t kMaxWarnings = 16;
inline constexpr size_t kMaxWarningBytes = 256;

// The answer to one AdmissionReview, and what the server may log about it.
struct AdmissionReply {
  std::string uid;                    // request.uid, echoed
  std::string pod;                    // "ns/name" (or "ns/generateName*") for logs
  bool allowed = true;                // response.allowed
  std::string message;                // Mutate's message (the refusal's text when refused)
  size_t patch_ops = 0;               // operations in the patch sent (0: none sent)
  std::vector<std::string> warnings;  // as sent
  std::string body;  // the response AdmissionReview, JSON text for an HTTP 200 answer
};

// Handles one AdmissionReview request body. InvalidArgument (answer HTTP 400) only when
// `body` is not an AdmissionReview: larger than kMaxAdmissionReviewBytes, not JSON, not an
// object, apiVersion other than admission.k8s.io/v1, kind other than AdmissionReview, or no
// request with a non-empty uid. Everything else is an AdmissionReply.
Result<AdmissionReply> ReviewAdmission(std::string_view body, NadLookup& nads,
                                       const MutateOptions& options = {});

// Standard base64 (RFC 4648, '=' padding, no line breaks) of `bytes`, as AdmissionReview's
// patch field wants it.
std::string EncodeBase64(std::string_view bytes);

}  // namespace hcashare::injector
