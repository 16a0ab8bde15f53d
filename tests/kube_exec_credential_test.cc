// kube/exec_credential.h: a kubeconfig user's exec credential plugin, as client-go runs
// it, against the fake API server: the kubeconfig's fields (and every refusal, by its
// path), the plugin's environment (KUBERNETES_EXEC_INFO, the cluster when asked), the
// token cached until its expiry and fetched again after a 401, and plugins that fail.
#include "kube/exec_credential.h"

#include <sys/stat.h>

#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/temp_dir.h"
#include "kube/config.h"
#include "kube/pem.h"
#include "kube/rest.h"
#include "kube/status_error.h"
#include "testing/fake_apiserver.h"
#include "tests/kube_test_util.h"
#include "tests/test_util.h"

namespace hcashare::kube {
namespace {

using ::testing::HasSubstr;
using testing::SharedPki;
using testing::WriteText;

constexpr char kConfigMaps[] = "/api/v1/namespaces/ml/configmaps";

TEST(Rfc3339Test, ZonesAndFractions) {
  EXPECT_EQ(*ParseRfc3339("1970-01-01T00:00:10Z"), 10);
  EXPECT_EQ(*ParseRfc3339("1970-01-01T01:00:10+01:00"), 10);
  EXPECT_EQ(*ParseRfc3339("1970-01-01T00:00:10.123456789Z"), 10);
  EXPECT_EQ(*ParseRfc3339("2026-12-06T10:00:00Z"), 1796551200);
  EXPECT_FALSE(ParseRfc3339("2026-12-06 10:00:00").ok());
  EXPECT_FALSE(ParseRfc3339("2026-12-06T10:00:00").ok()) << "no zone";
  EXPECT_FALSE(ParseRfc3339("2026-12-06T10:00:00Zjunk").ok());
}

class ExecCredentialTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto s = fake::FakeApiServer::Start(&SharedPki());
    ASSERT_TRUE(s.ok());
    server_ = std::move(*s);
    // The plugin: counts its runs, records its environment, answers the token in `token`
    // with the expiry in `expiry` ("" for none), or fails as `fail` says.
    plugin_ = dir_.path() + "/plugin";
    std::ofstream(plugin_) << "#!/bin/sh\n"
                              "d="
                           << dir_.path()
                           << "\n"
                              "echo run >> $d/runs\n"
                              "printf '%s' \"$KUBERNETES_EXEC_INFO\" > $d/info\n"
                              "echo \"$EXTRA|$1|$2\" > $d/args\n"
                              "if [ -s $d/fail ]; then cat $d/fail >&2; exit 3; fi\n"
                              "if [ -s $d/answer ]; then cat $d/answer; exit 0; fi\n"
                              "exp=''; [ -s $d/expiry ] && exp=\",\\\"expirationTimestamp\\\":"
                              "\\\"$(cat $d/expiry)\\\"\"\n"
                              "printf '{\"apiVersion\":\"client.authentication.k8s.io/v1\","
                              "\"kind\":\"ExecCredential\",\"status\":{\"token\":\"%s\"%s}}' "
                              "\"$(cat $d/token)\" \"$exp\"\n";
    ::chmod(plugin_.c_str(), 0755);
    WriteText(dir_.path() + "/token", "test-token");
  }

  std::string Kubeconfig(const std::string& exec_yaml) {
    const std::string path = dir_.path() + "/kubeconfig";
    WriteText(path,
              "apiVersion: v1\nkind: Config\ncurrent-context: t\nclusters:\n- name: f\n"
              "  cluster:\n    server: " +
                  server_->url() + "\n    certificate-authority-data: " +
                  EncodeBase64(SharedPki().ca_pem()) + "\nusers:\n- name: u\n  user:\n    exec:\n" +
                  exec_yaml + "contexts:\n- name: t\n  context: {cluster: f, user: u}\n");
    return path;
  }
  std::string PluginYaml(const std::string& extra = "") {
    return "      apiVersion: client.authentication.k8s.io/v1\n      command: " + plugin_ +
           "\n      args: [a1, a2]\n      env: [{name: EXTRA, value: x}]\n"
           "      interactiveMode: IfAvailable\n" +
           extra;
  }
  int Runs() {
    std::ifstream in(dir_.path() + "/runs");
    int n = 0;
    for (std::string line; std::getline(in, line);) ++n;
    return n;
  }
  std::unique_ptr<RestClient> Client(const std::string& kubeconfig) {
    auto config = LoadKubeconfig(kubeconfig);
    EXPECT_TRUE(config.ok()) << config.status().ToString();
    RestOptions o;
    o.qps = 0;
    auto c = RestClient::Create(*config, o);
    EXPECT_TRUE(c.ok());
    return c.ok() ? std::move(*c) : nullptr;
  }

  TempDir dir_{"kube-exec-"};
  std::unique_ptr<fake::FakeApiServer> server_;
  std::string plugin_;
};

TEST_F(ExecCredentialTest, ThePluginsTokenIsUsedAndKeptAndFetchedAgainAfterA401) {
  auto client = Client(Kubeconfig(PluginYaml()));
  ASSERT_TRUE(client);
  EXPECT_EQ(Runs(), 0) << "nothing runs before the first request";
  ASSERT_TRUE(client->Get(kConfigMaps).ok());
  ASSERT_TRUE(client->Get(kConfigMaps).ok());
  EXPECT_EQ(Runs(), 1) << "a token without expiry is kept";
  EXPECT_EQ(server_->Requests().back().authorization, "Bearer test-token");
  EXPECT_EQ(testing::ReadTextFile(dir_.path() + "/args"), "x|a1|a2\n");
  const auto info = nlohmann::json::parse(testing::ReadTextFile(dir_.path() + "/info"));
  EXPECT_EQ(info["apiVersion"], "client.authentication.k8s.io/v1");
  EXPECT_EQ(info["kind"], "ExecCredential");
  EXPECT_EQ(info["spec"]["interactive"], false);
  EXPECT_FALSE(info["spec"].contains("cluster"));

  // The server stops accepting it: a 401, the plugin runs again, the request is repeated.
  server_->SetToken("rotated");
  WriteText(dir_.path() + "/token", "rotated");
  Result<Response> after = client->Get(kConfigMaps);
  EXPECT_TRUE(after.ok()) << after.status().ToString();
  EXPECT_EQ(Runs(), 2);
  EXPECT_EQ(server_->Requests().back().authorization, "Bearer rotated");
}

TEST_F(ExecCredentialTest, AnExpiringTokenIsRenewedAndTheClusterIsGivenWhenAsked) {
  WriteText(dir_.path() + "/expiry", "2000-01-01T00:00:00Z");  // already past
  auto client = Client(Kubeconfig(PluginYaml("      provideClusterInfo: true\n")));
  ASSERT_TRUE(client->Get(kConfigMaps).ok());
  ASSERT_TRUE(client->Get(kConfigMaps).ok());
  EXPECT_EQ(Runs(), 2) << "an expired token is never reused";
  WriteText(dir_.path() + "/expiry", "2999-01-01T00:00:00Z");
  ASSERT_TRUE(client->Get(kConfigMaps).ok());
  ASSERT_TRUE(client->Get(kConfigMaps).ok());
  EXPECT_EQ(Runs(), 3);
  const auto info = nlohmann::json::parse(testing::ReadTextFile(dir_.path() + "/info"));
  EXPECT_EQ(info["spec"]["cluster"]["server"], server_->url());
  EXPECT_EQ(*DecodeBase64(info["spec"]["cluster"]["certificate-authority-data"].get<std::string>()),
            SharedPki().ca_pem());
}

TEST_F(ExecCredentialTest, PluginFailuresAreNamed) {
  auto client = Client(Kubeconfig(PluginYaml()));
  WriteText(dir_.path() + "/fail", "token expired, run aws sso login");
  Status st = client->Get(kConfigMaps).status();
  EXPECT_EQ(st.code(), StatusCode::kUnavailable);
  EXPECT_THAT(st.message(), HasSubstr("exited with 3: token expired, run aws sso login"));
  ::unlink((dir_.path() + "/fail").c_str());
  for (const std::string& answer :
       {std::string("not json"),
        std::string(R"({"apiVersion":"client.authentication.k8s.io/v1beta1",)"
                    R"("kind":"ExecCredential","status":{"token":"t"}})"),
        std::string(R"({"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential",)"
                    R"("status":{"clientCertificateData":"x","clientKeyData":"y"}})"),
        std::string(R"({"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential",)"
                    R"("status":{}})")}) {
    WriteText(dir_.path() + "/answer", answer);
    Status bad = client->Get(kConfigMaps).status();
    EXPECT_EQ(bad.code(), StatusCode::kUnavailable) << answer;
    EXPECT_THAT(bad.message(), HasSubstr("exec credential plugin " + plugin_)) << answer;
  }
  EXPECT_THAT(client->Get(kConfigMaps).status().message(), HasSubstr("no status.token"));
  // A command that is not there: its install hint.
  auto missing = Client(Kubeconfig(
      "      apiVersion: client.authentication.k8s.io/v1beta1\n      command: no-such-plugin\n"
      "      installHint: install it with apt-get install no-such-plugin\n"));
  EXPECT_THAT(missing->Get(kConfigMaps).status().message(),
              HasSubstr("not found in PATH (install it with apt-get install no-such-plugin)"));
}

TEST_F(ExecCredentialTest, KubeconfigRefusalsNameTheirField) {
  auto refusal = [&](const std::string& exec_yaml) {
    auto c = LoadKubeconfig(Kubeconfig(exec_yaml));
    return c.ok() ? std::string("accepted") : c.status().message();
  };
  EXPECT_THAT(refusal("      apiVersion: client.authentication.k8s.io/v1alpha1\n"
                      "      command: x\n"),
              HasSubstr("users[0] \"u\" user.exec.apiVersion"));
  EXPECT_THAT(refusal("      apiVersion: client.authentication.k8s.io/v1\n"),
              HasSubstr("user.exec.command: missing"));
  EXPECT_THAT(refusal("      apiVersion: client.authentication.k8s.io/v1\n      command: x\n"
                      "      interactiveMode: Always\n"),
              HasSubstr("needs a terminal"));
  EXPECT_THAT(refusal("      apiVersion: client.authentication.k8s.io/v1\n      command: x\n"
                      "      env: [{name: A}]\n"),
              HasSubstr("user.exec.env[0]"));
  const std::string both = Kubeconfig(PluginYaml());
  std::string text = testing::ReadTextFile(both);
  text.replace(text.find("    exec:"), 9, "    token: t\n    exec:");
  WriteText(both, text);
  auto c = LoadKubeconfig(both);
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(c.status().message(), HasSubstr("set one of token, tokenFile and exec"));
}

}  // namespace
}  // namespace hcashare::kube
