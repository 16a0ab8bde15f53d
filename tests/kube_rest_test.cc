// kube/rest.h against testing/fake_apiserver.h over HTTPS on loopback: round trips of every
// verb, typed errors, TLS verification (wrong CA, wrong name), tokens (wrong, rotated),
// client certificates, timeouts and the response cap.
#include "kube/rest.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <string>

#include "common/temp_dir.h"
#include "kube/status_error.h"
#include "testing/fake_apiserver.h"
#include "testing/test_pki.h"
#include "tests/kube_test_util.h"

namespace hcashare::kube {
namespace {

using ::hcashare::testing::SharedPki;
using ::hcashare::testing::WriteText;
using ::testing::HasSubstr;
using ::testing::StartsWith;
using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

constexpr char kConfigMaps[] = "/api/v1/namespaces/ml/configmaps";

class KubeRestTest : public ::testing::Test {
 protected:
  void SetUp() override { server_ = StartServer({}); }

  static std::unique_ptr<fake::FakeApiServer> StartServer(fake::FakeApiServerOptions options) {
    auto s = fake::FakeApiServer::Start(&SharedPki(), std::move(options));
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    return s.ok() ? std::move(*s) : nullptr;
  }

  // A config for `server` trusting the shared test CA, with the server's token.
  static ClusterConfig ConfigFor(const fake::FakeApiServer& server) {
    ClusterConfig c;
    c.server = server.url();
    c.url = ParseServerUrl(c.server, "test").value();
    c.ca_pem = SharedPki().ca_pem();
    c.token = "test-token";
    c.source = "test";
    return c;
  }

  static std::unique_ptr<RestClient> Client(const ClusterConfig& config,
                                            RestOptions options = Unlimited()) {
    auto c = RestClient::Create(config, std::move(options));
    EXPECT_TRUE(c.ok()) << c.status().ToString();
    return c.ok() ? std::move(*c) : nullptr;
  }

  std::unique_ptr<RestClient> Client() { return Client(ConfigFor(*server_), Unlimited()); }

  // Options without the client-side rate limit (its own test checks it).
  static RestOptions Unlimited() {
    RestOptions o;
    o.qps = 0;
    return o;
  }

  static json Body(const Result<Response>& r) {
    return r.ok() ? json::parse(r->body, nullptr, false) : json();
  }

  static json ConfigMap(const std::string& name, const std::string& value) {
    return {{"apiVersion", "v1"},
            {"kind", "ConfigMap"},
            {"metadata", {{"name", name}}},
            {"data", {{"k", value}}}};
  }

  std::unique_ptr<fake::FakeApiServer> server_;
};

TEST_F(KubeRestTest, EveryVerbRoundTrips) {
  auto client = Client();
  ASSERT_TRUE(client);
  Result<Response> created = client->Post(kConfigMaps, ConfigMap("a", "1").dump());
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  EXPECT_EQ(created->status, 201);
  const std::string rv = Body(created)["metadata"]["resourceVersion"];

  Result<Response> again = client->Post(kConfigMaps, ConfigMap("a", "1").dump());
  ASSERT_FALSE(again.ok());
  EXPECT_TRUE(IsConflict(again.status()));
  EXPECT_EQ(again.status().code(), StatusCode::kAlreadyExists);

  Result<Response> got = client->Get(std::string(kConfigMaps) + "/a");
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(Body(got)["data"]["k"], "1");
  EXPECT_EQ(got->content_type, "application/json");

  Result<Response> list = client->Get(std::string(kConfigMaps) + "?limit=10");
  ASSERT_TRUE(list.ok()) << list.status().ToString();
  EXPECT_EQ(Body(list)["items"].size(), 1u);

  json update = Body(got);
  update["data"]["k"] = "2";
  Result<Response> put = client->Put(std::string(kConfigMaps) + "/a", update.dump());
  ASSERT_TRUE(put.ok()) << put.status().ToString();
  Result<Response> stale = client->Put(std::string(kConfigMaps) + "/a", update.dump());
  ASSERT_FALSE(stale.ok());
  EXPECT_TRUE(IsConflict(stale.status()));
  EXPECT_EQ(stale.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(stale.status().message(), HasSubstr("PUT /api/v1/namespaces/ml/configmaps/a: "
                                                  "HTTP 409 Conflict: the object has been"));

  Result<Response> merged =
      client->Patch(std::string(kConfigMaps) + "/a", R"({"data":{"m":"x"}})", PatchType::kMerge);
  ASSERT_TRUE(merged.ok()) << merged.status().ToString();
  EXPECT_EQ(Body(merged)["data"], json({{"k", "2"}, {"m", "x"}}));
  Result<Response> jsonpatch = client->Patch(
      std::string(kConfigMaps) + "/a", R"([{"op":"remove","path":"/data/m"}])", PatchType::kJson);
  ASSERT_TRUE(jsonpatch.ok()) << jsonpatch.status().ToString();
  EXPECT_EQ(Body(jsonpatch)["data"], json({{"k", "2"}}));
  // Server-side apply: the fake, like the API server, needs a field manager.
  const std::string apply = ConfigMap("b", "applied").dump();
  Result<Response> no_manager =
      client->Patch(std::string(kConfigMaps) + "/b", apply, PatchType::kApply);
  EXPECT_EQ(HttpCodeOf(no_manager.status()), 400);
  Result<Response> applied = client->Patch(
      std::string(kConfigMaps) + "/b?fieldManager=hcashare&force=true", apply, PatchType::kApply);
  ASSERT_TRUE(applied.ok()) << applied.status().ToString();
  EXPECT_EQ(server_->Get(kConfigMaps, "b")["data"]["k"], "applied");

  const std::string current = Body(jsonpatch)["metadata"]["resourceVersion"];
  Result<Response> bad_precondition = client->Delete(
      std::string(kConfigMaps) + "/a", json({{"preconditions", {{"resourceVersion", rv}}}}).dump());
  EXPECT_TRUE(IsConflict(bad_precondition.status()));
  Result<Response> deleted =
      client->Delete(std::string(kConfigMaps) + "/a",
                     json({{"preconditions", {{"resourceVersion", current}}}}).dump());
  ASSERT_TRUE(deleted.ok()) << deleted.status().ToString();
  Result<Response> absent = client->Get(std::string(kConfigMaps) + "/a");
  ASSERT_FALSE(absent.ok());
  EXPECT_TRUE(IsNotFound(absent.status()));
  EXPECT_TRUE(absent.status().IsNotFound());

  // What went over the wire.
  std::vector<fake::SeenRequest> seen = server_->Requests();
  ASSERT_FALSE(seen.empty());
  for (const fake::SeenRequest& r : seen) {
    EXPECT_EQ(r.authorization, "Bearer test-token");
    EXPECT_THAT(r.user_agent, StartsWith("hcashare/"));
    EXPECT_EQ(r.user_agent, UserAgent());
  }
  EXPECT_EQ(seen[0].method, "POST");
  EXPECT_EQ(seen[0].content_type, "application/json");
  bool saw_apply = false;
  for (const fake::SeenRequest& r : seen) {
    if (r.content_type == "application/apply-patch+yaml") saw_apply = true;
  }
  EXPECT_TRUE(saw_apply);
}

TEST_F(KubeRestTest, InjectedErrorsAreTyped) {
  auto client = Client();
  ASSERT_TRUE(client);
  server_->InjectError(429, "TooManyRequests", 1, 3);
  Request get;
  get.path = kConfigMaps;
  Result<Response> raw = client->Do(get);
  ASSERT_TRUE(raw.ok()) << raw.status().ToString();
  EXPECT_EQ(raw->status, 429);
  EXPECT_EQ(raw->retry_after, "3");
  ApiError e = ParseApiError(raw->status, raw->body, raw->retry_after);
  EXPECT_EQ(e.kind, ApiErrorKind::kTooManyRequests);
  EXPECT_EQ(e.retry_after_seconds, 3);

  server_->InjectError(429, "TooManyRequests", 1, 5);
  Result<Response> busy = client->Get(kConfigMaps);
  EXPECT_TRUE(IsTooManyRequests(busy.status()));
  EXPECT_THAT(busy.status().message(), HasSubstr("retry after 5 s"));
  server_->InjectError(410, "Expired");
  EXPECT_TRUE(IsGone(client->Get(kConfigMaps).status()));
  server_->InjectError(500, "InternalError");
  Result<Response> internal = client->Get(kConfigMaps);
  EXPECT_EQ(HttpCodeOf(internal.status()), 500);
  EXPECT_EQ(internal.status().code(), StatusCode::kUnavailable);
  EXPECT_TRUE(client->Get(kConfigMaps).ok());  // injections used up
}

TEST_F(KubeRestTest, KubeconfigAndInClusterConfigReachTheServer) {
  TempDir dir("kube-rest-");
  WriteText(
      dir.path() + "/config",
      "current-context: c\nclusters:\n- name: k\n  cluster:\n    server: " + server_->url() +
          "\n    certificate-authority-data: " + ::hcashare::testing::Base64(SharedPki().ca_pem()) +
          "\ncontexts:\n- name: c\n  context: {cluster: k, user: u}\n"
          "users:\n- name: u\n  user: {token: test-token}\n");
  Result<ClusterConfig> from_file = LoadClusterConfig(dir.path() + "/config", "");
  ASSERT_TRUE(from_file.ok()) << from_file.status().ToString();
  Result<Response> r = Client(*from_file)->Get(kConfigMaps);
  EXPECT_TRUE(r.ok()) << r.status().ToString();

  WriteText(dir.path() + "/ca.crt", SharedPki().ca_pem());
  WriteText(dir.path() + "/token", "test-token\n");
  InClusterSource in_cluster;
  in_cluster.host = "127.0.0.1";
  in_cluster.port = std::to_string(server_->port());
  in_cluster.service_account_dir = dir.path();
  Result<ClusterConfig> pod = LoadInClusterConfig(in_cluster);
  ASSERT_TRUE(pod.ok()) << pod.status().ToString();
  r = Client(*pod)->Get(kConfigMaps);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
}

TEST_F(KubeRestTest, WarningHeadersAreKept) {
  server_->SetWarning("299 - \"unknown field spec.x\"");
  Result<Response> r = Client()->Get(kConfigMaps);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->warnings.size(), 2u);
  EXPECT_EQ(r->warnings[0], "299 - \"unknown field spec.x\"");
  EXPECT_EQ(r->warnings[1], "299 - \"unknown field spec.x\" (again)");
}

TEST_F(KubeRestTest, WrongCaIsRefused) {
  auto other = fake::TestPki::Create("other-ca");
  ASSERT_TRUE(other.ok());
  ClusterConfig config = ConfigFor(*server_);
  config.ca_pem = (*other)->ca_pem();
  auto client = Client(config);
  ASSERT_TRUE(client);
  Result<Response> r = client->Get(kConfigMaps);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable);
  EXPECT_THAT(r.status().message(), HasSubstr("TLS handshake"));
  EXPECT_THAT(r.status().message(), HasSubstr("certificate"));
  EXPECT_THAT(r.status().message(), HasSubstr(server_->url()));
  for (const fake::SeenRequest& seen : server_->Requests()) {
    EXPECT_NE(seen.authorization, "Bearer test-token") << "token sent to an unverified server";
  }
}

TEST_F(KubeRestTest, ServerNameIsVerified) {
  ClusterConfig config = ConfigFor(*server_);
  config.tls_server_name = "kubernetes.default.svc";  // not in the certificate
  Result<Response> wrong = Client(config)->Get(kConfigMaps);
  ASSERT_FALSE(wrong.ok());
  EXPECT_THAT(wrong.status().message(), HasSubstr("TLS handshake"));
  config.tls_server_name = "localhost";  // in the certificate
  EXPECT_TRUE(Client(config)->Get(kConfigMaps).ok());
  // By name: "localhost" resolves and matches DNS:localhost.
  config = ConfigFor(*server_);
  config.server = "https://localhost:" + std::to_string(server_->port());
  config.url = ParseServerUrl(config.server, "test").value();
  Result<Response> by_name = Client(config)->Get(kConfigMaps);
  EXPECT_TRUE(by_name.ok()) << by_name.status().ToString();
}

TEST_F(KubeRestTest, WrongTokenIsUnauthorized) {
  ClusterConfig config = ConfigFor(*server_);
  config.token = "wrong";
  Result<Response> r = Client(config)->Get(kConfigMaps);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(HttpCodeOf(r.status()), 401);
  EXPECT_EQ(r.status().code(), StatusCode::kPermissionDenied);
}

TEST_F(KubeRestTest, RotatedTokenFileIsFollowed) {
  TempDir dir("kube-rest-");
  const std::string token = dir.path() + "/token";
  WriteText(token, "test-token\n");
  ClusterConfig config = ConfigFor(*server_);
  config.token.clear();
  config.token_file = token;
  auto client = Client(config);
  ASSERT_TRUE(client->Get(kConfigMaps).ok());
  server_->SetToken("rotated");
  EXPECT_EQ(HttpCodeOf(client->Get(kConfigMaps).status()), 401);
  WriteText(dir.path() + "/token.new", "rotated");
  ASSERT_EQ(::rename((dir.path() + "/token.new").c_str(), token.c_str()), 0);
  Result<Response> after = client->Get(kConfigMaps);
  EXPECT_TRUE(after.ok()) << after.status().ToString();
  EXPECT_EQ(server_->Requests().back().authorization, "Bearer rotated");
}

// Issue 34, part 7: the CA and client certificate files are read again when they change
// (a CA rotation, a renewed certificate), for the connections that follow; files that do
// not load keep the previous ones.
TEST_F(KubeRestTest, ChangedCredentialFilesAreUsedByTheNextConnections) {
  auto server = StartServer({/*token=*/"", /*client_ca_pem=*/SharedPki().ca_pem()});
  ASSERT_TRUE(server);
  auto other = fake::TestPki::Create("other-ca");
  ASSERT_TRUE(other.ok());
  auto trusted = SharedPki().IssueClient("system:node:a");
  auto untrusted = (*other)->IssueClient("system:node:a");
  ASSERT_TRUE(trusted.ok() && untrusted.ok());
  TempDir dir("kube-rest-");
  const std::string ca = dir.path() + "/ca.crt", crt = dir.path() + "/tls.crt",
                    key = dir.path() + "/tls.key";
  // At first: a CA that did not sign the server's certificate, and a certificate the
  // server does not trust.
  WriteText(ca, (*other)->ca_pem());
  WriteText(crt, untrusted->cert_pem);
  WriteText(key, untrusted->key_pem);
  ClusterConfig config = ConfigFor(*server);
  config.token.clear();
  config.ca_pem = (*other)->ca_pem();
  config.ca_file = ca;
  config.client_cert_pem = untrusted->cert_pem;
  config.client_key_pem = untrusted->key_pem;
  config.client_cert_file = crt;
  config.client_key_file = key;
  RestOptions o = Unlimited();
  o.credential_check_interval = std::chrono::milliseconds(0);
  o.max_idle_connections = 0;
  auto client = Client(config, o);
  ASSERT_TRUE(client);
  Status st = client->Get(kConfigMaps).status();
  EXPECT_THAT(st.message(), HasSubstr("certificate verify failed"));
  // The CA rotates: the server is trusted, but our certificate is not.
  WriteText(ca + ".new", SharedPki().ca_pem());
  ASSERT_EQ(::rename((ca + ".new").c_str(), ca.c_str()), 0);
  EXPECT_FALSE(client->Get(kConfigMaps).ok());
  // Half a renewal (the certificate, not yet its key): refused to load, the old pair kept.
  WriteText(crt, trusted->cert_pem);
  EXPECT_FALSE(client->Get(kConfigMaps).ok());
  WriteText(key, trusted->key_pem);
  Result<Response> after = client->Get(kConfigMaps);
  EXPECT_TRUE(after.ok()) << after.status().ToString();
}

TEST_F(KubeRestTest, ClientCertificate) {
  auto server = StartServer({/*token=*/"", /*client_ca_pem=*/SharedPki().ca_pem()});
  ASSERT_TRUE(server);
  auto pair = SharedPki().IssueClient("system:node:a");
  ASSERT_TRUE(pair.ok());
  ClusterConfig config = ConfigFor(*server);
  config.token.clear();
  Result<Response> without = Client(config)->Get(kConfigMaps);
  EXPECT_FALSE(without.ok());
  config.client_cert_pem = pair->cert_pem;
  config.client_key_pem = pair->key_pem;
  Result<Response> with = Client(config)->Get(kConfigMaps);
  EXPECT_TRUE(with.ok()) << with.status().ToString();
  // A key that does not belong to the certificate is refused when the client is made.
  auto other = SharedPki().IssueClient("x");
  config.client_key_pem = other->key_pem;
  Result<std::unique_ptr<RestClient>> mismatch = RestClient::Create(config);
  ASSERT_FALSE(mismatch.ok());
  EXPECT_THAT(mismatch.status().message(), HasSubstr("the client key"));
  EXPECT_THAT(mismatch.status().message(), HasSubstr("mismatch"));
}

TEST_F(KubeRestTest, StalledServerTimesOut) {
  server_->SetStall(true);
  RestOptions options = Unlimited();
  options.timeout = std::chrono::milliseconds(300);
  auto client = Client(ConfigFor(*server_), options);
  const auto start = Clock::now();
  Result<Response> r = client->Get(kConfigMaps);
  const auto took = Clock::now() - start;
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable);
  EXPECT_THAT(r.status().message(), HasSubstr("timed out after 300 ms"));
  EXPECT_GE(took, std::chrono::milliseconds(300));
  EXPECT_LT(took, std::chrono::seconds(5));
  // A per-request timeout overrides the client's.
  Request req;
  req.path = kConfigMaps;
  req.timeout = std::chrono::milliseconds(100);
  Result<Response> quick = client->Do(req);
  EXPECT_THAT(quick.status().message(), HasSubstr("timed out after 100 ms"));
}

TEST_F(KubeRestTest, RateLimitBoundsCallsWithinTheTimeout) {
  RestOptions options;
  options.qps = 0.5;  // a slot every 2 s
  options.burst = 2;
  options.timeout = std::chrono::milliseconds(500);
  auto client = Client(ConfigFor(*server_), options);
  EXPECT_TRUE(client->Get(kConfigMaps).ok());
  EXPECT_TRUE(client->Get(kConfigMaps).ok());
  const size_t sent = server_->Requests().size();
  Result<Response> limited = client->Get(kConfigMaps);
  EXPECT_EQ(limited.status().code(), StatusCode::kUnavailable);
  EXPECT_THAT(limited.status().message(), HasSubstr("client-side rate limit"));
  EXPECT_EQ(server_->Requests().size(), sent);
}

TEST_F(KubeRestTest, OversizeResponseIsRefused) {
  server_->Seed(kConfigMaps, ConfigMap("big", std::string(100 * 1024, 'x')));
  RestOptions options = Unlimited();
  options.max_response_bytes = 10 * 1024;
  Result<Response> r = Client(ConfigFor(*server_), options)->Get(std::string(kConfigMaps) + "/big");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(r.status().message(), HasSubstr("larger than 10240 bytes"));
  EXPECT_TRUE(Client()->Get(std::string(kConfigMaps) + "/big").ok());
}

TEST_F(KubeRestTest, BadPathIsRefusedUnsent) {
  auto client = Client();
  for (const char* bad : {"", "api/v1", "/api/v1/x y", "/api/v1/x\r\nX-Evil: 1"}) {
    Result<Response> r = client->Get(bad);
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << bad;
  }
  EXPECT_EQ(server_->connections(), 0u);
}

TEST_F(KubeRestTest, NoServerIsUnavailable) {
  ClusterConfig config = ConfigFor(*server_);
  server_.reset();  // its port is closed now
  Result<Response> r = Client(config)->Get(kConfigMaps);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable);
  EXPECT_THAT(r.status().message(), HasSubstr("connect"));
}

// HTTP keep-alive: calls after the first skip the TCP and TLS handshakes on a kept
// connection; a kept connection the server closed is replaced for a repeatable call, and
// POST always goes on a new connection (it must not be sent twice).
class KubeKeepAliveTest : public KubeRestTest {
 protected:
  void Start(int max_requests_per_connection) {
    fake::FakeApiServerOptions o;
    o.keep_alive = true;
    o.max_requests_per_connection = max_requests_per_connection;
    server_ = StartServer(o);
    ASSERT_TRUE(server_);
    server_->Seed(kConfigMaps, ConfigMap("a", "1"));
  }
};

TEST_F(KubeKeepAliveTest, AKeptConnectionServesTheNextCalls) {
  Start(0);
  auto client = Client();
  ASSERT_TRUE(client);
  for (int i = 0; i < 5; ++i) {
    Result<Response> got = client->Get(std::string(kConfigMaps) + "/a");
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    EXPECT_EQ(Body(got)["data"]["k"], "1");
  }
  EXPECT_EQ(server_->connections(), 1u);
  // A client that keeps none opens one a call.
  RestOptions none = Unlimited();
  none.max_idle_connections = 0;
  auto fresh = Client(ConfigFor(*server_), none);
  ASSERT_TRUE(fresh->Get(std::string(kConfigMaps) + "/a").ok());
  ASSERT_TRUE(fresh->Get(std::string(kConfigMaps) + "/a").ok());
  EXPECT_EQ(server_->connections(), 3u);
}

TEST_F(KubeKeepAliveTest, AConnectionTheServerClosedIsReplaced) {
  Start(1);  // the server says keep-alive, then closes after each answer
  auto client = Client();
  ASSERT_TRUE(client);
  for (int i = 0; i < 3; ++i) {
    Result<Response> got = client->Get(std::string(kConfigMaps) + "/a");
    ASSERT_TRUE(got.ok()) << i << ": " << got.status().ToString();
  }
  // Each GET after the first found its kept connection closed and went on a new one.
  EXPECT_EQ(server_->connections(), 3u);
  size_t gets = 0;
  for (const auto& r : server_->Requests()) gets += r.method == "GET";
  EXPECT_EQ(gets, 3u);  // each answered once
}

TEST_F(KubeKeepAliveTest, PostNeverTakesAKeptConnection) {
  Start(0);
  auto client = Client();
  ASSERT_TRUE(client);
  ASSERT_TRUE(client->Get(std::string(kConfigMaps) + "/a").ok());
  ASSERT_TRUE(client->Post(kConfigMaps, ConfigMap("b", "2").dump()).ok());
  EXPECT_EQ(server_->connections(), 2u);
  // The POST's connection is kept in turn: the GET after it opens none.
  ASSERT_TRUE(client->Get(std::string(kConfigMaps) + "/b").ok());
  EXPECT_EQ(server_->connections(), 2u);
}

}  // namespace
}  // namespace hcashare::kube
