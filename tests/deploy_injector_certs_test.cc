// scripts/injector-certs.sh, the injector's certificate without cert-manager: in its
// output mode (no cluster) the certificate is for the Service's DNS names, for a TLS
// server only, valid as long as asked, signed by the CA that the caBundle patch carries,
// and the Secret holds exactly these files; with --apply it calls kubectl to apply the
// Secret and patch the webhook configuration (a kubectl stand-in records the calls); bad
// arguments fail naming the argument.
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "common/temp_dir.h"
#include "tests/deploy_support.h"
#include "tests/test_util.h"

namespace hcashare::deploy {
namespace {

using hcashare::testing::ReadTextFile;

const std::string kScript = "scripts/injector-certs.sh";

RunResult Script(const std::vector<std::string>& args,
                 const std::map<std::string, std::string>& env = {}) {
  std::vector<std::string> argv = {"bash", Src(kScript)};
  argv.insert(argv.end(), args.begin(), args.end());
  return RunProcess(argv, "", env);
}

RunResult OpenSsl(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {"openssl"};
  argv.insert(argv.end(), args.begin(), args.end());
  return RunProcess(argv);
}

std::string Base64(const std::string& path) {
  const RunResult r = RunProcess({"base64", "-w0", path});
  EXPECT_EQ(r.code, 0) << r.err;
  return r.out;
}

TEST(DeployInjectorCerts, OutputModeMakesAServerCertificateForTheService) {
  TempDir tmp("deploy-injector-certs-");
  const std::string dir = tmp.path() + "/out";
  const RunResult r =
      Script({"--out-dir", dir, "--namespace", "rdma", "--service", "inj", "--days", "30"});
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("nothing applied"), std::string::npos) << r.out;
  const std::string crt = dir + "/tls.crt", ca = dir + "/ca.crt", key = dir + "/tls.key";

  // Signed by the CA, for a TLS server.
  const RunResult verify = OpenSsl({"verify", "-purpose", "sslserver", "-CAfile", ca, crt});
  EXPECT_EQ(verify.code, 0) << verify.out << verify.err;
  const RunResult ext = OpenSsl({"x509", "-in", crt, "-noout", "-ext",
                                 "subjectAltName,keyUsage,extendedKeyUsage,basicConstraints"});
  ASSERT_EQ(ext.code, 0) << ext.err;
  for (const char* name :
       {"DNS:inj,", "DNS:inj.rdma,", "DNS:inj.rdma.svc,", "DNS:inj.rdma.svc.cluster.local"}) {
    EXPECT_NE(ext.out.find(name), std::string::npos) << name << "\n" << ext.out;
  }
  EXPECT_NE(ext.out.find("Digital Signature"), std::string::npos) << ext.out;
  EXPECT_EQ(ext.out.find("Certificate Sign"), std::string::npos) << ext.out;
  EXPECT_NE(ext.out.find("TLS Web Server Authentication"), std::string::npos) << ext.out;
  EXPECT_EQ(ext.out.find("Client Authentication"), std::string::npos) << ext.out;
  EXPECT_NE(ext.out.find("CA:FALSE"), std::string::npos) << ext.out;
  // The CA can sign and nothing under it can.
  const RunResult ca_ext =
      OpenSsl({"x509", "-in", ca, "-noout", "-ext", "basicConstraints,keyUsage"});
  EXPECT_NE(ca_ext.out.find("CA:TRUE, pathlen:0"), std::string::npos) << ca_ext.out;
  EXPECT_NE(ca_ext.out.find("Certificate Sign"), std::string::npos) << ca_ext.out;
  // Valid for the 30 days asked, not 31; the CA for ten times as long.
  EXPECT_EQ(OpenSsl({"x509", "-in", crt, "-noout", "-checkend", std::to_string(29 * 86400)}).code,
            0);
  EXPECT_NE(OpenSsl({"x509", "-in", crt, "-noout", "-checkend", std::to_string(31 * 86400)}).code,
            0);
  EXPECT_EQ(OpenSsl({"x509", "-in", ca, "-noout", "-checkend", std::to_string(299 * 86400)}).code,
            0);
  // The key is the certificate's, and only its owner may read it.
  const RunResult pub_of_key = OpenSsl({"pkey", "-in", key, "-pubout"});
  const RunResult pub_of_crt = OpenSsl({"x509", "-in", crt, "-noout", "-pubkey"});
  EXPECT_EQ(pub_of_key.out, pub_of_crt.out);
  struct stat st {};
  ASSERT_EQ(stat(key.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 077, 0u);

  // The Secret holds these files; the patch gives the API server this CA.
  const auto secret = LoadYamlFile(dir + "/secret.yaml");
  ASSERT_EQ(secret.size(), 1u);
  EXPECT_EQ(secret[0]["kind"], "Secret");
  EXPECT_EQ(secret[0]["type"], "kubernetes.io/tls");
  EXPECT_EQ(secret[0]["metadata"]["namespace"], "rdma");
  EXPECT_EQ(secret[0]["metadata"]["name"], "hcashare-injector-tls");
  EXPECT_EQ(secret[0]["data"],
            json({{"tls.crt", Base64(crt)}, {"tls.key", Base64(key)}, {"ca.crt", Base64(ca)}}));
  const json patch = json::parse(ReadTextFile(dir + "/webhook-patch.json"));
  EXPECT_EQ(patch, json::array({json{{"op", "add"},
                                     {"path", "/webhooks/0/clientConfig/caBundle"},
                                     {"value", Base64(ca)}}}));
  EXPECT_FALSE(std::filesystem::exists(dir + "/tls.csr"));
}

// A webhook configured by URL with an IP address (clientConfig.url) needs the address in the
// certificate (issue 37): --ip adds IP SANs beside the Service's names.
TEST(DeployInjectorCerts, IpAddressesBecomeIpSans) {
  TempDir tmp("deploy-injector-certs-");
  const std::string dir = tmp.path() + "/out";
  const RunResult r = Script({"--out-dir", dir, "--ip", "10.96.0.42", "--ip", "fd00::42"});
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  const RunResult ext =
      OpenSsl({"x509", "-in", dir + "/tls.crt", "-noout", "-ext", "subjectAltName"});
  ASSERT_EQ(ext.code, 0) << ext.err;
  EXPECT_NE(ext.out.find("IP Address:10.96.0.42"), std::string::npos) << ext.out;
  EXPECT_NE(ext.out.find("IP Address:FD00:0:0:0:0:0:0:42"), std::string::npos) << ext.out;
  EXPECT_NE(ext.out.find("DNS:hcashare-injector.kube-system.svc"), std::string::npos) << ext.out;
  // A TLS client checks the address against the certificate, as the API server does.
  const RunResult ip_ok =
      OpenSsl({"verify", "-CAfile", dir + "/ca.crt", "-verify_ip", "10.96.0.42", dir + "/tls.crt"});
  EXPECT_EQ(ip_ok.code, 0) << ip_ok.out << ip_ok.err;
  const RunResult ip_other =
      OpenSsl({"verify", "-CAfile", dir + "/ca.crt", "-verify_ip", "10.96.0.43", dir + "/tls.crt"});
  EXPECT_NE(ip_other.code, 0) << ip_other.out;
}

// The defaults name what deploy/k8s/injector/webhook deploys.
TEST(DeployInjectorCerts, DefaultsAreTheManifestsNames) {
  TempDir tmp("deploy-injector-certs-");
  const RunResult r = Script({"--out-dir", tmp.path()});
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  const auto objs = LoadKustomizationSources(Src("deploy/k8s/injector/webhook"));
  const json* deploy = Find(objs, "Deployment");
  const json* service = Find(objs, "Service");
  const json* mwc = Find(objs, "MutatingWebhookConfiguration");
  ASSERT_TRUE(deploy && service && mwc);
  const json secret = LoadYamlFile(tmp.path() + "/secret.yaml").at(0);
  EXPECT_EQ(secret["metadata"]["namespace"], (*deploy)["metadata"]["namespace"]);
  EXPECT_EQ(secret["metadata"]["name"], PodSpec(*deploy)["volumes"][0]["secret"]["secretName"]);
  const RunResult ext =
      OpenSsl({"x509", "-in", tmp.path() + "/tls.crt", "-noout", "-ext", "subjectAltName"});
  const std::string dns = "DNS:" + Name(*service) + "." +
                          (*service)["metadata"]["namespace"].get<std::string>() + ".svc,";
  EXPECT_NE(ext.out.find(dns), std::string::npos) << dns << "\n" << ext.out;
  EXPECT_EQ((*mwc)["webhooks"].size(), 1u);  // the patch sets /webhooks/0 only
}

// With --apply: the Secret first, then the caBundle; nothing when the webhook
// configuration is missing.
// Issue 34, part 7: a renewal never leaves the API server without a CA for the webhook's
// certificate: the caBundle is patched first, to the new CA and the CA in use, and only
// then the Secret changes (a kubectl stand-in records the calls and serves the bundle).
TEST(DeployInjectorCerts, ApplyTrustsBothCasBeforeTheSecretChanges) {
  TempDir tmp("deploy-injector-certs-");
  const std::string log = tmp.path() + "/calls";
  const std::string fake = tmp.path() + "/bin";
  std::filesystem::create_directory(fake);
  std::ofstream(fake + "/kubectl") << "#!/bin/sh\necho \"$*\" >> " << log
                                   << "\nif [ \"$1 $2\" = \"get mutatingwebhookconfiguration\" ]; "
                                      "then [ -z \"$FAIL_GET\" ] || exit 1; "
                                      "printf %s \"$CURRENT_BUNDLE\"; fi\n";
  std::filesystem::permissions(fake + "/kubectl", std::filesystem::perms::owner_all);
  const std::string path = fake + ":" + std::getenv("PATH");

  // The CA in use: an earlier run's.
  const std::string first = tmp.path() + "/first";
  ASSERT_EQ(Script({"--out-dir", first}).code, 0);
  const std::string out = tmp.path() + "/out";
  const RunResult r = Script({"--apply", "--out-dir", out},
                             {{"PATH", path}, {"CURRENT_BUNDLE", Base64(first + "/ca.crt")}});
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_EQ(ReadTextFile(log),
            "get mutatingwebhookconfiguration hcashare-injector -o "
            "jsonpath={.webhooks[0].clientConfig.caBundle}\n"
            "patch mutatingwebhookconfiguration hcashare-injector --type=json --patch-file " +
                out + "/webhook-patch.json\napply -f " + out + "/secret.yaml\n");
  // The bundle: the new CA first, then the one in use; both certificates verify against it.
  EXPECT_EQ(ReadTextFile(out + "/ca-bundle.crt"),
            ReadTextFile(out + "/ca.crt") + ReadTextFile(first + "/ca.crt"));
  EXPECT_NE(ReadTextFile(out + "/webhook-patch.json").find(Base64(out + "/ca-bundle.crt")),
            std::string::npos);
  for (const std::string& cert : {first + "/tls.crt", out + "/tls.crt"}) {
    EXPECT_EQ(OpenSsl({"verify", "-CAfile", out + "/ca-bundle.crt", cert}).code, 0) << cert;
  }
  // The Secret carries the new CA alone.
  EXPECT_NE(ReadTextFile(out + "/secret.yaml").find("ca.crt: " + Base64(out + "/ca.crt")),
            std::string::npos);

  // The next renewal drops the oldest CA: new + the previous run's.
  const std::string again = tmp.path() + "/again";
  ASSERT_EQ(Script({"--apply", "--out-dir", again},
                   {{"PATH", path}, {"CURRENT_BUNDLE", Base64(out + "/ca-bundle.crt")}})
                .code,
            0);
  EXPECT_EQ(ReadTextFile(again + "/ca-bundle.crt"),
            ReadTextFile(again + "/ca.crt") + ReadTextFile(out + "/ca.crt"));
  // A first install (no caBundle yet) trusts the new CA alone.
  const std::string fresh = tmp.path() + "/fresh";
  ASSERT_EQ(Script({"--apply", "--out-dir", fresh}, {{"PATH", path}}).code, 0);
  EXPECT_EQ(ReadTextFile(fresh + "/ca-bundle.crt"), ReadTextFile(fresh + "/ca.crt"));

  std::filesystem::remove(log);
  const RunResult missing = Script({"--apply"}, {{"PATH", path}, {"FAIL_GET", "1"}});
  EXPECT_NE(missing.code, 0);
  EXPECT_NE(missing.err.find("no MutatingWebhookConfiguration hcashare-injector"),
            std::string::npos)
      << missing.err;
  EXPECT_EQ(ReadTextFile(log),
            "get mutatingwebhookconfiguration hcashare-injector -o "
            "jsonpath={.webhooks[0].clientConfig.caBundle}\n")
      << "nothing applied";
}

TEST(DeployInjectorCerts, BadArgumentsAreNamed) {
  for (const auto& [args, expected] : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"--days", "0"}, "--days \"0\""},
           {{"--days", "3651"}, "--days \"3651\""},
           {{"--days", "1e3"}, "--days \"1e3\""},
           {{"--namespace", "Kube_System"}, "--namespace \"Kube_System\""},
           {{"--service", "a.b"}, "--namespace and --service must be DNS labels"},
           {{"--secret", "x;rm"}, "--secret \"x;rm\""},
           {{"--cluster-domain", "a..b"}, "--cluster-domain \"a..b\""},
           {{"--ip", "300.1.1.1"}, "--ip \"300.1.1.1\" is not an IPv4 or IPv6 address"},
           {{"--ip", "hcashare.example"}, "--ip \"hcashare.example\""},
           {{"--ip", "10.0.0.1,DNS:evil"}, "--ip \"10.0.0.1,DNS:evil\""},
           {{"--bogus"}, "unknown argument: --bogus"}}) {
    SCOPED_TRACE(args[0]);
    const RunResult r = Script(args);
    EXPECT_NE(r.code, 0);
    EXPECT_NE(r.err.find(expected), std::string::npos) << r.err;
  }
}

}  // namespace
}  // namespace hcashare::deploy
