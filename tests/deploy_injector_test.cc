// The network resources injector's deployment: deploy/k8s/injector (with cert-manager) and
// its webhook/ (without), the Helm chart's injector.* values, and
// scripts/injector-certs.sh. Every rendering holds the injector's rules
// (tests/deploy_injector_rules.h), the chart with injector.enabled renders the kustomize
// objects, each certificate mode gives the API server a CA that verifies the serving
// certificate, and the script's certificate is for the Service's names, for a server only,
// signed by the CA it puts in the caBundle. kustomize checks run when a kubectl with
// kustomize v4+ is on PATH, chart checks when the renderer was built (as in
// tests/deploy_overlays_test.cc).
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/temp_dir.h"
#include "tests/deploy_injector_rules.h"
#include "tests/deploy_support.h"
#include "tests/test_util.h"

namespace hcashare::deploy {
namespace {

using hcashare::testing::ReadTextFile;
using ::testing::HasSubstr;

const std::string kInjector = "deploy/k8s/injector";
const json kEnabled = json::parse(R"({"injector": {"enabled": true}})");

// The objects of a JSON object merged into the chart's injector values.
json InjectorValues(const json& injector) {
  json v = kEnabled;
  v["injector"].update(injector);
  return v;
}

// The rendering error for these values ("" when they render).
std::string RenderError(const json& overrides) {
  try {
    RenderHelm(overrides);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

// Kinds of `objs`, sorted, for comparing sets of objects.
std::multiset<std::string> Kinds(const std::vector<json>& objs) {
  std::multiset<std::string> out;
  for (const auto& o : objs) out.insert(o.value("kind", ""));
  return out;
}

// Runs openssl with `args`; its output, or a failure naming the command.
RunResult OpenSsl(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {"openssl"};
  argv.insert(argv.end(), args.begin(), args.end());
  return RunProcess(argv);
}

std::string Base64Decode(const std::string& text) {
  const RunResult r = RunProcess({"base64", "-d"}, text);
  EXPECT_EQ(r.code, 0) << r.err;
  return r.out;
}

// Checks that `crt` (PEM) is a server certificate for `names`, signed by `ca` (PEM).
void ExpectServerCertificate(const std::string& crt, const std::string& ca,
                             const std::vector<std::string>& names) {
  TempDir tmp("deploy-injector-cert-");
  std::ofstream(tmp.path() + "/tls.crt") << crt;
  std::ofstream(tmp.path() + "/ca.crt") << ca;
  const RunResult verify = OpenSsl({"verify", "-purpose", "sslserver", "-CAfile",
                                    tmp.path() + "/ca.crt", tmp.path() + "/tls.crt"});
  EXPECT_EQ(verify.code, 0) << verify.out << verify.err;
  const RunResult ext = OpenSsl({"x509", "-in", tmp.path() + "/tls.crt", "-noout", "-ext",
                                 "subjectAltName,extendedKeyUsage,basicConstraints"});
  ASSERT_EQ(ext.code, 0) << ext.err;
  for (const auto& n : names) EXPECT_NE(ext.out.find("DNS:" + n), std::string::npos) << ext.out;
  EXPECT_NE(ext.out.find("TLS Web Server Authentication"), std::string::npos) << ext.out;
  EXPECT_EQ(ext.out.find("CA:TRUE"), std::string::npos) << ext.out;
}

// ---------------------------------------------------------------------------------------
// kustomize

TEST(DeployInjector, WebhookSourcesHoldTheRules) {
  const auto objs = LoadKustomizationSources(Src(kInjector + "/webhook"));
  InjectorExpect e;
  e.ca = "none";
  EXPECT_EQ(CheckInjector(objs, e), std::vector<std::string>{});
  EXPECT_EQ(InjectorObjects(objs).size(), objs.size());  // all labelled as the injector's
}

TEST(DeployInjector, KustomizeRendersTheWebhookAndItsCertificate) {
  const auto objs = Kustomize(Src(kInjector));
  SKIP_WITHOUT_KUSTOMIZE(objs);
  EXPECT_EQ(CheckInjector(*objs, InjectorExpect{}), std::vector<std::string>{});
  EXPECT_EQ(Kinds(*objs), (std::multiset<std::string>{
                              "Certificate", "Certificate", "ClusterRole", "ClusterRoleBinding",
                              "Deployment", "Issuer", "Issuer", "MutatingWebhookConfiguration",
                              "PodDisruptionBudget", "Service", "ServiceAccount"}));
  EXPECT_EQ(InjectorObjects(*objs).size(), objs->size());
  // webhook/ alone is the same but cert-manager's objects and annotation.
  const auto webhook = Kustomize(Src(kInjector + "/webhook"));
  ASSERT_TRUE(webhook);
  EXPECT_EQ(ByKey(*webhook), ByKey(LoadKustomizationSources(Src(kInjector + "/webhook"))));
  std::map<std::string, json> expected;
  for (json o : *objs) {
    if (o.value("apiVersion", "").rfind("cert-manager.io/", 0) == 0) continue;
    if (o.value("kind", "") == "MutatingWebhookConfiguration") {
      o["metadata"].erase("annotations");
    }
    expected[Key(o)] = o;
  }
  EXPECT_EQ(ByKey(*webhook), expected);
  // Independent of the device plugin: applying it does not touch the base's objects.
  for (const auto& [key, o] : ByKey(BaseObjects())) EXPECT_EQ(ByKey(*objs).count(key), 0u) << key;
}

// The injector's pods are not the DaemonSet's: its selector, which the Service and
// ServiceMonitor of the chart share, must not match them.
TEST(DeployInjector, PodsAreNotSelectedByTheDaemonSet) {
  const auto objs = LoadKustomizationSources(Src(kInjector + "/webhook"));
  const auto base = BaseObjects();
  const json* deploy = Find(objs, "Deployment");
  const json* ds = Find(base, "DaemonSet");
  ASSERT_TRUE(deploy && ds);
  const json pod_labels = (*deploy)["spec"]["template"]["metadata"]["labels"];
  bool all = true;
  for (const auto& [k, v] : (*ds)["spec"]["selector"]["matchLabels"].items()) {
    all = all && pod_labels.value(k, json()) == v;
  }
  EXPECT_FALSE(all) << pod_labels;
}

// ---------------------------------------------------------------------------------------
// Helm

TEST(DeployInjectorHelm, OffByDefault) {
  SKIP_WITHOUT_HELM();
  EXPECT_EQ(InjectorObjects(RenderHelm()), std::vector<json>{});
  EXPECT_EQ(LoadYamlFile(Src("deploy/helm/hcashare/values.yaml")).at(0)["injector"]["enabled"],
            false);
}

TEST(DeployInjectorHelm, EnabledRendersTheKustomizeObjects) {
  SKIP_WITHOUT_HELM();
  const auto kustomized = Kustomize(Src(kInjector));
  SKIP_WITHOUT_KUSTOMIZE(kustomized);
  std::vector<json> expected_objs = BaseObjects();
  expected_objs.insert(expected_objs.end(), kustomized->begin(), kustomized->end());
  const auto expected = Comparable(expected_objs);
  const auto helm = RenderHelm(kEnabled);
  EXPECT_EQ(CheckInjector(helm, InjectorExpect{}), std::vector<std::string>{});
  const auto got = Comparable(helm);
  for (const auto& [key, object] : expected) {
    ASSERT_TRUE(got.count(key)) << key;
    EXPECT_EQ(got.at(key), object) << key << "\ndiff: " << json::diff(object, got.at(key)).dump(2);
  }
  EXPECT_EQ(got.size(), expected.size());
}

// Issue 34, part 3: client authentication and a NetworkPolicy, each optional, the same in
// the chart and in kustomize (deploy/k8s/injector/components, set up as a user's overlay
// would: tests/data/injector-components).
TEST(DeployInjectorHelm, ClientCaAndNetworkPolicyAreTheKustomizeComponents) {
  SKIP_WITHOUT_HELM();
  const auto kustomized = Kustomize(Src("tests/data/injector-components"));
  SKIP_WITHOUT_KUSTOMIZE(kustomized);
  std::vector<json> expected_objs = BaseObjects();
  expected_objs.insert(expected_objs.end(), kustomized->begin(), kustomized->end());
  const auto expected = Comparable(expected_objs);
  const json values = InjectorValues(json::parse(R"({
      "clientCA": {"secretName": "hcashare-injector-client-ca"},
      "networkPolicy": {"enabled": true, "apiServerCIDRs": ["10.0.0.10/32"]}})"));
  const auto helm = RenderHelm(values);
  const auto got = Comparable(helm);
  for (const auto& [key, object] : expected) {
    ASSERT_TRUE(got.count(key)) << key;
    EXPECT_EQ(got.at(key), object) << key << "\ndiff: " << json::diff(object, got.at(key)).dump(2);
  }
  EXPECT_EQ(got.size(), expected.size());
  // The webhook serves reviews to the CA's clients, probes on 8444 to anyone.
  const json* deploy = Find(helm, "Deployment", "hcashare-injector");
  ASSERT_NE(deploy, nullptr);
  const json c = PodSpec(*deploy)["containers"][0];
  const auto args = ArgMap(c["args"]);
  EXPECT_EQ(args.at("--client-ca-file"), "/etc/hcashare-injector/client-ca/ca.crt");
  EXPECT_EQ(args.at("--probe-address"), ":8444");
  EXPECT_EQ(c["readinessProbe"]["httpGet"]["port"], "probes");
  // Only the API server reaches 8443; scrapers given in metricsFrom reach 8444.
  const json* np = Find(helm, "NetworkPolicy", "hcashare-injector");
  ASSERT_NE(np, nullptr);
  EXPECT_EQ((*np)["spec"]["ingress"].size(), 1u);
  json with_metrics = values;
  with_metrics["injector"]["networkPolicy"]["metricsFrom"] =
      json::parse(R"([{"namespaceSelector": {"matchLabels": {"name": "monitoring"}}}])");
  const auto scraped = RenderHelm(with_metrics);
  const json* np2 = Find(scraped, "NetworkPolicy", "hcashare-injector");
  ASSERT_NE(np2, nullptr);
  ASSERT_EQ((*np2)["spec"]["ingress"].size(), 2u);
  EXPECT_EQ((*np2)["spec"]["ingress"][1]["ports"][0]["port"], 8444);
  // Enabled without the API server's addresses: a render error naming the value, never a
  // policy that admits nobody (every pod naming a network would be refused).
  EXPECT_THAT(RenderError(InjectorValues(json::parse(R"({"networkPolicy": {"enabled": true}})"))),
              HasSubstr("injector.networkPolicy.apiServerCIDRs: required"));
  // The component's placeholder is no CIDR: an overlay that forgets it fails to apply the
  // policy rather than cut the API server off.
  const json placeholder =
      LoadYamlFile(Src("deploy/k8s/injector/components/network-policy/networkpolicy.yaml")).at(0);
  EXPECT_EQ(placeholder["spec"]["ingress"][0]["from"][0]["ipBlock"]["cidr"],
            "SET-THE-API-SERVER-ADDRESSES");
}

TEST(DeployInjectorHelm, ValuesDoWhatTheySay) {
  SKIP_WITHOUT_HELM();
  RenderOptions opts;
  opts.release_name = "rdma";
  opts.release_namespace = "rdma-system";
  opts.value_overrides = InjectorValues(json::parse(R"({"replicas": 3, "failurePolicy": "Ignore",
      "reinvocationPolicy": "Never", "timeoutSeconds": 2, "missingNetwork": "warn",
      "downwardApiVolume": true, "logLevel": "debug", "priorityClassName": ""})"));
  opts.value_overrides["image"] = {{"tag", "9.9.9"}};
  std::vector<json> objs;
  for (const auto& [file, text] : RenderChart(Src("deploy/helm/hcashare"), opts)) {
    for (auto& o : ParseYamlDocuments(text)) objs.push_back(o);
  }
  InjectorExpect e;
  e.name = "rdma-injector";
  e.namespace_ = "rdma-system";
  e.secret = "rdma-injector-tls";
  e.failure_policy = "Ignore";
  e.replicas = 3;
  e.image = "registry.example.com/hcashare/hcashare:9.9.9";
  EXPECT_EQ(CheckInjector(objs, e), std::vector<std::string>{});
  const json* mwc = Find(objs, "MutatingWebhookConfiguration");
  ASSERT_NE(mwc, nullptr);
  const json h = (*mwc)["webhooks"][0];
  EXPECT_EQ(h["timeoutSeconds"], 2);
  EXPECT_EQ(h["reinvocationPolicy"], "Never");
  EXPECT_EQ(h["namespaceSelector"]["matchExpressions"][0]["values"],
            json::parse(R"(["kube-system", "kube-public", "kube-node-lease", "rdma-system"])"));
  const json* deploy = Find(objs, "Deployment", "rdma-injector");
  ASSERT_NE(deploy, nullptr);
  const json spec = PodSpec(*deploy);
  EXPECT_FALSE(spec.contains("priorityClassName"));
  const auto args = ArgMap(spec["containers"][0]["args"]);
  EXPECT_EQ(args.at("--missing-network"), "warn");
  EXPECT_EQ(args.count("--downward-api-volume"), 1u);
  EXPECT_EQ(args.at("--log-level"), "debug");
  const json* cert = Find(objs, "Certificate", "rdma-injector");
  ASSERT_NE(cert, nullptr);
  EXPECT_EQ((*cert)["spec"]["dnsNames"][0], "rdma-injector.rdma-system.svc");

  // One replica: no PodDisruptionBudget, which would block every drain.
  const auto one = RenderHelm(InjectorValues(json::parse(R"({"replicas": 1})")));
  InjectorExpect single;
  single.replicas = 1;
  EXPECT_EQ(CheckInjector(one, single), std::vector<std::string>{});
}

TEST(DeployInjectorHelm, SelfSignedCertificateVerifies) {
  SKIP_WITHOUT_HELM();
  const auto objs = RenderHelm(InjectorValues(json::parse(R"({"certs": {"mode": "selfSigned"}})")));
  InjectorExpect e;
  e.ca = "bundle";
  EXPECT_EQ(CheckInjector(objs, e), std::vector<std::string>{});
  for (const auto& o : objs) EXPECT_NE(o.value("kind", ""), "Certificate");
  const json* secret = Find(objs, "Secret", "hcashare-injector-tls");
  const json* mwc = Find(objs, "MutatingWebhookConfiguration");
  ASSERT_TRUE(secret && mwc);
  EXPECT_EQ((*secret)["type"], "kubernetes.io/tls");
  const json data = (*secret)["data"];
  EXPECT_EQ((*mwc)["webhooks"][0]["clientConfig"]["caBundle"], data["ca.crt"]);
  ExpectServerCertificate(Base64Decode(data["tls.crt"]), Base64Decode(data["ca.crt"]),
                          {"hcashare-injector.kube-system.svc"});
  const std::string key = Base64Decode(data["tls.key"]);
  EXPECT_NE(key.find("PRIVATE KEY-----"), std::string::npos);
  // A second rendering makes another CA (no cluster to look the Secret up in).
  const auto again =
      RenderHelm(InjectorValues(json::parse(R"({"certs": {"mode": "selfSigned"}})")));
  ASSERT_TRUE(Find(again, "Secret"));
  EXPECT_NE((*Find(again, "Secret"))["data"]["ca.crt"], data["ca.crt"]);
}

TEST(DeployInjectorHelm, ExistingSecretAndItsCaBundle) {
  SKIP_WITHOUT_HELM();
  const auto objs = RenderHelm(InjectorValues(json::parse(
      R"({"certs": {"mode": "secret", "secretName": "my-tls", "caBundle": "TUlJQg=="}})")));
  InjectorExpect e;
  e.ca = "bundle";
  e.secret = "my-tls";
  EXPECT_EQ(CheckInjector(objs, e), std::vector<std::string>{});
  EXPECT_EQ(Find(objs, "Secret"), nullptr);  // yours, not the chart's
  EXPECT_EQ(
      (*Find(objs, "MutatingWebhookConfiguration"))["webhooks"][0]["clientConfig"]["caBundle"],
      "TUlJQg==");
  // Either missing is an error that names it.
  EXPECT_NE(RenderError(InjectorValues(json::parse(R"({"certs": {"mode": "secret",
                "secretName": "my-tls"}})")))
                .find("injector.certs.caBundle"),
            std::string::npos);
  EXPECT_NE(RenderError(InjectorValues(json::parse(R"({"certs": {"mode": "secret",
                "caBundle": "TUlJQg=="}})")))
                .find("injector.certs.secretName"),
            std::string::npos);
}

TEST(DeployInjectorHelm, MistypedValuesFailTheRender) {
  SKIP_WITHOUT_HELM();
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"({"failurePolicy": "Sometimes"})", "injector.failurePolicy: \"Sometimes\" is not one of"},
      {R"({"timeoutSeconds": 11})", "injector.timeoutSeconds: 11 is more than 10"},
      {R"({"replicas": 0})", "injector.replicas: 0 is less than 1"},
      {R"({"missingNetwork": "ignore"})", "injector.missingNetwork: \"ignore\" is not one of"},
      {R"({"certs": {"mode": "vault"}})", "injector.certs.mode: \"vault\" is not one of"},
      {R"({"certs": {"caBundle": "-----BEGIN"}})", "injector.certs.caBundle: \"-----BEGIN\" does"},
      {R"({"certs": {"secretName": "My_TLS"}})", "injector.certs.secretName: \"My_TLS\" does"},
      {R"({"downwardAPIVolume": true})", "injector.downwardAPIVolume: unknown key"},
      {R"({"enabled": "yes"})", "injector.enabled: expected boolean"},
  };
  for (const auto& [values, expected] : cases) {
    SCOPED_TRACE(values);
    const std::string error = RenderError(InjectorValues(json::parse(values)));
    EXPECT_NE(error.find("\n- " + expected), std::string::npos) << error;
  }
}

TEST(DeployInjectorHelm, NotesNameTheInjector) {
  SKIP_WITHOUT_HELM();
  RenderOptions opts;
  opts.notes = true;
  EXPECT_EQ(
      RenderChart(Src("deploy/helm/hcashare"), opts).at("NOTES.txt").find("resources injector"),
      std::string::npos);
  for (const char* mode : {"certManager", "selfSigned", "secret"}) {
    SCOPED_TRACE(mode);
    opts.value_overrides = InjectorValues(
        {{"certs", {{"mode", mode}, {"secretName", "my-tls"}, {"caBundle", "TUlJQg=="}}}});
    const std::string notes = RenderChart(Src("deploy/helm/hcashare"), opts).at("NOTES.txt");
    for (const char* want : {"Deployment hcashare-injector (2 replicas",
                             "MutatingWebhookConfiguration hcashare-injector",
                             "(failurePolicy Fail)", "Kubernetes 1.28 or later",
                             "-l app.kubernetes.io/name=hcashare-injector", "docs/injector.md"}) {
      EXPECT_NE(notes.find(want), std::string::npos) << want << "\n" << notes;
    }
    const std::string secret = std::string(mode) == "secret" ? "my-tls" : "hcashare-injector-tls";
    EXPECT_NE(notes.find("Secret " + secret), std::string::npos) << notes;
    EXPECT_EQ(notes.find("{{"), std::string::npos);
  }
}

// Every flag the manifests give hcashare-webhook is one its --help lists. Skipped until the
// binary is built (it is written apart from these manifests).
TEST(DeployInjector, WebhookKnowsEveryFlag) {
  std::vector<std::vector<json>> sets = {LoadKustomizationSources(Src(kInjector + "/webhook"))};
  if (HelmAvailable()) {
    sets.push_back(RenderHelm(InjectorValues(json::parse(
        R"({"downwardApiVolume": true, "logLevel": "debug", "missingNetwork": "warn"})"))));
  }
  std::set<std::string> flags;
  for (const auto& objs : sets) {
    const json* deploy = Find(objs, "Deployment", "hcashare-injector");
    ASSERT_NE(deploy, nullptr);
    for (const auto& [flag, value] : ArgMap(PodSpec(*deploy)["containers"][0]["args"])) {
      flags.insert(flag);
    }
  }
  EXPECT_EQ(flags,
            (std::set<std::string>{"--tls-cert-file", "--tls-private-key-file", "--listen-address",
                                   "--missing-network", "--downward-api-volume", "--log-level"}));
  if (access(Bin("hcashare-webhook").c_str(), X_OK) != 0) {
    GTEST_SKIP() << Bin("hcashare-webhook") << " is not built";
  }
  const RunResult help = RunProcess({Bin("hcashare-webhook"), "--help"});
  EXPECT_EQ(help.code, 0) << help.err;
  for (const auto& flag : flags) {
    EXPECT_NE(help.out.find(flag), std::string::npos) << flag << " is not in --help:\n" << help.out;
  }
}

// ---------------------------------------------------------------------------------------
// The checker catches each broken rule.

TEST(DeployInjector, CheckerCatchesBrokenObjects) {
  const auto good = LoadKustomizationSources(Src(kInjector + "/webhook"));
  InjectorExpect e;
  e.ca = "none";
  ASSERT_EQ(CheckInjector(good, e), std::vector<std::string>{});
  // Each case: the kind of the object to patch, a JSON patch, and the failure expected.
  // "C/" is the container, "S/" the pod spec, "W/" the webhook.
  const std::vector<std::tuple<std::string, std::string, std::string>> breaks = {
      {"ClusterRole", R"([{"op": "add", "path": "/rules/0/verbs/-", "value": "create"}])",
       "verbs are not exactly get, list, watch"},
      {"ClusterRole", R"([{"op": "add", "path": "/rules/-", "value": {"apiGroups": [""],
        "resources": ["secrets"], "verbs": ["get"]}}])",
       "rules, not one"},
      {"ClusterRole", R"([{"op": "replace", "path": "/rules/0/resources", "value": ["*"]}])",
       "resources is not [network-attachment-definitions]"},
      {"ClusterRoleBinding",
       R"([{"op": "replace", "path": "/subjects/0/name", "value": "default"}])",
       "the subject is not ServiceAccount"},
      {"Deployment", R"([{"op": "replace", "path": "/spec/replicas", "value": 1}])",
       "replicas is not 2"},
      {"Deployment", R"([{"op": "remove", "path": "S/topologySpreadConstraints"}])",
       "not spread over nodes"},
      {"Deployment", R"([{"op": "remove", "path": "S/securityContext/runAsNonRoot"}])",
       "runAsNonRoot"},
      {"Deployment", R"([{"op": "add", "path": "C/securityContext/runAsUser", "value": 0}])",
       "runs as root"},
      {"Deployment",
       R"([{"op": "replace", "path": "C/securityContext/readOnlyRootFilesystem", "value": false}])",
       "readOnlyRootFilesystem"},
      {"Deployment",
       R"([{"op": "add", "path": "C/securityContext/capabilities/add", "value": ["NET_BIND_SERVICE"]}])",
       "capabilities added"},
      {"Deployment",
       R"([{"op": "replace", "path": "S/securityContext/seccompProfile/type", "value": "Unconfined"}])",
       "seccompProfile"},
      {"Deployment", R"([{"op": "add", "path": "S/automountServiceAccountToken", "value": false}])",
       "no service account token"},
      {"Deployment", R"([{"op": "remove", "path": "C/readinessProbe/httpGet/scheme"}])",
       "readinessProbe is not HTTPS"},
      {"Deployment",
       R"([{"op": "replace", "path": "C/livenessProbe/httpGet/port", "value": 9443}])",
       "livenessProbe is not on the listen port"},
      {"Deployment",
       R"([{"op": "replace", "path": "C/args/0", "value": "--tls-cert-file=/tmp/tls.crt"}])",
       "--tls-cert-file is not"},
      {"Deployment", R"([{"op": "add", "path": "C/volumeMounts/0/subPath", "value": "tls.crt"}])",
       "subPath"},
      {"Deployment", R"([{"op": "replace", "path": "C/resources/limits/memory", "value": "32Mi"}])",
       "memory limit below 64Mi"},
      {"Deployment",
       R"([{"op": "replace", "path": "/spec/strategy/rollingUpdate/maxUnavailable", "value": 1}])",
       "rolling update"},
      {"PodDisruptionBudget", R"([{"op": "replace", "path": "/spec/minAvailable", "value": 0}])",
       "minAvailable is not 1"},
      {"Service", R"([{"op": "replace", "path": "/spec/ports/0/targetPort", "value": 443}])",
       "does not lead to the listen port"},
      {"MutatingWebhookConfiguration",
       R"([{"op": "add", "path": "W/admissionReviewVersions/-", "value": "v1beta1"}])",
       "admissionReviewVersions is not [v1]"},
      {"MutatingWebhookConfiguration",
       R"([{"op": "replace", "path": "W/sideEffects", "value": "Some"}])", "sideEffects"},
      {"MutatingWebhookConfiguration",
       R"([{"op": "replace", "path": "W/failurePolicy", "value": "Ignore"}])",
       "failurePolicy is not Fail"},
      {"MutatingWebhookConfiguration", R"([{"op": "remove", "path": "W/timeoutSeconds"}])",
       "timeoutSeconds"},
      {"MutatingWebhookConfiguration",
       R"([{"op": "replace", "path": "W/timeoutSeconds", "value": 30}])", "timeoutSeconds"},
      {"MutatingWebhookConfiguration",
       R"([{"op": "add", "path": "W/rules/0/operations/-", "value": "UPDATE"}])",
       "CREATE of v1 pods only"},
      {"MutatingWebhookConfiguration", R"([{"op": "remove", "path": "W/matchConditions"}])",
       "no matchCondition"},
      {"MutatingWebhookConfiguration",
       R"([{"op": "replace", "path": "W/matchConditions/0/expression",
        "value": "'k8s.v1.cni.cncf.io/networks' in object.metadata.annotations"}])",
       "no matchCondition"},
      {"MutatingWebhookConfiguration",
       R"([{"op": "remove", "path": "W/namespaceSelector/matchExpressions/0/values/0"}])",
       "does not exclude kube-system"},
      {"MutatingWebhookConfiguration",
       R"([{"op": "replace", "path": "W/clientConfig/service/path", "value": "/"}])",
       "clientConfig"},
      {"MutatingWebhookConfiguration",
       R"([{"op": "add", "path": "W/clientConfig/caBundle", "value": "QQ=="}])", "a caBundle"},
  };
  for (const auto& [kind, patch, expected] : breaks) {
    SCOPED_TRACE(patch);
    std::string text = patch;
    for (const auto& [from, to] : std::vector<std::pair<std::string, std::string>>{
             {"\"C/", "\"/spec/template/spec/containers/0/"},
             {"\"S/", "\"/spec/template/spec/"},
             {"\"W/", "\"/webhooks/0/"}}) {
      for (size_t at; (at = text.find(from)) != std::string::npos;)
        text.replace(at, from.size(), to);
    }
    std::vector<json> objs = good;
    for (auto& o : objs) {
      if (o.value("kind", "") == kind) o = o.patch(json::parse(text));
    }
    const std::string problems = Join(CheckInjector(objs, e));
    EXPECT_NE(problems.find(expected), std::string::npos) << problems;
  }
}

}  // namespace
}  // namespace hcashare::deploy
