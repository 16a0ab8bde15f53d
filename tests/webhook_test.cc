// hcashare-webhook as a process: started against the fake API server (HTTPS, a kubeconfig
// with a token), it watches the NADs and answers AdmissionReviews over HTTPS. Checks the
// exact patch and that it makes the expected pod, a second admission of the patched pod, NADs
// created and deleted while it runs, a missing NAD, /readyz, /metrics, hostile clients, the
// command line and SIGTERM.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/process.h"
#include "common/temp_dir.h"
#include "kube/pem.h"
#include "kube/rest.h"
#include "testing/fake_apiserver.h"
#include "tests/kube_test_util.h"
#include "tests/metrics_test_util.h"
#include "tests/test_util.h"

namespace hcashare {
namespace {

using json = nlohmann::json;
using std::chrono::milliseconds;
using ::testing::HasSubstr;

constexpr char kNads[] = "/apis/k8s.cni.cncf.io/v1/namespaces/%s/network-attachment-definitions";

std::string NadCollection(const std::string& ns) {
  std::string s = kNads;
  return s.replace(s.find("%s"), 2, ns);
}

json Nad(const std::string& ns, const std::string& name, const std::string& resource) {
  json nad = {{"apiVersion", "k8s.cni.cncf.io/v1"},
              {"kind", "NetworkAttachmentDefinition"},
              {"metadata", {{"name", name}, {"namespace", ns}}},
              {"spec", {{"config", R"({"cniVersion":"1.0.0","type":"hcashare-cni"})"}}}};
  if (!resource.empty()) {
    nad["metadata"]["annotations"] = {{"k8s.v1.cni.cncf.io/resourceName", resource}};
  }
  return nad;
}

json Pod(const std::string& networks) {
  json pod = {{"apiVersion", "v1"},
              {"kind", "Pod"},
              {"metadata", {{"name", "trainer"}, {"namespace", "team-a"}}},
              {"spec", {{"containers", json::array({{{"name", "main"}, {"image", "x"}}})}}}};
  if (!networks.empty())
    pod["metadata"]["annotations"] = {{"k8s.v1.cni.cncf.io/networks", networks}};
  return pod;
}

std::string Review(const json& pod, const std::string& uid = "uid-1") {
  json r = {{"apiVersion", "admission.k8s.io/v1"},
            {"kind", "AdmissionReview"},
            {"request",
             {{"uid", uid},
              {"kind", {{"group", ""}, {"version", "v1"}, {"kind", "Pod"}}},
              {"resource", {{"group", ""}, {"version", "v1"}, {"resource", "pods"}}},
              {"namespace", "team-a"},
              {"operation", "CREATE"},
              {"object", pod}}}};
  return r.dump();
}

class WebhookProcessTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto api = fake::FakeApiServer::Start(&testing::SharedPki());
    ASSERT_TRUE(api.ok()) << api.status().ToString();
    api_ = std::move(api).value();
    api_->Seed(NadCollection("team-a"), Nad("team-a", "rdma-a", "rdma/vfs_a"));
    api_->Seed(NadCollection("shared"), Nad("shared", "rdma-b", "rdma/vfs_b"));
    api_->Seed(NadCollection("team-a"), Nad("team-a", "plain", ""));
    testing::WriteText(dir_.path() + "/kubeconfig",
                       testing::KubeconfigFor(api_->url(), testing::SharedPki().ca_pem()));
    auto pair = testing::SharedPki().IssueServer("hcashare-injector", {"IP:127.0.0.1"});
    ASSERT_TRUE(pair.ok());
    testing::WriteText(dir_.path() + "/tls.crt", pair->cert_pem);
    testing::WriteText(dir_.path() + "/tls.key", pair->key_pem);
  }

  std::vector<std::string> Argv(const std::vector<std::string>& extra = {}) const {
    std::vector<std::string> argv = {
        testing::BinDir() + "/hcashare-webhook", "--tls-cert-file=" + dir_.path() + "/tls.crt",
        "--tls-private-key-file=" + dir_.path() + "/tls.key", "--listen-address=127.0.0.1:0",
        "--kubeconfig=" + dir_.path() + "/kubeconfig"};
    bool delay = false;
    for (const auto& e : extra) delay = delay || e.rfind("--shutdown-delay-seconds", 0) == 0;
    if (!delay) argv.push_back("--shutdown-delay-seconds=0");  // tests stop it at once
    argv.insert(argv.end(), extra.begin(), extra.end());
    return argv;
  }

  std::string Log() const {
    std::ifstream in(log_path_);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }

  // Starts the webhook and waits until it is ready.
  void Start(const std::vector<std::string>& extra = {}) {
    auto p = Subprocess::Spawn(Argv(extra), log_path_);
    ASSERT_TRUE(p.ok()) << p.status().ToString();
    proc_ = std::make_unique<Subprocess>(std::move(p).value());
    std::smatch m;
    const std::regex serving("serving .*port=([0-9]+)");
    ASSERT_TRUE(testing::WaitUntil([&] {
      std::string log = Log();
      if (!std::regex_search(log, m, serving)) return false;
      port_ = std::stoi(m[1]);
      return true;
    })) << Log();
    client_ = testing::LoopbackClient(port_, testing::SharedPki().ca_pem(), milliseconds(5000));
    ASSERT_NE(client_, nullptr);
    ASSERT_TRUE(testing::WaitUntil([&] {
      auto r = client_->Do({kube::Verb::kGet, "/readyz", "", "", milliseconds(0)});
      return r.ok() && r->status == 200;
    })) << Log();
  }

  // POSTs `body` to /mutate, as the API server does; the HTTP answer, whatever its code.
  Result<kube::Response> PostMutate(const std::string& body) {
    kube::Request r;
    r.verb = kube::Verb::kPost;
    r.path = "/mutate?timeout=5s";
    r.body = body;
    return client_->Do(r);
  }

  // POSTs `body` to /mutate; the AdmissionReview answer.
  json Admit(const std::string& body) {
    auto resp = PostMutate(body);
    EXPECT_TRUE(resp.ok()) << resp.status().ToString();
    if (!resp.ok()) return json();
    EXPECT_EQ(resp->status, 200) << resp->body;
    return json::parse(resp->body, nullptr, false);
  }

  // The decoded JSONPatch of an answer ([] when none).
  static json PatchOf(const json& review) {
    const json& resp = review["response"];
    if (!resp.contains("patch")) return json::array();
    EXPECT_EQ(resp["patchType"], "JSONPatch");
    auto raw = kube::DecodeBase64(resp["patch"].get<std::string>());
    EXPECT_TRUE(raw.ok());
    return json::parse(raw.ok() ? *raw : "[]");
  }

  TempDir dir_;
  std::string log_path_ = dir_.path() + "/webhook.log";
  std::unique_ptr<fake::FakeApiServer> api_;
  std::unique_ptr<Subprocess> proc_;
  std::unique_ptr<kube::RestClient> client_;
  int port_ = 0;
};

TEST_F(WebhookProcessTest, AddsOneResourcePerAttachmentAndASecondPassIsANoOp) {
  Start();
  const json pod = Pod("rdma-a, shared/rdma-b@net2, rdma-a@net3, plain");
  json review = Admit(Review(pod));
  ASSERT_TRUE(review["response"]["allowed"].get<bool>()) << review.dump();
  EXPECT_EQ(review["response"]["uid"], "uid-1");
  const json patch = PatchOf(review);
  EXPECT_EQ(patch, json::parse(R"([
    {"op":"add","path":"/spec/containers/0/resources","value":{
      "limits":{"rdma/vfs_a":"2","rdma/vfs_b":"1"},
      "requests":{"rdma/vfs_a":"2","rdma/vfs_b":"1"}}}])"));
  const json patched = pod.patch(patch);
  EXPECT_EQ(patched["spec"]["containers"][0]["resources"]["requests"]["rdma/vfs_a"], "2");
  json again = Admit(Review(patched, "uid-2"));
  EXPECT_TRUE(again["response"]["allowed"].get<bool>());
  EXPECT_EQ(PatchOf(again), json::array()) << again.dump();
}

TEST_F(WebhookProcessTest, MissingNadIsRefusedNamingIt) {
  Start();
  json review = Admit(Review(Pod("rdma-a, absent")));
  EXPECT_FALSE(review["response"]["allowed"].get<bool>()) << review.dump();
  EXPECT_THAT(review["response"]["status"]["message"].get<std::string>(),
              HasSubstr("team-a/absent"));
}

// Issue 34: a review had no deadline: each absent NAD cost a GET of up to 3 s, one after
// another, so a pod naming several held a worker past the API server's timeoutSeconds. With
// the API server not answering, the review is answered within --review-seconds: refused
// with 503, try again.
TEST_F(WebhookProcessTest, AReviewIsAnsweredWithinItsDeadline) {
  Start({"--review-seconds=0.5", "--missing-network=warn"});
  api_->SetStall(true);
  const auto t0 = std::chrono::steady_clock::now();
  json review = Admit(Review(Pod("absent-1, absent-2, absent-3, absent-4")));
  const auto took = std::chrono::steady_clock::now() - t0;
  api_->SetStall(false);
  EXPECT_FALSE(review["response"]["allowed"].get<bool>()) << review.dump();
  EXPECT_EQ(review["response"]["status"]["code"], 503) << review.dump();
  EXPECT_THAT(review["response"]["status"]["message"].get<std::string>(), HasSubstr("try again"));
  EXPECT_LT(took, std::chrono::milliseconds(2500)) << "one GET alone may take 3 s";
}

TEST_F(WebhookProcessTest, MissingNadWarnsWhenToldTo) {
  Start({"--missing-network=warn"});
  json review = Admit(Review(Pod("absent")));
  EXPECT_TRUE(review["response"]["allowed"].get<bool>()) << review.dump();
  EXPECT_EQ(PatchOf(review), json::array());
  ASSERT_TRUE(review["response"].contains("warnings"));
  EXPECT_THAT(review["response"]["warnings"][0].get<std::string>(), HasSubstr("team-a/absent"));
}

// The issue's cases through the process: each pod's exact patch (or refusal), the patched
// pod admitted again without a patch.
TEST_F(WebhookProcessTest, CasesThroughTheProcess) {
  Start();
  struct Case {
    const char* what;
    json pod;
    bool allowed;
    json patch;           // when allowed
    const char* message;  // a part of the refusal
  };
  json existing = Pod("rdma-a, rdma-a");
  existing["spec"]["containers"][0]["resources"] = {{"requests", {{"rdma/vfs_a", "3"}}},
                                                    {"limits", {{"rdma/vfs_a", "3"}}}};
  json smaller = Pod("rdma-a, rdma-a");
  smaller["spec"]["containers"][0]["resources"] = {{"requests", {{"rdma/vfs_a", "1"}}},
                                                   {"limits", {{"rdma/vfs_a", "1"}}}};
  json init = Pod("rdma-a");
  init["spec"]["initContainers"] = json::array({{{"name", "setup"}, {"image", "x"}}});
  init["metadata"]["annotations"]["hcashare.io/resource-container"] = "setup";
  json no_containers = Pod("rdma-a");
  no_containers["spec"]["containers"] = json::array();
  const std::vector<Case> cases = {
      {"JSON form, cross-namespace", Pod(R"([{"name":"rdma-b","namespace":"shared"}])"), true,
       json::parse(R"([{"op":"add","path":"/spec/containers/0/resources","value":{
         "limits":{"rdma/vfs_b":"1"},"requests":{"rdma/vfs_b":"1"}}}])"),
       ""},
      {"a larger request is kept", existing, true, json::array(), ""},
      {"a smaller request is raised", smaller, true,
       json::parse(
           R"([{"op":"replace","path":"/spec/containers/0/resources/requests/rdma~1vfs_a","value":"2"},
                       {"op":"replace","path":"/spec/containers/0/resources/limits/rdma~1vfs_a","value":"2"}])"),
       ""},
      {"an init container named", init, false, json(), "setup"},
      {"no containers", no_containers, false, json(), "container"},
      {"a 1 MiB annotation", Pod("rdma-a," + std::string(1 << 20, 'x')), false, json(), "networks"},
      {"an annotation of invalid JSON", Pod("[{\"name\":"), false, json(), "networks"},
  };
  int uid = 0;
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    json review = Admit(Review(c.pod, "case-" + std::to_string(++uid)));
    ASSERT_TRUE(review.is_object());
    ASSERT_EQ(review["response"]["allowed"].get<bool>(), c.allowed) << review.dump().substr(0, 500);
    if (!c.allowed) {
      EXPECT_THAT(review["response"]["status"]["message"].get<std::string>(), HasSubstr(c.message));
      continue;
    }
    const json patch = PatchOf(review);
    EXPECT_EQ(patch, c.patch);
    json again = Admit(Review(c.pod.patch(patch), "again-" + std::to_string(uid)));
    EXPECT_EQ(PatchOf(again), json::array());
  }
}

// A NAD served by DRA, read through the webhook's slimmed NAD cache (which keeps only the
// annotations the injector reads), asks for nothing; its device-plugin twin still does.
TEST_F(WebhookProcessTest, DraNadFromTheCacheAsksForNothing) {
  json dra = Nad("team-a", "vf-dra", "rdma/hca_vfs");
  dra["metadata"]["annotations"]["hcashare.io/resource-api"] = "dra";
  api_->Seed(NadCollection("team-a"), dra);
  Start();  // ready: the cache has synced
  json pod = Pod("vf-dra, rdma-a");
  pod["spec"]["resourceClaims"] = json::array({{{"name", "rdma"}, {"resourceClaimName", "c"}}});
  json review = Admit(Review(pod));
  ASSERT_TRUE(review["response"]["allowed"].get<bool>()) << review.dump();
  EXPECT_EQ(PatchOf(review), json::parse(R"([
    {"op":"add","path":"/spec/containers/0/resources","value":{
      "limits":{"rdma/vfs_a":"1"},"requests":{"rdma/vfs_a":"1"}}}])"));
  EXPECT_FALSE(review["response"].contains("warnings")) << review.dump();
}

// NADs made and removed while the webhook runs are seen: a new one at once (from the watch,
// or a GET on the cache miss), a deleted one once the watch delivers the deletion.
TEST_F(WebhookProcessTest, FollowsNadsCreatedAndDeleted) {
  Start();
  api_->Seed(NadCollection("team-a"), Nad("team-a", "late", "rdma/vfs_c"));
  json review = Admit(Review(Pod("late")));
  ASSERT_TRUE(review["response"]["allowed"].get<bool>()) << review.dump();
  EXPECT_EQ(PatchOf(review)[0]["value"]["requests"]["rdma/vfs_c"], "1");

  auto deleted = api_->Delete(NadCollection("team-a"), "rdma-a");
  ASSERT_TRUE(deleted);
  EXPECT_TRUE(testing::WaitUntil(
      [&] { return !Admit(Review(Pod("rdma-a")))["response"]["allowed"].get<bool>(); }));
}

TEST_F(WebhookProcessTest, MetricsCountRequestsAndTheCache) {
  Start();
  Admit(Review(Pod("rdma-a")));
  Admit(Review(Pod("")));
  Admit(Review(Pod("absent")));
  auto m = client_->Do({kube::Verb::kGet, "/metrics", "", "", milliseconds(0)});
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(testing::SampleValue(m->body, "hcashare_webhook_requests_total{result=\"patched\"}"),
            1);
  EXPECT_EQ(testing::SampleValue(m->body, "hcashare_webhook_requests_total{result=\"allowed\"}"),
            1);
  EXPECT_EQ(testing::SampleValue(m->body, "hcashare_webhook_requests_total{result=\"denied\"}"), 1);
  EXPECT_EQ(testing::SampleValue(m->body, "hcashare_webhook_nad_cache_objects"), 3);
  EXPECT_EQ(testing::SampleValue(m->body, "hcashare_webhook_nad_cache_synced"), 1);
  EXPECT_EQ(testing::SampleValue(m->body, "hcashare_webhook_request_duration_seconds_count"), 3);
}

// Not an AdmissionReview: 400, and the webhook goes on.
TEST_F(WebhookProcessTest, GarbageBodiesGet400) {
  Start();
  for (const std::string& body : std::vector<std::string>{
           "", "{", "[]", R"({"kind":"AdmissionReview"})", std::string(100000, '[')}) {
    auto resp = PostMutate(body);
    ASSERT_TRUE(resp.ok()) << resp.status().ToString();
    EXPECT_EQ(resp->status, 400) << body.substr(0, 40);
  }
  EXPECT_TRUE(Admit(Review(Pod("rdma-a")))["response"]["allowed"].get<bool>());
}

// Clients that hold connections (stalled before the TLS handshake, or sending a body too
// slowly) and a body over the cap do not keep the API server's requests from an answer.
TEST_F(WebhookProcessTest, HostileClientsDoNotBlockAdmission) {
  Start();
  std::vector<UniqueFd> stalled;
  for (int i = 0; i < 200; ++i) {
    UniqueFd fd = testing::Connect(port_);
    ASSERT_TRUE(fd.valid());
    stalled.push_back(std::move(fd));
  }
  auto refused = PostMutate(std::string((size_t{3} << 20) + 1, ' '));
  if (refused.ok()) {
    EXPECT_EQ(refused->status, 413);
  }
  for (int i = 0; i < 5; ++i) {
    const auto start = std::chrono::steady_clock::now();
    EXPECT_TRUE(Admit(Review(Pod("rdma-a")))["response"]["allowed"].get<bool>());
    EXPECT_LT(std::chrono::steady_clock::now() - start, milliseconds(2000));
  }
}

// Issue 34, part 3: with a client CA only the API server's certificate gets reviews
// answered; the kubelet's probes (which present none) and scrapers use --probe-address,
// which answers /healthz, /readyz and /metrics to anyone and no review.
TEST_F(WebhookProcessTest, WithAClientCaReviewsNeedACertificateAndProbesAnswerAnyone) {
  testing::WriteText(dir_.path() + "/client-ca.crt", testing::SharedPki().ca_pem());
  auto p = Subprocess::Spawn(
      Argv({"--client-ca-file=" + dir_.path() + "/client-ca.crt", "--probe-address=127.0.0.1:0"}),
      log_path_);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  proc_ = std::make_unique<Subprocess>(std::move(p).value());
  int probe_port = 0;
  std::smatch m;
  const std::regex serving("serving .*port=([0-9]+)");
  const std::regex probe("probe listener .*port=([0-9]+)");
  ASSERT_TRUE(testing::WaitUntil([&] {
    const std::string log = Log();
    if (!std::regex_search(log, m, probe)) return false;
    probe_port = std::stoi(m[1]);
    if (!std::regex_search(log, m, serving)) return false;
    port_ = std::stoi(m[1]);
    return true;
  })) << Log();
  auto anyone =
      testing::LoopbackClient(probe_port, testing::SharedPki().ca_pem(), milliseconds(5000));
  ASSERT_NE(anyone, nullptr);
  ASSERT_TRUE(testing::WaitUntil([&] {
    auto r = anyone->Do({kube::Verb::kGet, "/readyz", "", "", milliseconds(0)});
    return r.ok() && r->status == 200;
  })) << Log();
  auto metrics = anyone->Do({kube::Verb::kGet, "/metrics", "", "", milliseconds(0)});
  ASSERT_TRUE(metrics.ok());
  EXPECT_THAT(metrics->body, HasSubstr("hcashare_webhook_nad_cache_synced 1"));
  kube::Request review;
  review.verb = kube::Verb::kPost;
  review.path = "/mutate";
  review.body = Review(Pod("rdma-a"));
  auto on_probes = anyone->Do(review);
  ASSERT_TRUE(on_probes.ok());
  EXPECT_NE(on_probes->status, 200);
  // The webhook's own port: no certificate, no review; the API server's, answered.
  auto anonymous =
      testing::LoopbackClient(port_, testing::SharedPki().ca_pem(), milliseconds(5000));
  ASSERT_NE(anonymous, nullptr);
  auto refused = anonymous->Do(review);
  EXPECT_FALSE(refused.ok() && refused->status == 200);
  auto apiserver =
      testing::LoopbackClientWithCertificate(port_, "kube-apiserver", milliseconds(5000));
  ASSERT_NE(apiserver, nullptr);
  auto served = apiserver->Do(review);
  ASSERT_TRUE(served.ok()) << served.status().ToString();
  EXPECT_EQ(served->status, 200) << served->body;
  EXPECT_EQ(PatchOf(json::parse(served->body)).size(), 1u) << served->body;
}

// Issue 34, part 2: reviews that wait for the API server (NADs not in the cache) used to
// hold the same two workers as reviews the cache answers, behind one queue. They now run on
// the slow lane: with the API server stalled and four such reviews waiting on it, a review
// the cache answers is answered at once.
TEST_F(WebhookProcessTest, CachedReviewsNeverWaitBehindMisses) {
  Start({"--review-seconds=3", "--missing-network=warn"});
  api_->SetStall(true);  // every request from now on hangs (the NAD watch is already open)
  std::vector<std::thread> misses;
  for (int i = 0; i < 4; ++i) {
    misses.emplace_back([this, i] {
      auto client =
          testing::LoopbackClient(port_, testing::SharedPki().ca_pem(), milliseconds(10000));
      kube::Request r;
      r.verb = kube::Verb::kPost;
      r.path = "/mutate";
      r.body = Review(Pod("absent-" + std::to_string(i)), "miss-" + std::to_string(i));
      (void)client->Do(r);
    });
  }
  ASSERT_TRUE(testing::WaitUntil([&] {
    int gets = 0;
    for (const auto& r : api_->Requests()) gets += r.target.find("/absent-") != std::string::npos;
    return gets >= 2;  // both slow threads wait on the API server
  })) << Log();
  const auto start = std::chrono::steady_clock::now();
  const json hit = Admit(Review(Pod("rdma-a"), "hit"));
  EXPECT_LT(testing::MsSince(start), 1000) << "a cached review waited behind the misses";
  EXPECT_EQ(PatchOf(hit).size(), 1u) << hit.dump();
  api_->SetStall(false);
  for (auto& t : misses) t.join();
}

// At most four GETs a review while the cache is synced: a pod naming more absent NADs is
// refused, try again, rather than hold the slow lane for one GET each.
TEST_F(WebhookProcessTest, AReviewMakesAtMostFourGets) {
  Start({"--missing-network=warn"});
  api_->ClearRequests();
  const json r = Admit(Review(Pod("x1,x2,x3,x4,x5,x6")));
  int gets = 0;
  for (const auto& q : api_->Requests())
    gets += q.target.find("/network-attachment-definitions/x") != std::string::npos;
  EXPECT_EQ(gets, 4);
  EXPECT_EQ(r["response"]["allowed"], false) << r.dump();
  EXPECT_THAT(r["response"]["status"].value("message", ""), HasSubstr("more than 4"));
}

// Issue 34, part 1: annotation values were cached whole, so 128 tenants' NADs with a
// 256 KiB resourceName reached the cache's bound. A value longer than any valid one is cut
// at read to a marker, and a pod naming such a NAD is refused, told why.
TEST_F(WebhookProcessTest, AnOverlongAnnotationIsCutAtRead) {
  api_->Seed(NadCollection("team-a"), Nad("team-a", "huge", std::string(256 << 10, 'r')));
  Start();
  ASSERT_TRUE(testing::WaitUntil([&] {
    auto m = client_->Do({kube::Verb::kGet, "/metrics", "", "", milliseconds(0)});
    return m.ok() && m->body.find("hcashare_webhook_nad_cache_objects 4") != std::string::npos;
  }));
  const json r = Admit(Review(Pod("huge")));
  EXPECT_EQ(r["response"]["allowed"], false) << r.dump().substr(0, 500);
  EXPECT_THAT(r["response"]["status"].value("message", ""), HasSubstr("<cut: 262144 bytes>"));
  EXPECT_LT(r.dump().size(), 4096u);
}

TEST_F(WebhookProcessTest, SigtermEndsItWithZero) {
  Start();
  ASSERT_TRUE(proc_->Signal(SIGTERM).ok());
  auto code = proc_->Wait(milliseconds(10000));
  ASSERT_TRUE(code.ok()) << code.status().ToString();
  EXPECT_EQ(*code, 0) << Log();
}

// During --shutdown-delay-seconds it says not ready and still admits (the Service drops it
// meanwhile); a second signal ends the wait at once.
TEST_F(WebhookProcessTest, ShutdownDelayIsNotReadyAndASecondSignalEndsIt) {
  Start({"--shutdown-delay-seconds=60"});
  ASSERT_TRUE(proc_->Signal(SIGTERM).ok());
  ASSERT_TRUE(testing::WaitUntil([&] {
    auto r = client_->Do({kube::Verb::kGet, "/readyz", "", "", milliseconds(0)});
    return r.ok() && r->status == 503 && r->body.find("shutting down") != std::string::npos;
  })) << Log();
  EXPECT_TRUE(Admit(Review(Pod("rdma-a")))["response"]["allowed"].get<bool>());
  const auto start = std::chrono::steady_clock::now();
  ASSERT_TRUE(proc_->Signal(SIGTERM).ok());
  auto code = proc_->Wait(milliseconds(10000));
  ASSERT_TRUE(code.ok()) << code.status().ToString();
  EXPECT_EQ(*code, 0) << Log();
  EXPECT_LT(std::chrono::steady_clock::now() - start, milliseconds(5000));
}

// Start-up errors: a bad flag (2), a certificate that is not there or a cluster that is not
// configured (1); each says what is wrong.
// Issue 34, "rollout loses none": a rolling update under steady admission. Replica A gets
// SIGTERM while clients keep sending reviews over kept connections; the "endpoints
// controller" (this test) moves traffic to replica B once A's /readyz says it is shutting
// down, as the Service would. A keeps answering during its shutdown delay (closing each
// connection after its answer) and answers what it already read before it exits: every
// review gets its 200 and its patch, from one replica or the other.
TEST_F(WebhookProcessTest, ARolloutUnderSteadyAdmissionLosesNoReview) {
  Start({"--shutdown-delay-seconds=2"});
  const int port_a = port_;
  // Replica B, beside it.
  const std::string log_b = dir_.path() + "/webhook-b.log";
  auto b = Subprocess::Spawn(Argv(), log_b);
  ASSERT_TRUE(b.ok());
  int port_b = 0;
  const std::regex serving("serving .*port=([0-9]+)");
  ASSERT_TRUE(testing::WaitUntil([&] {
    std::ifstream in(log_b);
    std::stringstream ss;
    ss << in.rdbuf();
    const std::string log = ss.str();
    std::smatch m;
    if (!std::regex_search(log, m, serving)) return false;
    port_b = std::stoi(m[1]);
    return true;
  }));
  auto ready_b = testing::LoopbackClient(port_b, testing::SharedPki().ca_pem(), milliseconds(5000));
  ASSERT_TRUE(testing::WaitUntil([&] {
    auto r = ready_b->Do({kube::Verb::kGet, "/readyz", "", "", milliseconds(0)});
    return r.ok() && r->status == 200;
  }));

  std::atomic<int> endpoint{port_a};
  std::atomic<bool> stop{false};
  std::atomic<int> answered_a{0}, answered_b{0}, lost{0};
  std::mutex mu;
  std::vector<std::string> failures;
  std::vector<std::thread> clients;
  for (int t = 0; t < 4; ++t) {
    clients.emplace_back([&, t] {
      std::map<int, std::unique_ptr<kube::RestClient>> by_port;
      for (int i = 0; !stop; ++i) {
        const int port = endpoint;
        auto& c = by_port[port];
        if (!c)
          c = testing::LoopbackClient(port, testing::SharedPki().ca_pem(), milliseconds(5000));
        kube::Request r;
        r.verb = kube::Verb::kPost;
        r.path = "/mutate?timeout=5s";
        r.body = Review(Pod("rdma-a"), "r-" + std::to_string(t) + "-" + std::to_string(i));
        Result<kube::Response> resp = c->Do(r);
        const json review = resp.ok() ? json::parse(resp->body, nullptr, false) : json();
        if (resp.ok() && resp->status == 200 && review.is_object() &&
            review["response"].value("allowed", false) && PatchOf(review).size() == 1) {
          ++(port == port_a ? answered_a : answered_b);
        } else {
          ++lost;
          std::lock_guard<std::mutex> lock(mu);
          failures.push_back(resp.ok() ? std::to_string(resp->status) + " " + resp->body
                                       : resp.status().ToString());
        }
      }
    });
  }
  ASSERT_TRUE(testing::WaitUntil([&] { return answered_a >= 20; }));
  ASSERT_TRUE(proc_->Signal(SIGTERM).ok());
  ASSERT_TRUE(testing::WaitUntil([&] {
    auto r = client_->Do({kube::Verb::kGet, "/readyz", "", "", milliseconds(0)});
    return r.ok() && r->status == 503;
  })) << Log();
  const int a_at_switch = answered_a;
  endpoint = port_b;  // the Service drops the replica that is not ready
  auto code = proc_->Wait(milliseconds(15000));
  ASSERT_TRUE(code.ok()) << code.status().ToString();
  EXPECT_EQ(*code, 0) << Log();
  ASSERT_TRUE(testing::WaitUntil([&] { return answered_b >= 20; }));
  stop = true;
  for (auto& th : clients) th.join();
  EXPECT_EQ(lost.load(), 0) << (failures.empty() ? "" : failures.front());
  EXPECT_GE(answered_a.load(), a_at_switch);
  (void)b->Signal(SIGTERM);
  (void)b->Wait(milliseconds(10000));
}

TEST_F(WebhookProcessTest, StartUpErrorsAreClear) {
  auto run = [&](std::vector<std::string> argv) {
    auto out = Execute(argv[0], argv, {}, "", milliseconds(10000));
    EXPECT_TRUE(out.ok());
    return out.ok() ? *out : ExecOutput{};
  };
  ExecOutput bad = run(Argv({"--missing-network=maybe"}));
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_THAT(bad.err + bad.out, HasSubstr("--missing-network"));

  std::vector<std::string> argv = Argv();
  argv[1] = "--tls-cert-file=" + dir_.path() + "/nope.crt";
  ExecOutput nocert = run(argv);
  EXPECT_EQ(nocert.exit_code, 1);
  EXPECT_THAT(nocert.err, HasSubstr("nope.crt"));

  argv = Argv();
  argv[4] = "--kubeconfig=" + dir_.path() + "/nope.yaml";
  ExecOutput nokube = run(argv);
  EXPECT_EQ(nokube.exit_code, 1);
  EXPECT_THAT(nokube.err, HasSubstr("nope.yaml"));

  ExecOutput help = run({testing::BinDir() + "/hcashare-webhook", "--help"});
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_THAT(help.out, HasSubstr("--tls-cert-file"));
}

}  // namespace
}  // namespace hcashare
