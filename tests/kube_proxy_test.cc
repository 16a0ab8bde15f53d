// kube/proxy.h and the API client through an HTTP proxy (a CONNECT tunnel): the proxy's URL
// forms, NO_PROXY's entries as Go's httpproxy reads them, the environment's rules
// (loopback never proxied), and requests, a list and a refusal through the fake proxy
// (testing/fake_connect_proxy.h) to the fake API server.
#include "kube/proxy.h"

#include <map>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/temp_dir.h"
#include "kube/config.h"
#include "kube/list.h"
#include "kube/pem.h"
#include "kube/rest.h"
#include "testing/fake_apiserver.h"
#include "testing/fake_connect_proxy.h"
#include "tests/kube_test_util.h"

namespace hcashare::kube {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(ProxyUrlTest, Forms) {
  auto p = ParseProxyUrl("http://user:pw@proxy.corp:3128/", "x");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->host, "proxy.corp");
  EXPECT_EQ(p->port, 3128);
  EXPECT_EQ(p->authorization, "Basic dXNlcjpwdw==");
  EXPECT_EQ(p->url, "http://proxy.corp:3128") << "no user info in messages";
  auto bare = ParseProxyUrl("10.0.0.1:8080", "x");
  ASSERT_TRUE(bare.ok());
  EXPECT_EQ(bare->port, 8080);
  EXPECT_EQ(ParseProxyUrl("http://[fd00::1]", "x")->host, "fd00::1");
  EXPECT_EQ(ParseProxyUrl("http://p", "x")->port, 80);
  EXPECT_THAT(ParseProxyUrl("https://p:443", "x").status().message(),
              HasSubstr("only http:// proxies"));
  EXPECT_THAT(ParseProxyUrl("socks5://p:1080", "x").status().message(),
              HasSubstr("only http:// proxies"));
  EXPECT_FALSE(ParseProxyUrl("http://p:0", "x").ok());
  EXPECT_FALSE(ParseProxyUrl("http://p/path", "x").ok());
}

TEST(ProxyUrlTest, NoProxyEntries) {
  const std::string np = " .corp.example, svc ,10.96.0.0/12,192.168.1.5, api.x:6443,[fd00::9]";
  EXPECT_TRUE(NoProxyMatches(np, "api.corp.example", 443));
  EXPECT_TRUE(NoProxyMatches(np, "corp.example", 443));
  EXPECT_TRUE(NoProxyMatches(np, "kubernetes.default.svc", 443));
  EXPECT_FALSE(NoProxyMatches(np, "notcorp.example", 443));
  EXPECT_TRUE(NoProxyMatches(np, "10.96.0.1", 443));
  EXPECT_FALSE(NoProxyMatches(np, "10.112.0.1", 443));
  EXPECT_TRUE(NoProxyMatches(np, "192.168.1.5", 443));
  EXPECT_TRUE(NoProxyMatches(np, "API.X", 6443));
  EXPECT_FALSE(NoProxyMatches(np, "api.x", 443)) << "another port";
  EXPECT_TRUE(NoProxyMatches(np, "fd00::9", 443));
  EXPECT_TRUE(NoProxyMatches("*", "anything", 1));
  EXPECT_FALSE(NoProxyMatches("", "anything", 1));
}

std::map<std::string, std::string> g_env;
const char* FakeEnv(const char* name) {
  auto it = g_env.find(name);
  return it == g_env.end() ? nullptr : it->second.c_str();
}

TEST(ProxyUrlTest, TheEnvironmentsProxyAsGoChoosesIt) {
  g_env = {{"https_proxy", "http://p:3128"}, {"NO_PROXY", "10.0.0.0/8"}};
  auto p = ProxyFromEnvironment(FakeEnv, "api.example", 443);
  ASSERT_TRUE(p.ok());
  ASSERT_TRUE(p->has_value()) << "the lower-case name when the upper-case one is unset";
  EXPECT_EQ((*p)->host, "p");
  EXPECT_FALSE(ProxyFromEnvironment(FakeEnv, "10.1.2.3", 443)->has_value());
  EXPECT_FALSE(ProxyFromEnvironment(FakeEnv, "127.0.0.1", 443)->has_value()) << "loopback";
  EXPECT_FALSE(ProxyFromEnvironment(FakeEnv, "localhost", 443)->has_value());
  EXPECT_FALSE(ProxyFromEnvironment(FakeEnv, "::1", 443)->has_value());
  g_env = {{"HTTPS_PROXY", "socks5://p"}};
  EXPECT_THAT(ProxyFromEnvironment(FakeEnv, "api.example", 443).status().message(),
              HasSubstr("HTTPS_PROXY"));
  g_env = {};
  EXPECT_FALSE(ProxyFromEnvironment(FakeEnv, "api.example", 443)->has_value());
}

class KubeProxyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto s = fake::FakeApiServer::Start(&testing::SharedPki());
    ASSERT_TRUE(s.ok());
    server_ = std::move(*s);
    auto p = fake::FakeConnectProxy::Start();
    ASSERT_TRUE(p.ok());
    proxy_ = std::move(*p);
  }
  // A kubeconfig naming the fake API server and the proxy.
  Result<ClusterConfig> Config(const std::string& proxy_url) {
    const std::string path = dir_.path() + "/kubeconfig";
    testing::WriteText(
        path,
        "apiVersion: v1\nkind: Config\ncurrent-context: t\nclusters:\n"
        "- name: f\n  cluster:\n    server: " +
            server_->url() + "\n    proxy-url: " + proxy_url +
            "\n    certificate-authority-data: " + EncodeBase64(testing::SharedPki().ca_pem()) +
            "\nusers:\n- name: u\n  user:\n    token: test-token\n"
            "contexts:\n- name: t\n  context: {cluster: f, user: u}\n");
    return LoadClusterConfig(path, "");
  }
  std::unique_ptr<RestClient> Client(const ClusterConfig& c) {
    RestOptions o;
    o.qps = 0;
    auto client = RestClient::Create(c, o);
    EXPECT_TRUE(client.ok());
    return client.ok() ? std::move(*client) : nullptr;
  }

  TempDir dir_{"kube-proxy-"};
  std::unique_ptr<fake::FakeApiServer> server_;
  std::unique_ptr<fake::FakeConnectProxy> proxy_;
};

TEST_F(KubeProxyTest, RequestsAndListsGoThroughTheTunnel) {
  auto config = Config("http://ops:secret@127.0.0.1:" + std::to_string(proxy_->port()));
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  ASSERT_TRUE(config->proxy.has_value()) << "the kubeconfig's proxy-url, loopback or not";
  auto client = Client(*config);
  server_->Seed("/api/v1/namespaces/ml/configmaps", {{"metadata", {{"name", "a"}}}});
  Result<Response> r = client->Get("/api/v1/namespaces/ml/configmaps/a");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  Result<ListResult> list = ListAll(*client, "/api/v1/namespaces/ml/configmaps");
  ASSERT_TRUE(list.ok()) << list.status().ToString();
  EXPECT_EQ(list->items.size(), 1u);
  const std::string target = "127.0.0.1:" + std::to_string(server_->port());
  ASSERT_GE(proxy_->targets().size(), 2u);
  for (const std::string& t : proxy_->targets()) EXPECT_EQ(t, target);
  EXPECT_EQ(proxy_->authorizations()[0], "Basic b3BzOnNlY3JldA==");
}

TEST_F(KubeProxyTest, AProxysRefusalIsNamed) {
  auto config = Config("http://127.0.0.1:" + std::to_string(proxy_->port()));
  ASSERT_TRUE(config.ok());
  proxy_->Refuse();
  Status st = Client(*config)->Get("/api/v1/namespaces/ml/configmaps").status();
  EXPECT_EQ(st.code(), StatusCode::kUnavailable);
  EXPECT_THAT(st.message(), HasSubstr("through proxy http://127.0.0.1:"));
  EXPECT_THAT(st.message(), HasSubstr("the proxy answered 403 Forbidden"));
  EXPECT_THAT(proxy_->authorizations(), ElementsAre("")) << "no user info, no header";
}

TEST_F(KubeProxyTest, AnUnsupportedProxyUrlIsRefusedByItsField) {
  auto config = Config("socks5://127.0.0.1:1080");
  ASSERT_FALSE(config.ok());
  EXPECT_THAT(config.status().message(), HasSubstr("clusters[0] \"f\" cluster.proxy-url"));
}

}  // namespace
}  // namespace hcashare::kube
