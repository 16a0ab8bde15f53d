// CNI_ARGS as libcni's types.LoadArgs parses it (issue 36): the exact strings that the real
// peers send (the Multus thin and thick plugins, containerd, CRI-O, cnitool), a conformance
// table of what LoadArgs accepts and refuses, and the one place hcashare is stricter: a pod
// identity key repeated with another value.
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "cni/env.h"
#include "cni/error.h"
#include "common/strings.h"
#include "tests/cni_test_util.h"

namespace hcashare::cni {
namespace {

using Args = std::map<std::string, std::string>;
using namespace test_util;  // FailsWith

// The pod keys every Kubernetes runtime sends, and the pairs for pod p in namespace ns.
const Args kPod = {{"K8S_POD_NAMESPACE", "ns"},
                   {"K8S_POD_NAME", "p"},
                   {"K8S_POD_INFRA_CONTAINER_ID", "8f3c9a0b1d2e"},
                   {"K8S_POD_UID", "0b6d6c9e-1111-2222-3333-444455556666"}};

Args PodWith(const std::string& ignore_unknown, Args more = {}) {
  Args out = kPod;
  out["IgnoreUnknown"] = ignore_unknown;
  for (auto& [k, v] : more) out[k] = v;
  return out;
}

// The runtime's pairs as containerd's go-cni sends them: from a Go map, so in any order
// (one order here; RuntimeOrderDoesNotMatter tries them all).
const char kContainerd[] =
    "K8S_POD_INFRA_CONTAINER_ID=8f3c9a0b1d2e;K8S_POD_UID=0b6d6c9e-1111-2222-3333-444455556666;"
    "IgnoreUnknown=1;K8S_POD_NAMESPACE=ns;K8S_POD_NAME=p";
// CRI-O (ocicni's buildCNIRuntimeConf): a fixed order, IgnoreUnknown=1 first.
const char kCrio[] =
    "IgnoreUnknown=1;K8S_POD_NAMESPACE=ns;K8S_POD_NAME=p;K8S_POD_INFRA_CONTAINER_ID=8f3c9a0b1d2e;"
    "K8S_POD_UID=0b6d6c9e-1111-2222-3333-444455556666";
// What Multus puts first (createRuntimeConf): its own five pairs, IgnoreUnknown=true first.
const char kMultusOwn[] =
    "IgnoreUnknown=true;K8S_POD_NAMESPACE=ns;K8S_POD_NAME=p;"
    "K8S_POD_INFRA_CONTAINER_ID=8f3c9a0b1d2e;K8S_POD_UID=0b6d6c9e-1111-2222-3333-444455556666";

std::string Cat(std::initializer_list<std::string> parts) {
  std::string out;
  for (const std::string& p : parts) out += (out.empty() ? "" : ";") + p;
  return out;
}

struct PeerCase {
  const char* who;
  std::string cni_args;
  Args want;
};

// Every string a real peer sends is accepted, with the values libcni would end with.
TEST(CniArgsPeersTest, EveryPeersExactStringIsAccepted) {
  const std::vector<PeerCase> cases = {
      {"containerd (go-cni)", kContainerd, PodWith("1")},
      {"CRI-O (ocicni)", kCrio, PodWith("1")},
      {"CRI-O with a static IP and MAC (ocicni appends IP, then MAC)",
       Cat({kCrio, "IP=10.1.1.5", "MAC=02:00:00:00:00:07"}),
       PodWith("1", {{"MAC", "02:00:00:00:00:07"}})},
      // The thin plugin appends the runtime's pairs (os.Getenv("CNI_ARGS")) after its own:
      // every key of the runtime's repeats one of Multus's.
      {"Multus thin on containerd", Cat({kMultusOwn, kContainerd}), PodWith("1")},
      {"Multus thin on CRI-O", Cat({kMultusOwn, kCrio}), PodWith("1")},
      // The thick daemon does not run with the runtime's environment: its five pairs alone.
      {"Multus thick", kMultusOwn, PodWith("true")},
      // A network selection element's "mac" and "ips": delegateAdd appends IgnoreUnknown=true
      // (again), MAC and IP to the runtime's CNI_ARGS.
      {"Multus thin, a selection element with mac and ips",
       Cat({kMultusOwn, kContainerd, "IgnoreUnknown=true", "MAC=02:00:00:00:00:01",
            "IP=10.1.1.5/24,fd00::5/64"}),
       PodWith("true", {{"MAC", "02:00:00:00:00:01"}})},
      // Multus fills its own empty value from the runtime's instead of repeating the key.
      {"Multus thin on a runtime without K8S_POD_UID",
       "IgnoreUnknown=true;K8S_POD_NAMESPACE=ns;K8S_POD_NAME=p;"
       "K8S_POD_INFRA_CONTAINER_ID=8f3c9a0b1d2e;K8S_POD_UID=;IgnoreUnknown=1;"
       "K8S_POD_NAMESPACE=ns;K8S_POD_NAME=p;K8S_POD_INFRA_CONTAINER_ID=8f3c9a0b1d2e",
       [] {
         Args a = PodWith("1");
         a["K8S_POD_UID"] = "";
         return a;
       }()},
      // cnitool passes the user's CNI_ARGS through as it is.
      {"cnitool with IgnoreUnknown",
       "IgnoreUnknown=1;K8S_POD_NAMESPACE=ns;K8S_POD_NAME=p",
       {{"IgnoreUnknown", "1"}, {"K8S_POD_NAMESPACE", "ns"}, {"K8S_POD_NAME", "p"}}},
      {"cnitool, known keys only",
       "K8S_POD_NAMESPACE=ns;K8S_POD_NAME=p",
       {{"K8S_POD_NAMESPACE", "ns"}, {"K8S_POD_NAME", "p"}}},
      {"cnitool, nothing", "", {}},
  };
  for (const PeerCase& c : cases) {
    SCOPED_TRACE(c.who);
    const Result<Args> parsed = ParseCniArgs(c.cni_args);
    ASSERT_TRUE(parsed.ok()) << parsed.status().message();
    EXPECT_EQ(*parsed, c.want);
  }
}

// The reproduction: the whole environment of an ADD from the Multus thin plugin
// (its pairs, then the runtime's) parses, and names pod ns/p.
TEST(CniArgsPeersTest, MultusThinAddEnvironmentParses) {
  const EnvMap env = {{"CNI_COMMAND", "ADD"},
                      {"CNI_CONTAINERID", "8f3c9a0b1d2e"},
                      {"CNI_NETNS", "/var/run/netns/cni-1234"},
                      {"CNI_IFNAME", "net1"},
                      {"CNI_PATH", "/opt/cni/bin"},
                      {"CNI_ARGS", Cat({kCrio, kMultusOwn})}};
  const Result<CniEnv> parsed = ParseCniEnv(env);
  ASSERT_TRUE(parsed.ok()) << parsed.status().message();
  EXPECT_EQ(parsed->PodNamespace(), "ns");
  EXPECT_EQ(parsed->PodName(), "p");
  EXPECT_EQ(parsed->PodUid(), "0b6d6c9e-1111-2222-3333-444455556666");
  EXPECT_EQ(parsed->Arg(kArgIgnoreUnknown), "true");  // Multus's, the last one
}

// containerd orders its pairs as Go iterates a map: every one of the 120 orders parses to
// the same pairs, alone and behind Multus's.
TEST(CniArgsPeersTest, RuntimeOrderDoesNotMatter) {
  std::vector<std::string> pairs = SplitOn(kContainerd, ';');
  std::sort(pairs.begin(), pairs.end());
  size_t orders = 0;
  do {
    const std::string runtime = Join(pairs, ";");
    for (const std::string& args : {runtime, Cat({kMultusOwn, runtime})}) {
      const Result<Args> parsed = ParseCniArgs(args);
      ASSERT_TRUE(parsed.ok()) << args << ": " << parsed.status().message();
      EXPECT_EQ(*parsed, PodWith("1")) << args;
    }
    ++orders;
  } while (std::next_permutation(pairs.begin(), pairs.end()));
  EXPECT_EQ(orders, 120u);
}

struct Conformance {
  const char* args;
  bool accepted;      // by types.LoadArgs into {CommonArgs, K8S_POD_*, MAC, guid}
  const char* found;  // accepted: a key=value the result holds ("" for none); refused: text
};

// What types.LoadArgs does, case by case (pkg/types/args.go: strings.Split on ';' and on
// '=', FieldByName, UnmarshallableBool), and hcashare the same.
TEST(CniArgsConformanceTest, AcceptsAndRefusesWhatLoadArgsDoes) {
  const std::vector<Conformance> table = {
      // Accepted.
      {"", true, ""},
      {"K8S_POD_NAME=p", true, "K8S_POD_NAME=p"},
      {"K8S_POD_NAME=", true, "K8S_POD_NAME="},  // an empty value is a value
      {"MAC=0a:00:00:00:00:01;MAC=0a:00:00:00:00:02", true, "MAC=0a:00:00:00:00:02"},  // last wins
      {"IgnoreUnknown=1;IgnoreUnknown=true", true, "IgnoreUnknown=true"},
      {"IgnoreUnknown=0;IgnoreUnknown=1;FOO=bar", true, "IgnoreUnknown=1"},  // the final value
      {"FOO=bar;IgnoreUnknown=1", true, ""},  // IgnoreUnknown counts wherever it stands
      {"IgnoreUnknown=TRUE;foo=1", true, ""},
      {"IgnoreUnknown=True;foo=1", true, ""},
      {"IgnoreUnknown=tRuE;foo=1", true, ""},
      {"IgnoreUnknown=false", true, "IgnoreUnknown=false"},
      {"IgnoreUnknown=1;=v", true, ""},              // an empty key is an unknown field
      {"IgnoreUnknown=1;k8s_pod_name=x", true, ""},  // field names are case-sensitive
      {"IgnoreUnknown=1;IP=10.1.1.5/24,fd00::5/64", true, ""},
      {"K8S_POD_NAME=p;K8S_POD_NAME=p", true, "K8S_POD_NAME=p"},
      // Refused: a pair that does not split into exactly two parts, wherever it stands.
      {"K8S_POD_NAME", false, "invalid pair \"K8S_POD_NAME\""},
      {"A=b=c", false, "invalid pair \"A=b=c\""},
      {"IgnoreUnknown=1;BLAH=foo=bar", false, "invalid pair \"BLAH=foo=bar\""},
      {"A=1;", false, "invalid pair \"\""},
      {";A=1", false, "invalid pair \"\""},
      {"A=1;;B=2", false, "invalid pair \"\""},
      {";", false, "invalid pair \"\""},
      // Refused: IgnoreUnknown that is not a libcni boolean, even when a later one is.
      {"IgnoreUnknown=yes", false, "IgnoreUnknown must be 1, true, 0 or false"},
      {"IgnoreUnknown=", false, "IgnoreUnknown must be"},
      {"IgnoreUnknown=2;IgnoreUnknown=1", false, "IgnoreUnknown must be"},
      // Refused: unknown keys unless the final IgnoreUnknown is true.
      {"FOO=bar", false, "unknown keys in \"FOO=bar\" and IgnoreUnknown is not true"},
      {"=v", false, "unknown keys in \"=v\""},
      {"ignoreunknown=1;FOO=bar", false, "unknown keys in \"ignoreunknown=1\", \"FOO=bar\""},
      {"IgnoreUnknown=1;FOO=bar;IgnoreUnknown=0", false, "unknown keys in \"FOO=bar\""},
      {"IgnoreUnknown=0;FOO=bar", false, "IgnoreUnknown is not true"},
  };
  for (const Conformance& c : table) {
    SCOPED_TRACE(c.args);
    const Result<Args> parsed = ParseCniArgs(c.args);
    if (!c.accepted) {
      EXPECT_TRUE(FailsWith(parsed, kErrInvalidEnv, c.found));
      continue;
    }
    ASSERT_TRUE(parsed.ok()) << parsed.status().message();
    const std::string found = c.found;
    if (found.empty()) continue;
    const size_t eq = found.find('=');
    const auto it = parsed->find(found.substr(0, eq));
    ASSERT_NE(it, parsed->end());
    EXPECT_EQ(it->second, found.substr(eq + 1));
  }
}

// Unknown keys are dropped, not kept: only what hcashare reads comes back.
TEST(CniArgsConformanceTest, UnknownKeysAreDropped) {
  const Result<Args> parsed = ParseCniArgs("IgnoreUnknown=1;IP=10.1.1.5;FOO=;K8S_POD_NAME=p");
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(*parsed, (Args{{"IgnoreUnknown", "1"}, {"K8S_POD_NAME", "p"}}));
}

// A refusal of many unknown keys names the first eight and counts the rest.
TEST(CniArgsConformanceTest, ManyUnknownKeysAreCounted) {
  std::vector<std::string> pairs;
  for (int i = 0; i < 20; ++i) pairs.push_back("K" + std::to_string(i) + "=v");
  EXPECT_TRUE(FailsWith(ParseCniArgs(Join(pairs, ";")), kErrInvalidEnv,
                        "\"K7=v\", 12 more and IgnoreUnknown is not true"));
}

// libcni lets the last of two pod names win; hcashare refuses (code 7) a CNI_ARGS whose pod
// identity keys repeat with another value, so that no attachment is made, recorded or
// checked against one pod while it was asked for another.
TEST(CniArgsIdentityTest, PodKeysThatDisagreeAreRefused) {
  for (const char* key :
       {"K8S_POD_NAMESPACE", "K8S_POD_NAME", "K8S_POD_UID", "K8S_POD_INFRA_CONTAINER_ID"}) {
    SCOPED_TRACE(key);
    const std::string args = Cat({kMultusOwn, std::string(key) + "=other"});
    EXPECT_TRUE(FailsWith(ParseCniArgs(args), kErrInvalidNetConf,
                          "CNI_ARGS names two pods: " + std::string(key)));
    // Through the environment too: code 7, not folded into a code-4 report.
    const EnvMap env = {{"CNI_COMMAND", "DEL"},
                        {"CNI_CONTAINERID", "c1"},
                        {"CNI_IFNAME", "net1"},
                        {"CNI_PATH", "/opt/cni/bin"},
                        {"CNI_ARGS", args}};
    EXPECT_TRUE(FailsWith(ParseCniEnv(env), kErrInvalidNetConf, "names two pods"));
  }
  // An empty value then a name is two different values as well.
  EXPECT_TRUE(FailsWith(ParseCniArgs("K8S_POD_UID=;K8S_POD_UID=u"), kErrInvalidNetConf,
                        "K8S_POD_UID is \"\" and then \"u\""));
  // Other keys may change: the last wins, as in libcni.
  EXPECT_TRUE(ParseCniArgs("MAC=02:00:00:00:00:01;MAC=02:00:00:00:00:02").ok());
}

// With other problems in the environment, the two-pod refusal joins the code-4 report.
TEST(CniArgsIdentityTest, OtherEnvironmentProblemsComeFirst) {
  const EnvMap env = {{"CNI_COMMAND", "ADD"},
                      {"CNI_CONTAINERID", "c1"},
                      {"CNI_IFNAME", "net1"},
                      {"CNI_PATH", "/opt/cni/bin"},
                      {"CNI_ARGS", "K8S_POD_NAME=a;K8S_POD_NAME=b"}};
  EXPECT_TRUE(FailsWith(ParseCniEnv(env), kErrInvalidEnv, "CNI_NETNS is required for ADD"));
  EXPECT_TRUE(FailsWith(ParseCniEnv(env), kErrInvalidEnv, "names two pods"));
}

}  // namespace
}  // namespace hcashare::cni
