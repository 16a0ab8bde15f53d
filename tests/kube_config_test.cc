// kube/config.h, kube/pem.h and kube/status_error.h: kubeconfigs good and bad, the
// in-cluster files, token rotation, base64, and API Status objects as typed errors.
#include "kube/config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <string>

#include "kube/pem.h"
#include "kube/status_error.h"
#include "tests/kube_test_util.h"

namespace hcashare::kube {
namespace {

using ::hcashare::testing::Base64;
using ::hcashare::testing::SharedPki;
using ::hcashare::testing::WriteText;
using ::testing::HasSubstr;

class KubeConfigTest : public ::testing::Test {
 protected:
  std::string Path(const std::string& name) const { return dir_.path() + "/" + name; }

  // A kubeconfig whose context "ctx" (current) uses cluster "c" at `server` with the test CA
  // as data, and user "u" with `user_yaml` (indented by 4).
  std::string Kubeconfig(const std::string& user_yaml,
                         const std::string& server = "https://127.0.0.1:6443",
                         const std::string& cluster_extra = "") {
    return "apiVersion: v1\nkind: Config\ncurrent-context: ctx\n"
           "clusters:\n- name: c\n  cluster:\n    server: " +
           server + "\n    certificate-authority-data: " + Base64(SharedPki().ca_pem()) + "\n" +
           cluster_extra +
           "contexts:\n- name: ctx\n  context:\n    cluster: c\n    user: u\n"
           "    namespace: ml\n"
           "users:\n- name: u\n  user:\n" +
           user_yaml;
  }

  // Loads `text` written as "config"; the error message when `ok` is false.
  Result<ClusterConfig> Load(const std::string& text, const std::string& context = "") {
    WriteText(Path("config"), text);
    return LoadKubeconfig(Path("config"), context);
  }

  // The error message of loading `text`, which must fail.
  std::string LoadError(const std::string& text) {
    Result<ClusterConfig> c = Load(text);
    EXPECT_FALSE(c.ok());
    return c.ok() ? "" : c.status().message();
  }

  TempDir dir_{"kube-config-"};
};

TEST_F(KubeConfigTest, TokenUser) {
  Result<ClusterConfig> c = Load(Kubeconfig("    token: abc.def\n"));
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->server, "https://127.0.0.1:6443");
  EXPECT_EQ(c->url.host, "127.0.0.1");
  EXPECT_EQ(c->url.port, 6443);
  EXPECT_TRUE(c->url.host_is_ip);
  EXPECT_EQ(c->ca_pem, SharedPki().ca_pem());
  EXPECT_EQ(c->token, "abc.def");
  EXPECT_EQ(c->namespace_name, "ml");
  EXPECT_THAT(c->source, HasSubstr("context ctx"));
}

TEST_F(KubeConfigTest, ClientCertificateFilesRelativeToTheKubeconfig) {
  auto client = SharedPki().IssueClient("admin");
  ASSERT_TRUE(client.ok());
  WriteText(Path("admin.crt"), client->cert_pem);
  WriteText(Path("admin.key"), client->key_pem);
  WriteText(Path("ca.crt"), SharedPki().ca_pem());
  std::string text =
      "current-context: ctx\n"
      "clusters:\n- name: c\n  cluster:\n    server: https://api.example:443/prefix/\n"
      "    certificate-authority: ca.crt\n    tls-server-name: kubernetes\n"
      "contexts:\n- name: other\n  context: {cluster: x}\n"
      "- name: ctx\n  context:\n    cluster: c\n    user: u\n"
      "users:\n- name: u\n  user:\n    client-certificate: admin.crt\n"
      "    client-key: " +
      Path("admin.key") + "\n";
  Result<ClusterConfig> c = Load(text);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->url.host, "api.example");
  EXPECT_FALSE(c->url.host_is_ip);
  EXPECT_EQ(c->url.base_path, "/prefix");
  EXPECT_EQ(c->tls_server_name, "kubernetes");
  EXPECT_EQ(c->ca_file, Path("ca.crt"));
  EXPECT_EQ(c->client_cert_pem, client->cert_pem);
  EXPECT_EQ(c->client_key_pem, client->key_pem);
  EXPECT_TRUE(c->token.empty());
}

TEST_F(KubeConfigTest, NamedContextOverridesCurrent) {
  // A second context "second" (cluster c, user v with a token file) next to "ctx".
  std::string text = Kubeconfig("    token: t\n") + "- name: v\n  user:\n    tokenFile: tok\n";
  text.insert(text.find("users:"), "- name: second\n  context:\n    cluster: c\n    user: v\n");
  WriteText(Path("tok"), "from-file\n");
  Result<ClusterConfig> c = Load(text, "second");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->token_file, Path("tok"));
  EXPECT_TRUE(c->token.empty());
  EXPECT_TRUE(c->namespace_name.empty());
}

TEST_F(KubeConfigTest, ErrorsNameTheFileAndTheField) {
  struct Case {
    std::string text;
    std::string want;
  };
  const std::string ca = Base64(SharedPki().ca_pem());
  const std::vector<Case> cases = {
      {"current-context: ctx\n", "contexts: missing"},
      {"clusters: []\n", "current-context: not set"},
      {"current-context: [a]\n", "$.current-context: must be a string"},
      {Kubeconfig("    token: t\n", "http://127.0.0.1:8080"),
       "clusters[0] \"c\" cluster.server: \"http://127.0.0.1:8080\": must start with https://"},
      {Kubeconfig("    token: t\n", "https://127.0.0.1:70000"), "port out of range"},
      {Kubeconfig("    token: t\n", "https://[::1"), "unterminated [IPv6] host"},
      {Kubeconfig("    token: t\n", "https://h:443", "    insecure-skip-tls-verify: true\n"),
       "cluster.insecure-skip-tls-verify: not supported"},
      {Kubeconfig("    token: t\n    tokenFile: f\n"), "set one of token, tokenFile and exec"},
      {Kubeconfig("    exec: {command: aws}\n"),
       "users[0] \"u\" user.exec.apiVersion: must be client.authentication.k8s.io/v1"},
      {Kubeconfig("    auth-provider: {name: gcp}\n"),
       "users[0] \"u\" user.auth-provider: not supported"},
      {Kubeconfig("    client-certificate-data: '!!'\n    client-key-data: eA==\n"),
       "user.client-certificate-data: invalid base64"},
      {Kubeconfig("    client-certificate-data: " + Base64("not pem") + "\n"),
       "user.client-certificate-data: no PEM certificate found"},
      {Kubeconfig("    client-certificate-data: " + ca + "\n"),
       "client-certificate and client-key go together"},
      {Kubeconfig("    client-certificate-data: " + ca + "\n    client-key-data: " + ca + "\n"),
       "user.client-key-data: no PEM private key found"},
      {Kubeconfig("    client-key: missing.key\n"), "user.client-key: "},
      {Kubeconfig("    tokenFile: /nonexistent/token\n"), "user.tokenFile: "},
      {Kubeconfig("    token: t\n").replace(0, 0, "x: [\n"), "invalid YAML"},
  };
  for (const Case& c : cases) {
    std::string message = LoadError(c.text);
    EXPECT_THAT(message, HasSubstr("kubeconfig " + Path("config") + ": ")) << c.text;
    EXPECT_THAT(message, HasSubstr(c.want)) << c.text;
  }
  // A missing CA, a missing context, an absent file.
  std::string no_ca = Kubeconfig("    token: t\n");
  no_ca.erase(no_ca.find("    certificate-authority-data"),
              no_ca.find("contexts:") - no_ca.find("    certificate-authority-data"));
  EXPECT_THAT(LoadError(no_ca), HasSubstr("needs certificate-authority"));
  WriteText(Path("config"), Kubeconfig("    token: t\n"));
  Result<ClusterConfig> missing = LoadKubeconfig(Path("config"), "nope");
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.status().message(), HasSubstr("contexts: no entry named \"nope\""));
  Result<ClusterConfig> absent = LoadKubeconfig(Path("absent"));
  ASSERT_FALSE(absent.ok());
  EXPECT_THAT(absent.status().message(), HasSubstr(Path("absent")));
}

TEST_F(KubeConfigTest, OversizeKubeconfigIsRefusedUnread) {
  std::string text =
      Kubeconfig("    token: t\n") + "# " + std::string(kMaxKubeconfigBytes, 'x') + "\n";
  EXPECT_THAT(LoadError(text), HasSubstr(std::to_string(kMaxKubeconfigBytes)));
}

TEST_F(KubeConfigTest, InCluster) {
  WriteText(Path("ca.crt"), SharedPki().ca_pem());
  WriteText(Path("token"), "tok-1\n");
  WriteText(Path("namespace"), "kube-system");
  InClusterSource s;
  s.host = "10.96.0.1";
  s.port = "443";
  s.service_account_dir = dir_.path();
  Result<ClusterConfig> c = LoadInClusterConfig(s);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->server, "https://10.96.0.1:443");
  EXPECT_EQ(c->token_file, Path("token"));
  EXPECT_EQ(c->ca_file, Path("ca.crt"));
  EXPECT_EQ(c->namespace_name, "kube-system");

  Result<ServerUrl> v6 = ParseServerUrl("https://[::1]/", "test");
  ASSERT_TRUE(v6.ok()) << v6.status().ToString();
  EXPECT_EQ(v6->host, "::1");
  EXPECT_EQ(v6->port, 443);
  EXPECT_EQ(v6->base_path, "");
  EXPECT_FALSE(ParseServerUrl("https://h:", "test").ok());

  s.host = "fd00::1";
  c = LoadInClusterConfig(s);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->server, "https://[fd00::1]:443");
  EXPECT_EQ(c->url.host, "fd00::1");
}

TEST_F(KubeConfigTest, InClusterErrorsNameTheVariableOrFile) {
  InClusterSource s;
  s.service_account_dir = dir_.path();
  auto error = [&] {
    Result<ClusterConfig> c = LoadInClusterConfig(s);
    EXPECT_FALSE(c.ok());
    return c.ok() ? "" : c.status().message();
  };
  EXPECT_THAT(error(), HasSubstr("KUBERNETES_SERVICE_HOST is not set"));
  s.host = "10.0.0.1";
  EXPECT_THAT(error(), HasSubstr("KUBERNETES_SERVICE_PORT is not set"));
  s.port = "http";
  EXPECT_THAT(error(), HasSubstr("bad port"));
  s.port = "443";
  EXPECT_THAT(error(), HasSubstr(Path("ca.crt")));
  WriteText(Path("ca.crt"), "garbage");
  EXPECT_THAT(error(), HasSubstr(Path("ca.crt") + ": no PEM certificate found"));
  WriteText(Path("ca.crt"), SharedPki().ca_pem());
  EXPECT_THAT(error(), HasSubstr(Path("token")));
  WriteText(Path("token"), " \n");
  EXPECT_THAT(error(), HasSubstr("the token is empty"));
  WriteText(Path("token"), "ok");
  EXPECT_TRUE(LoadInClusterConfig(s).ok());  // no namespace file: fine
}

TEST_F(KubeConfigTest, TokenFileIsReadAgainWhenItChanges) {
  const std::string path = Path("token");
  WriteText(path, "first\n");
  TokenFile token(path);
  ASSERT_EQ(token.Get().value_or(""), "first");
  // Rotation the kubelet's way: a new file renamed over the old (a new inode).
  WriteText(Path("token.new"), "second");
  ASSERT_EQ(::rename(Path("token.new").c_str(), path.c_str()), 0);
  EXPECT_EQ(token.Get().value_or(""), "second");
  // Rewritten in place with another size.
  WriteText(path, "third-longer");
  EXPECT_EQ(token.Get().value_or(""), "third-longer");
  // Invalidate() forces a read even when the file looks the same.
  token.Invalidate();
  EXPECT_EQ(token.Get().value_or(""), "third-longer");
  // A token file that went away is an error, not the stale token.
  ASSERT_EQ(::unlink(path.c_str()), 0);
  Result<std::string> gone = token.Get();
  ASSERT_FALSE(gone.ok());
  EXPECT_THAT(gone.status().message(), HasSubstr(path));
  WriteText(path, "bad\x01token");
  EXPECT_FALSE(token.Get().ok());
}

TEST(KubeBase64Test, DecodesAndRefuses) {
  EXPECT_EQ(DecodeBase64("aGVsbG8=").value_or("?"), "hello");
  EXPECT_EQ(DecodeBase64("aGVs\nbG8h").value_or("?"), "hello!");
  EXPECT_EQ(DecodeBase64("").value_or("?"), "");
  for (const char* bad : {"a", "aGVsbG8=x", "aGV*", "a===", "aGVsbG8"}) {
    EXPECT_FALSE(DecodeBase64(bad).ok()) << bad;
  }
  const std::string all = [] {
    std::string s;
    for (int i = 0; i < 256; ++i) s += static_cast<char>(i);
    return s;
  }();
  EXPECT_EQ(DecodeBase64(Base64(all)).value_or("?"), all);
}

TEST(KubeStatusErrorTest, StatusObjects) {
  ApiError e = ParseApiError(404,
                             R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",
          "message":"pods \"x\" not found","reason":"NotFound","code":404})",
                             "");
  EXPECT_EQ(e.kind, ApiErrorKind::kNotFound);
  EXPECT_EQ(e.reason, "NotFound");
  EXPECT_EQ(e.message, "pods \"x\" not found");
  Status st = e.ToStatus("GET /api/v1/namespaces/a/pods/x");
  EXPECT_TRUE(st.IsNotFound());
  EXPECT_TRUE(IsNotFound(st));
  EXPECT_EQ(HttpCodeOf(st), 404);
  EXPECT_THAT(st.message(), HasSubstr("GET /api/v1/namespaces/a/pods/x: HTTP 404 NotFound"));

  ApiError exists = ParseApiError(409, R"({"kind":"Status","reason":"AlreadyExists"})", "");
  EXPECT_EQ(exists.kind, ApiErrorKind::kConflict);
  EXPECT_EQ(exists.ToStatus("POST").code(), StatusCode::kAlreadyExists);
  ApiError conflict = ParseApiError(409, R"({"kind":"Status","reason":"Conflict"})", "");
  EXPECT_EQ(conflict.ToStatus("PUT").code(), StatusCode::kFailedPrecondition);
  EXPECT_TRUE(IsConflict(conflict.ToStatus("PUT")));
  EXPECT_TRUE(
      IsGone(ParseApiError(410, R"({"kind":"Status","reason":"Expired"})", "").ToStatus("LIST")));

  ApiError busy = ParseApiError(429, R"({"kind":"Status","reason":"TooManyRequests"})", " 7 ");
  EXPECT_EQ(busy.kind, ApiErrorKind::kTooManyRequests);
  EXPECT_EQ(busy.retry_after_seconds, 7);
  EXPECT_TRUE(IsTooManyRequests(busy.ToStatus("GET")));
  EXPECT_EQ(busy.ToStatus("GET").code(), StatusCode::kUnavailable);
  // details.retryAfterSeconds when there is no header; the header wins; both capped.
  const char* with_details =
      R"({"kind":"Status","reason":"ServerTimeout","details":{"retryAfterSeconds":3},"code":500})";
  EXPECT_EQ(ParseApiError(500, with_details, "").retry_after_seconds, 3);
  EXPECT_EQ(ParseApiError(500, with_details, "9").retry_after_seconds, 9);
  EXPECT_EQ(ParseApiError(429, "", "999999").retry_after_seconds, kMaxRetryAfterSeconds);
  EXPECT_FALSE(ParseApiError(429, "", "Wed, 21 Oct 2015 07:28:00 GMT").retry_after_seconds);
  EXPECT_EQ(ParseApiError(503, "", "").kind, ApiErrorKind::kServerError);
  EXPECT_EQ(ParseApiError(418, "", "").kind, ApiErrorKind::kOther);
}

TEST(KubeStatusErrorTest, BodiesThatAreNoStatusAreBounded) {
  ApiError html = ParseApiError(502, "<html>\r\nBad gateway</html>", "");
  EXPECT_EQ(html.kind, ApiErrorKind::kServerError);
  EXPECT_EQ(html.message, "<html>  Bad gateway</html>");
  ApiError big = ParseApiError(500, std::string(kMaxStatusBodyBytes + 1, '{'), "");
  EXPECT_THAT(big.message, HasSubstr("not parsed"));
  std::string long_message = R"({"kind":"Status","message":")" + std::string(5000, 'm') + "\"}";
  ApiError cut = ParseApiError(500, long_message, "");
  EXPECT_EQ(cut.message.size(), kMaxStatusMessageBytes + 3);
  ApiError not_status = ParseApiError(404, R"({"kind":"Pod"})", "");
  EXPECT_EQ(not_status.message, R"({"kind":"Pod"})");
}

TEST(KubeStatusErrorTest, WatchErrorEventObject) {
  auto j = nlohmann::json::parse(
      R"({"kind":"Status","status":"Failure","reason":"Expired","message":"too old","code":410})");
  ApiError e = ApiErrorFromStatusObject(j);
  EXPECT_EQ(e.http_code, 410);
  EXPECT_EQ(e.kind, ApiErrorKind::kGone);
  EXPECT_EQ(e.message, "too old");
  EXPECT_EQ(ApiErrorFromStatusObject(nlohmann::json::array()).kind, ApiErrorKind::kOther);
}

}  // namespace
}  // namespace hcashare::kube
