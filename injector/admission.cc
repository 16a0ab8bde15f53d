#include "injector/admission.h"

#include <openssl/evp.h>

#include <algorithm>
#include <utility>

#include <nlohmann/json.hpp>

#include "json/dump.h"
#include "json/fields.h"
#include "json/parse.h"

namespace hcashare::injector {

using jsonin::Quote;
using nlohmann::json;

namespace {

constexpr char kApiVersion[] = "admission.k8s.io/v1";
constexpr char kKind[] = "AdmissionReview";
// Nesting accepted in a request body (a pod is some 10 levels deep).
constexpr int kMaxReviewDepth = 64;
// kMaxAdmissionReviewValues: a pod has a few hundred values; one of etcd's largest (1.5
// MiB) could have tens of thousands. A value costs tens of bytes once parsed whatever its
// text, so this bounds a request's tree where the body's cap alone would not (3 MiB of "{},"
// is a million objects, ~80 MiB parsed).

Status NotAReview(const std::string& why) {
  return Status::InvalidArgument("not an admission.k8s.io/v1 AdmissionReview: " + why);
}

// The string member `key` of `object`, or "" when absent or not a string.
std::string StringMember(const json& object, const char* key) {
  const auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// `text` cut to at most `max` bytes, not inside a UTF-8 sequence.
std::string Truncated(std::string text, size_t max) {
  if (text.size() <= max) return text;
  size_t end = max;
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
  text.resize(end);
  return text;
}

// Why a request is admitted untouched without asking Mutate, or "" when Mutate decides.
std::string NotMutated(const json& request) {
  const std::string operation = StringMember(request, "operation");
  if (operation != "CREATE" && operation != "UPDATE") {
    return "operation " + Quote(operation) + " is not mutated";
  }
  const auto resource = request.find("resource");
  const bool pods = resource != request.end() && resource->is_object() &&
                    StringMember(*resource, "group").empty() &&
                    StringMember(*resource, "resource") == "pods";
  if (!pods) return "only pods are mutated";
  const std::string sub = StringMember(request, "subResource");
  if (!sub.empty()) return "subresource " + Quote(sub) + " is not mutated";
  const auto object = request.find("object");
  if (object == request.end() || !object->is_object()) return "the request carries no pod";
  return "";
}

// "ns/name" of the request's object for logs: request.namespace and request.name, else
// the object's metadata (a generateName pod has no name yet: "ns/prefix*").
std::string PodName(const json& request) {
  std::string ns = StringMember(request, "namespace");
  std::string name = StringMember(request, "name");
  const auto object = request.find("object");
  if (object != request.end() && object->is_object()) {
    const auto meta = object->find("metadata");
    if (meta != object->end() && meta->is_object()) {
      if (ns.empty()) ns = StringMember(*meta, "namespace");
      if (name.empty()) name = StringMember(*meta, "name");
      if (name.empty()) {
        const std::string prefix = StringMember(*meta, "generateName");
        if (!prefix.empty()) name = prefix + "*";
      }
    }
  }
  return Truncated(ns + "/" + name, 512);
}

}  // namespace

std::string EncodeBase64(std::string_view bytes) {
  // EVP_EncodeBlock takes an int length; whole 3-byte groups per call keep the output one
  // unbroken encoding.
  constexpr size_t kChunk = 3 * 16384;
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  unsigned char buffer[kChunk / 3 * 4 + 1];
  for (size_t pos = 0; pos < bytes.size(); pos += kChunk) {
    const size_t n = std::min(kChunk, bytes.size() - pos);
    const int written = EVP_EncodeBlock(
        buffer, reinterpret_cast<const unsigned char*>(bytes.data() + pos), static_cast<int>(n));
    out.append(reinterpret_cast<const char*>(buffer), static_cast<size_t>(written));
  }
  return out;
}

Result<AdmissionReply> ReviewAdmission(std::string_view body, NadLookup& nads,
                                       const MutateOptions& options) {
  if (body.size() > kMaxAdmissionReviewBytes) {
    return NotAReview("the body is " + std::to_string(body.size()) + " bytes, more than the " +
                      std::to_string(kMaxAdmissionReviewBytes) + " accepted");
  }
  Result<json> parsed = jsonin::ParseJson(
      body, {/*max_depth=*/kMaxReviewDepth, /*duplicate_keys=*/nullptr, kMaxAdmissionReviewValues});
  if (!parsed.ok()) return NotAReview("the body is not JSON (" + parsed.status().message() + ")");
  const json& review = *parsed;
  if (!review.is_object())
    return NotAReview("the body is a JSON " + std::string(review.type_name()));
  if (StringMember(review, "apiVersion") != kApiVersion) {
    return NotAReview("apiVersion is " + jsonin::DescribeValue(review.value("apiVersion", json())) +
                      " (list only \"v1\" in the webhook's admissionReviewVersions)");
  }
  if (StringMember(review, "kind") != kKind) {
    return NotAReview("kind is " + jsonin::DescribeValue(review.value("kind", json())));
  }
  const auto request = review.find("request");
  if (request == review.end() || !request->is_object()) return NotAReview("it has no request");
  AdmissionReply reply;
  reply.uid = StringMember(*request, "uid");
  if (reply.uid.empty()) return NotAReview("request.uid is missing");
  reply.pod = PodName(*request);

  json patch = json::array();
  int code = 400;
  const std::string skip = NotMutated(*request);
  if (!skip.empty()) {
    reply.message = skip;
  } else {
    MutateResult m =
        Mutate(request->at("object"), StringMember(*request, "namespace"), nads, options);
    reply.message = m.message;
    reply.warnings = std::move(m.warnings);
    if (StringMember(*request, "operation") == "UPDATE") {
      // See the file comment: an update never gets a patch or a refusal.
      if (!m.allowed) {
        reply.warnings.push_back("pod not changed on update: " + m.message);
      } else if (!m.patch.empty()) {
        reply.warnings.push_back(
            "this pod lacks the resources its networks need and a pod's resources cannot change "
            "after creation: recreate the pod to get them");
      }
    } else {
      reply.allowed = m.allowed;
      code = m.denial_code;
      patch = std::move(m.patch);
    }
  }

  json response = {{"uid", reply.uid}, {"allowed", reply.allowed}};
  if (!patch.empty()) {
    reply.patch_ops = patch.size();
    response["patchType"] = "JSONPatch";
    response["patch"] = EncodeBase64(DumpJson(patch));
  }
  if (reply.warnings.size() > kMaxWarnings) reply.warnings.resize(kMaxWarnings);
  for (std::string& w : reply.warnings) w = Truncated(std::move(w), kMaxWarningBytes);
  if (!reply.warnings.empty()) response["warnings"] = reply.warnings;
  if (!reply.allowed) {
    // The reason is the Status reason of the code, which kubectl prints: "(BadRequest)".
    response["status"] = {{"code", code},
                          {"reason", code == 503   ? "ServiceUnavailable"
                                     : code == 500 ? "InternalError"
                                                   : "BadRequest"},
                          {"message", reply.message}};
  }
  const json out = {
      {"apiVersion", kApiVersion}, {"kind", kKind}, {"response", std::move(response)}};
  reply.body = DumpJson(out);
  return reply;
}

}  // namespace hcashare::injector
