// The AdmissionReview around the injector (issue 26): what is mutated, the response the
// API server expects (uid, allowed, base64 JSONPatch, warnings, status), and the bodies that
// are not AdmissionReviews at all.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "injector/admission.h"
#include "kube/pem.h"
#include "tests/injector_test_util.h"

namespace hcashare::injector {
namespace {

using ::hcashare::testing::MapNadLookup;
using ::hcashare::testing::NetPod;
using nlohmann::json;

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

json Review(const json& pod, const std::string& operation = "CREATE",
            const std::string& uid = "705ab4f5-6393-11e8-b7cc-42010a800002") {
  return {{"apiVersion", "admission.k8s.io/v1"},
          {"kind", "AdmissionReview"},
          {"request",
           {{"uid", uid},
            {"kind", {{"group", ""}, {"version", "v1"}, {"kind", "Pod"}}},
            {"resource", {{"group", ""}, {"version", "v1"}, {"resource", "pods"}}},
            {"requestKind", {{"group", ""}, {"version", "v1"}, {"kind", "Pod"}}},
            {"namespace", "ml"},
            {"operation", operation},
            {"userInfo", {{"username", "admin"}}},
            {"object", pod},
            {"oldObject", operation == "UPDATE" ? pod : json(nullptr)},
            {"dryRun", false}}}};
}

MapNadLookup Nads() {
  MapNadLookup nads;
  nads.Add("ml", "net-a", "rdma/vfs_a").Add("ml", "plain", "");
  return nads;
}

// The response of a successful ReviewAdmission, checked for the envelope and the uid.
json ResponseOf(const Result<AdmissionReply>& reply,
                const std::string& uid = "705ab4f5-6393-11e8-b7cc-42010a800002") {
  EXPECT_TRUE(reply.ok()) << reply.status().ToString();
  if (!reply.ok()) return json::object();
  const json body = json::parse(reply->body);
  EXPECT_EQ(body.at("apiVersion"), "admission.k8s.io/v1");
  EXPECT_EQ(body.at("kind"), "AdmissionReview");
  EXPECT_EQ(body.size(), 3u) << "only the response is sent back: " << reply->body.substr(0, 300);
  EXPECT_EQ(body.at("response").at("uid"), uid);
  EXPECT_EQ(reply->uid, uid);
  return body.at("response");
}

TEST(InjectorAdmissionTest, CreateGetsABase64JsonPatch) {
  MapNadLookup nads = Nads();
  json pod = NetPod("net-a, net-a");
  pod["metadata"].erase("namespace");  // as for pods made by controllers
  const Result<AdmissionReply> reply = ReviewAdmission(Review(pod).dump(), nads);
  const json response = ResponseOf(reply);
  EXPECT_EQ(response.at("allowed"), true);
  EXPECT_EQ(response.at("patchType"), "JSONPatch");
  EXPECT_FALSE(response.contains("status"));
  EXPECT_FALSE(response.contains("warnings"));
  const Result<std::string> decoded = kube::DecodeBase64(response.at("patch").get<std::string>());
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  const json two = {{"rdma/vfs_a", "2"}};
  const json want_patch = json::array({{{"op", "add"},
                                        {"path", "/spec/containers/0/resources"},
                                        {"value", {{"requests", two}, {"limits", two}}}}});
  EXPECT_EQ(json::parse(*decoded), want_patch);
  EXPECT_EQ(reply->patch_ops, 1u);
  EXPECT_TRUE(reply->allowed);
  json want = pod;
  want["spec"]["containers"][0]["resources"] = {{"requests", two}, {"limits", two}};
  EXPECT_EQ(pod.patch(json::parse(*decoded)), want);
  EXPECT_EQ(nads.calls["ml/net-a"], 1);  // the namespace came from request.namespace
  // The patched pod, admitted again, gets no patch.
  const json again = ResponseOf(ReviewAdmission(Review(want).dump(), nads));
  EXPECT_EQ(again.at("allowed"), true);
  EXPECT_FALSE(again.contains("patch"));
  EXPECT_FALSE(again.contains("patchType"));
}

TEST(InjectorAdmissionTest, RefusalCarriesStatusAndNoPatch) {
  MapNadLookup nads = Nads();
  const Result<AdmissionReply> reply = ReviewAdmission(Review(NetPod("gone")).dump(), nads);
  const json response = ResponseOf(reply);
  EXPECT_EQ(response.at("allowed"), false);
  EXPECT_FALSE(response.contains("patch"));
  EXPECT_EQ(response.at("status").at("code"), 400);
  EXPECT_EQ(response.at("status").at("reason"), "BadRequest");
  EXPECT_TRUE(Contains(response.at("status").at("message"), "ml/gone does not exist"))
      << response.dump();
  EXPECT_EQ(reply->message, response.at("status").at("message"));
  EXPECT_EQ(reply->pod, "ml/p");

  nads.Fail("ml", "net-a", Status::Unavailable("timed out"));
  const json failed = ResponseOf(ReviewAdmission(Review(NetPod("net-a")).dump(), nads));
  EXPECT_EQ(failed.at("allowed"), false);
  EXPECT_EQ(failed.at("status").at("code"), 503);
  EXPECT_EQ(failed.at("status").at("reason"), "ServiceUnavailable");
}

TEST(InjectorAdmissionTest, ToleratedProblemsBecomeWarnings) {
  MapNadLookup nads = Nads();
  const json response =
      ResponseOf(ReviewAdmission(Review(NetPod("gone")).dump(), nads, {/*refuse_missing=*/false}));
  EXPECT_EQ(response.at("allowed"), true);
  EXPECT_FALSE(response.contains("patch"));
  ASSERT_EQ(response.at("warnings").size(), 1u);
  EXPECT_TRUE(Contains(response.at("warnings")[0], "ml/gone")) << response.dump();
}

TEST(InjectorAdmissionTest, UpdateIsNeverPatchedOrRefused) {
  MapNadLookup nads = Nads();
  const json lacking = ResponseOf(ReviewAdmission(Review(NetPod("net-a"), "UPDATE").dump(), nads));
  EXPECT_EQ(lacking.at("allowed"), true);
  EXPECT_FALSE(lacking.contains("patch"));
  ASSERT_EQ(lacking.at("warnings").size(), 1u);
  EXPECT_TRUE(Contains(lacking.at("warnings")[0], "recreate the pod")) << lacking.dump();

  const json missing = ResponseOf(ReviewAdmission(Review(NetPod("gone"), "UPDATE").dump(), nads));
  EXPECT_EQ(missing.at("allowed"), true);
  ASSERT_EQ(missing.at("warnings").size(), 1u);
  EXPECT_TRUE(Contains(missing.at("warnings")[0], "ml/gone")) << missing.dump();

  json complete = NetPod("net-a");
  complete["spec"]["containers"][0]["resources"] = {{"requests", {{"rdma/vfs_a", "1"}}},
                                                    {"limits", {{"rdma/vfs_a", "1"}}}};
  const json fine = ResponseOf(ReviewAdmission(Review(complete, "UPDATE").dump(), nads));
  EXPECT_EQ(fine.at("allowed"), true);
  EXPECT_FALSE(fine.contains("warnings"));
}

TEST(InjectorAdmissionTest, OtherRequestsAreAdmittedUnchanged) {
  MapNadLookup nads = Nads();
  std::vector<json> reviews;
  for (const char* op : {"DELETE", "CONNECT", ""}) reviews.push_back(Review(NetPod("gone"), op));
  json deployment = Review(NetPod("gone"));
  deployment["request"]["resource"] = {
      {"group", "apps"}, {"version", "v1"}, {"resource", "deployments"}};
  reviews.push_back(deployment);
  json status = Review(NetPod("gone"));
  status["request"]["subResource"] = "status";
  reviews.push_back(status);
  json no_object = Review(NetPod("gone"));
  no_object["request"].erase("object");
  reviews.push_back(no_object);
  for (const json& review : reviews) {
    const Result<AdmissionReply> reply = ReviewAdmission(review.dump(), nads);
    const json response = ResponseOf(reply);
    EXPECT_EQ(response.at("allowed"), true) << review["request"].dump();
    EXPECT_FALSE(response.contains("patch"));
    EXPECT_FALSE(reply->message.empty());
  }
  EXPECT_TRUE(nads.calls.empty()) << "no NAD is looked up for requests that are not mutated";
}

// An AdmissionReview whose pod carries `n` empty objects besides its other values: more
// than `n` values, in 3 bytes each.
std::string ManyValues(size_t n) {
  std::string junk = "[";
  for (size_t i = 0; i < n; ++i) junk += i == 0 ? "{}" : ",{}";
  junk += "]";
  std::string body = Review(NetPod("net-a")).dump();
  return body.insert(body.rfind('}'), ",\"junk\":" + junk);
}

TEST(InjectorAdmissionTest, BodiesThatAreNotAdmissionReviewsAreHttpErrors) {
  MapNadLookup nads = Nads();
  const json good = Review(NetPod("net-a"));
  json v1beta1 = good;
  v1beta1["apiVersion"] = "admission.k8s.io/v1beta1";
  json kind = good;
  kind["kind"] = "TokenReview";
  json no_request = good;
  no_request.erase("request");
  json no_uid = good;
  no_uid["request"].erase("uid");
  json empty_uid = good;
  empty_uid["request"]["uid"] = "";
  const std::pair<std::string, const char*> bad[] = {
      {"", "not JSON"},
      {"{\"apiVersion\":", "not JSON"},
      {"[]", "is a JSON array"},
      {v1beta1.dump(), "apiVersion is string \"admission.k8s.io/v1beta1\""},
      {kind.dump(), "kind is string \"TokenReview\""},
      {no_request.dump(), "has no request"},
      {no_uid.dump(), "request.uid is missing"},
      {empty_uid.dump(), "request.uid is missing"},
      {std::string(100, '[') + std::string(100, ']'), "nested deeper"},
      {std::string(kMaxAdmissionReviewBytes + 1, ' '), "more than the 3145728 accepted"},
      {ManyValues(kMaxAdmissionReviewValues), "more than 200000 values"},
  };
  for (const auto& [body, why] : bad) {
    const Result<AdmissionReply> reply = ReviewAdmission(body, nads);
    ASSERT_FALSE(reply.ok()) << body.substr(0, 80);
    EXPECT_EQ(reply.status().code(), StatusCode::kInvalidArgument);
    EXPECT_TRUE(Contains(reply.status().message(), "not an admission.k8s.io/v1 AdmissionReview"));
    EXPECT_TRUE(Contains(reply.status().message(), why)) << reply.status().message();
  }
}

TEST(InjectorAdmissionTest, LargeBodyUnderTheCapIsRead) {
  MapNadLookup nads = Nads();
  json pod = NetPod("net-a");
  pod["metadata"]["annotations"]["filler"] = std::string(kMaxAdmissionReviewBytes - 4096, 'x');
  const json response = ResponseOf(ReviewAdmission(Review(pod).dump(), nads));
  EXPECT_EQ(response.at("allowed"), true);
  EXPECT_TRUE(response.contains("patch"));
}

TEST(InjectorAdmissionTest, WarningsAreBounded) {
  // 30 networks whose 30 resources another container already asks for: one warning each.
  MapNadLookup nads;
  std::string networks;
  json side_limits = json::object();
  for (int i = 0; i < 30; ++i) {
    const std::string resource = "example.com/" + std::string(50, 'r') + std::to_string(i);
    nads.Add("ml", "net-" + std::to_string(i), resource);
    networks += (i ? "," : "") + std::string("net-") + std::to_string(i);
    side_limits[resource] = "1";
  }
  const std::string app(63, 'a'), side(63, 's');  // long names make long warnings
  json pod = NetPod(networks, {app.c_str(), side.c_str()});
  pod["spec"]["containers"][1]["resources"] = {{"limits", side_limits}};
  // Named, the app container gets them though the side container asks too: a warning each.
  pod["metadata"]["annotations"]["hcashare.io/resource-container"] = app;
  const Result<AdmissionReply> reply = ReviewAdmission(Review(pod).dump(), nads);
  const json response = ResponseOf(reply);
  ASSERT_EQ(response.at("warnings").size(), kMaxWarnings);
  bool cut = false;
  for (const json& w : response.at("warnings")) {
    EXPECT_LE(w.get<std::string>().size(), kMaxWarningBytes);
    cut = cut || w.get<std::string>().size() == kMaxWarningBytes;
  }
  EXPECT_TRUE(cut) << "the long warnings are cut: " << response.at("warnings")[0];
  EXPECT_EQ(reply->warnings.size(), kMaxWarnings);
}

TEST(InjectorAdmissionTest, Base64) {
  const std::pair<std::string, std::string> vectors[] = {// RFC 4648 section 10
                                                         {"", ""},
                                                         {"f", "Zg=="},
                                                         {"fo", "Zm8="},
                                                         {"foo", "Zm9v"},
                                                         {"foob", "Zm9vYg=="},
                                                         {"fooba", "Zm9vYmE="},
                                                         {"foobar", "Zm9vYmFy"}};
  for (const auto& [in, out] : vectors) EXPECT_EQ(EncodeBase64(in), out) << in;
  std::string big;
  for (int i = 0; i < 200000; ++i) big += static_cast<char>(i * 7 + (i >> 8));
  const std::string encoded = EncodeBase64(big);
  EXPECT_EQ(encoded.size(), (big.size() + 2) / 3 * 4);
  EXPECT_EQ(encoded.find('\n'), std::string::npos);
  EXPECT_EQ(kube::DecodeBase64(encoded).value_or("?"), big);
}

}  // namespace
}  // namespace hcashare::injector
