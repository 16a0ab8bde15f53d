// Tests for the CNI protocol layer (cni/), the invocation: verbs, versions and the VERSION
// reply, name syntax, the CNI_* environment and CNI_ARGS, and stdin with its cap (the
// network configuration: cni_netconf_test.cc; errors and results: cni_result_test.cc).
#include <unistd.h>

#include <map>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cni/env.h"
#include "cni/error.h"
#include "cni/netconf.h"
#include "cni/result.h"
#include "cni/stdin.h"
#include "cni/syntax.h"
#include "cni/verb.h"
#include "cni/version.h"
#include "common/unique_fd.h"
#include "config/json_fields.h"
#include "tests/cni_test_util.h"

namespace hcashare::cni {
namespace {

using nlohmann::json;
using namespace test_util;  // the shared helpers, unqualified

// ---------------------------------------------------------------------------------------
// Verbs and versions

TEST(CniVerbTest, ParsesExactlyTheSpecVerbs) {
  for (Verb verb :
       {Verb::kAdd, Verb::kDel, Verb::kCheck, Verb::kStatus, Verb::kGc, Verb::kVersion}) {
    EXPECT_EQ(ParseVerb(VerbName(verb)), verb) << VerbName(verb);
  }
  EXPECT_EQ(std::string(VerbName(Verb::kGc)), "GC");
  EXPECT_FALSE(ParseVerb("add"));
  EXPECT_FALSE(ParseVerb("ADD "));
  EXPECT_FALSE(ParseVerb(""));
  EXPECT_FALSE(ParseVerb("UPDATE"));
}

TEST(CniVersionTest, SupportedVersions) {
  EXPECT_EQ(SupportedVersions(),
            (std::vector<std::string>{"0.3.0", "0.3.1", "0.4.0", "1.0.0", "1.1.0"}));
  EXPECT_EQ(kLatestVersion, "1.1.0");
  EXPECT_TRUE(IsSupportedVersion("0.4.0"));
  EXPECT_FALSE(IsSupportedVersion("0.2.0"));
  EXPECT_FALSE(IsSupportedVersion("0.1.0"));
  EXPECT_FALSE(IsSupportedVersion("1.1"));
  EXPECT_FALSE(IsSupportedVersion("1.2.0"));
}

TEST(CniVersionTest, ParsesAndComparesSemanticVersions) {
  const auto v = ParseSemVer("1.10.3");
  ASSERT_TRUE(v);
  EXPECT_EQ(v->major, 1);
  EXPECT_EQ(v->minor, 10);
  EXPECT_EQ(v->patch, 3);
  for (const char* bad : {"", "1", "1.0", "1.0.0.0", "a.b.c", "1..0", "-1.0.0", "1.0.0 ", "v1.0.0",
                          "1234567.0.0", "1.0.+1"}) {
    EXPECT_FALSE(ParseSemVer(bad)) << bad;
  }
  EXPECT_LT(Compare(*ParseSemVer("0.4.0"), *ParseSemVer("0.10.0")), 0);
  EXPECT_GT(Compare(*ParseSemVer("1.0.1"), *ParseSemVer("1.0.0")), 0);
  EXPECT_EQ(Compare(*ParseSemVer("1.1.0"), *ParseSemVer("1.1.0")), 0);
  EXPECT_TRUE(VersionAtLeast("1.1.0", "1.0.0"));
  EXPECT_TRUE(VersionAtLeast("0.4.0", "0.4.0"));
  EXPECT_FALSE(VersionAtLeast("0.3.1", "0.4.0"));
  EXPECT_FALSE(VersionAtLeast("garbage", "0.1.0"));
}

TEST(CniVersionTest, VerbsNeedMinimumVersions) {
  EXPECT_EQ(MinimumVersionFor(Verb::kCheck), "0.4.0");
  EXPECT_EQ(MinimumVersionFor(Verb::kStatus), "1.1.0");
  EXPECT_EQ(MinimumVersionFor(Verb::kGc), "1.1.0");
  EXPECT_EQ(MinimumVersionFor(Verb::kAdd), "0.1.0");

  EXPECT_TRUE(CheckConfigVersion(std::string("0.3.0"), Verb::kAdd).ok());
  EXPECT_TRUE(CheckConfigVersion(std::string("0.3.1"), Verb::kDel).ok());
  EXPECT_TRUE(CheckConfigVersion(std::string("0.4.0"), Verb::kCheck).ok());
  EXPECT_TRUE(CheckConfigVersion(std::string("1.1.0"), Verb::kStatus).ok());
  EXPECT_TRUE(CheckConfigVersion(std::string("1.1.0"), Verb::kGc).ok());
  EXPECT_TRUE(CheckConfigVersion(std::nullopt, Verb::kVersion).ok());

  const Status check_old = CheckConfigVersion(std::string("0.3.1"), Verb::kCheck);
  ASSERT_FALSE(check_old.ok());
  EXPECT_EQ(CniCodeOf(check_old), kErrIncompatibleVersion);
  EXPECT_EQ(check_old.message(), "CHECK is not supported by cniVersion \"0.3.1\"");
  EXPECT_EQ(check_old.details(), "CHECK needs cniVersion 0.4.0 or later");
  EXPECT_EQ(CniCodeOf(CheckConfigVersion(std::string("1.0.0"), Verb::kStatus)), 1);
  EXPECT_EQ(CniCodeOf(CheckConfigVersion(std::string("1.0.0"), Verb::kGc)), 1);

  const Status unsupported = CheckConfigVersion(std::string("0.2.0"), Verb::kAdd);
  ASSERT_FALSE(unsupported.ok());
  EXPECT_EQ(CniCodeOf(unsupported), 1);
  EXPECT_EQ(unsupported.message(), "unsupported cniVersion \"0.2.0\"");
  EXPECT_EQ(unsupported.details(), "supported versions: 0.3.0, 0.3.1, 0.4.0, 1.0.0, 1.1.0");

  for (Verb verb : {Verb::kAdd, Verb::kDel, Verb::kCheck, Verb::kStatus, Verb::kGc}) {
    const Status absent = CheckConfigVersion(std::nullopt, verb);
    ASSERT_FALSE(absent.ok()) << VerbName(verb);
    EXPECT_EQ(CniCodeOf(absent), kErrInvalidNetConf);
    EXPECT_EQ(absent.details(), "cniVersion: required");
  }
}

TEST(CniVersionTest, VersionReply) {
  EXPECT_EQ(VersionResult("1.0.0"), json::parse(R"({"cniVersion":"1.0.0",
                            "supportedVersions":["0.3.0","0.3.1","0.4.0","1.0.0","1.1.0"]})"));
  EXPECT_EQ(RequestedVersion(R"({"cniVersion":"0.4.0"})"), "0.4.0");
  EXPECT_EQ(RequestedVersion(""), "1.1.0");
  EXPECT_EQ(RequestedVersion("{not json"), "1.1.0");
  EXPECT_EQ(RequestedVersion(R"({"cniVersion":"0.2.0"})"), "1.1.0");
  EXPECT_EQ(RequestedVersion(R"({"cniVersion":4})"), "1.1.0");
  EXPECT_EQ(RequestedVersion(R"(["0.4.0"])"), "1.1.0");
}

// ---------------------------------------------------------------------------------------
// Syntax helpers

TEST(CniSyntaxTest, DeviceNames) {
  const auto vf = ParseDeviceName("0000:3B:00.2");
  ASSERT_TRUE(vf);
  EXPECT_EQ(vf->value, "0000:3b:00.2");
  EXPECT_EQ(vf->kind, DeviceKind::kPciFunction);
  EXPECT_EQ(ParseDeviceName("af:06.0").value().value, "0000:af:06.0");
  EXPECT_EQ(ParseDeviceName("0000:00:1f.7").value().value, "0000:00:1f.7");
  const auto sf = ParseDeviceName("mlx5_core.sf.4");
  ASSERT_TRUE(sf);
  EXPECT_EQ(sf->value, "mlx5_core.sf.4");
  EXPECT_EQ(sf->kind, DeviceKind::kAuxDevice);
  EXPECT_EQ(ParseDeviceName("mlx5_core.eth.rdma.12").value().kind, DeviceKind::kAuxDevice);
  for (const char* bad : {"",
                          "../../etc",
                          "0000:3b:00.2/..",
                          "0000:3b:00.8",
                          "0000:3b:20.0",
                          "000:3b:00.2",
                          "00000:3b:00.2",
                          "0000:3b:00:2",
                          "0000:3g:00.2",
                          " 0000:3b:00.2",
                          "3b:00.2 ",
                          "3b-00.2",
                          "mlx5_core.sf.x",
                          "mlx5_core..4",
                          "mlx5_core/sf.4",
                          "sf.4",
                          ".sf.4",
                          "mlx5_core.sf.",
                          "mlx5-core.sf.4",
                          "mlx5_core.sf.4/..",
                          "..",
                          "mlx5_core.sf.-4"}) {
    EXPECT_FALSE(ParseDeviceName(bad)) << bad;
  }
  EXPECT_FALSE(ParseDeviceName("a." + std::string(200, 'b') + ".1"));
}

TEST(CniSyntaxTest, MacAddresses) {
  EXPECT_EQ(ParseUnicastMac("AA:BB:CC:DD:EE:F0"), "aa:bb:cc:dd:ee:f0");
  EXPECT_EQ(ParseUnicastMac("02:00:00:00:00:01"), "02:00:00:00:00:01");
  std::string why;
  EXPECT_FALSE(ParseUnicastMac("01:00:5e:00:00:01", &why));
  EXPECT_EQ(why, "must be a unicast address");
  EXPECT_FALSE(ParseUnicastMac("ff:ff:ff:ff:ff:ff", &why));
  EXPECT_EQ(why, "must be a unicast address");
  EXPECT_FALSE(ParseUnicastMac("00:00:00:00:00:00", &why));
  EXPECT_EQ(why, "must not be all zeros");
  // Multus checks a pod's requested MAC with Go's net.ParseMAC and passes the text on, and
  // sriov-cni reads it the same way: every six-octet form it takes.
  EXPECT_EQ(ParseUnicastMac("AA-BB-CC-DD-EE-F0"), "aa:bb:cc:dd:ee:f0");
  EXPECT_EQ(ParseUnicastMac("aabb.ccdd.eef0"), "aa:bb:cc:dd:ee:f0");
  for (const char* bad : {"aa:bb:cc:dd:ee", "aa:bb:cc:dd:ee:g0", "aa:bb:cc:dd:ee:f0:11",
                          "aa:bb:cc:dd:ee:f", "aa-bb:cc-dd-ee-f0", "02:00:00:00:00:00:00:01",
                          "aabb.ccdd.eef0.0001", " aa:bb:cc:dd:ee:f0", "aa:bb:cc:dd:ee:f0 "}) {
    EXPECT_FALSE(ParseUnicastMac(bad, &why)) << bad;
    EXPECT_EQ(why,
              "must be six hex octets, as 02:00:00:00:00:01, 02-00-00-00-00-01 or 0200.0000.0001")
        << bad;
  }
}

// Go's net.ParseMAC, which Multus, sriov-cni and ib-sriov-cni read MACs and GUIDs with: the
// cases of its own test table (MAC-48, EUI-64 and 20-octet IPoIB, each in the three forms;
// the refused shapes).
TEST(CniSyntaxTest, HardwareAddressesAsGoReadsThem) {
  using Octets = std::vector<uint8_t>;
  const Octets mac = {0x00, 0x00, 0x5e, 0x00, 0x53, 0x01};
  const Octets eui64 = {0x02, 0x00, 0x5e, 0x10, 0x00, 0x00, 0x00, 0x01};
  const Octets ipoib = {0x00, 0x00, 0x00, 0x00, 0xfe, 0x80, 0x00, 0x00, 0x00, 0x00,
                        0x00, 0x00, 0x02, 0x00, 0x5e, 0x10, 0x00, 0x00, 0x00, 0x01};
  const Octets mixed = {0xab, 0xcd, 0xef, 0xab, 0xcd, 0xef};
  const std::vector<std::pair<const char*, Octets>> good = {
      {"00:00:5e:00:53:01", mac},
      {"00-00-5e-00-53-01", mac},
      {"0000.5e00.5301", mac},
      {"02:00:5e:10:00:00:00:01", eui64},
      {"02-00-5e-10-00-00-00-01", eui64},
      {"0200.5e10.0000.0001", eui64},
      {"00:00:00:00:fe:80:00:00:00:00:00:00:02:00:5e:10:00:00:00:01", ipoib},
      {"00-00-00-00-fe-80-00-00-00-00-00-00-02-00-5e-10-00-00-00-01", ipoib},
      {"0000.0000.fe80.0000.0000.0000.0200.5e10.0000.0001", ipoib},
      {"ab:cd:ef:AB:CD:EF", mixed},
      {"ab-cd-ef-AB-CD-EF", mixed},
      {"abcd.efAB.CDEF", mixed}};
  for (const auto& [text, octets] : good) EXPECT_EQ(ParseHardwareAddress(text), octets) << text;
  for (const char* bad : {"01.02.03.04.05.06",
                          "01:02:03:04:05:06:",
                          "x1:02:03:04:05:06",
                          "01002:03:04:05:06",
                          "01:02003:04:05:06",
                          "01:02:03004:05:06",
                          "01:02:03:04005:06",
                          "01:02:03:04:05006",
                          "01-02:03:04:05:06",
                          "01:02-03-04-05-06",
                          "0123:4567:89AF",
                          "0123-4567-89AF",
                          "01:02:03:04:05:06:07",
                          "01:02:03:04:05:06:07:08:09",
                          "0123.4567.89ab.cdef.0123",
                          "01:02:03:04:05",
                          "",
                          "0000.5e00.530",
                          "0000.5e00.530g",
                          "+1:02:03:04:05:06"}) {
    EXPECT_FALSE(ParseHardwareAddress(bad)) << bad;
  }
}

TEST(CniSyntaxTest, Addresses) {
  EXPECT_EQ(CidrFamily("10.1.2.3/24"), 4);
  EXPECT_EQ(CidrFamily("0.0.0.0/0"), 4);
  EXPECT_EQ(CidrFamily("fd00::5/64"), 6);
  EXPECT_EQ(CidrFamily("::/0"), 6);
  for (const char* bad : {"10.1.2.3", "10.1.2.3/33", "fd00::5/129", "10.1.2/24", "10.1.2.3/",
                          "10.1.2.3/2a", "x/24", "/24", "10.1.2.3/24/1", "10.1.2.3/-1"}) {
    EXPECT_FALSE(CidrFamily(bad)) << bad;
  }
  EXPECT_TRUE(IsIpAddress("10.1.2.1"));
  EXPECT_TRUE(IsIpAddress("fe80::1"));
  EXPECT_FALSE(IsIpAddress("10.1.2.1/24"));
  EXPECT_FALSE(IsIpAddress("gateway"));
  EXPECT_FALSE(IsIpAddress(""));
}

TEST(CniSyntaxTest, PathsAndPluginNames) {
  EXPECT_FALSE(CheckAbsolutePath("/var/run/netns/cni-1234"));
  EXPECT_FALSE(CheckAbsolutePath("/a/..b/c.."));
  EXPECT_FALSE(CheckAbsolutePath("/"));
  EXPECT_EQ(CheckAbsolutePath("var/run/netns/x"), "must be an absolute path");
  EXPECT_EQ(CheckAbsolutePath(""), "must be an absolute path");
  EXPECT_EQ(CheckAbsolutePath("/var/run/netns/../../etc"), "must not contain a \"..\" component");
  EXPECT_EQ(CheckAbsolutePath("/var/.."), "must not contain a \"..\" component");
  EXPECT_EQ(CheckAbsolutePath(std::string("/a\nb")), "must not contain control characters");
  EXPECT_FALSE(CheckPluginName("host-local"));
  EXPECT_FALSE(CheckPluginName("nv-ipam"));
  EXPECT_EQ(CheckPluginName("../host-local"), "must be a plugin name, not a path");
  EXPECT_EQ(CheckPluginName("/opt/cni/bin/host-local"), "must be a plugin name, not a path");
  EXPECT_EQ(CheckPluginName(".."), "must not be \".\" or \"..\"");
  EXPECT_EQ(CheckPluginName("."), "must not be \".\" or \"..\"");
  EXPECT_EQ(CheckPluginName("host local"), "must not contain whitespace or control characters");
  EXPECT_EQ(CheckPluginName(""), "is empty");
}

TEST(CniSyntaxTest, Utf8LengthsAndResourceNames) {
  EXPECT_FALSE(CheckUtf8("net1"));
  EXPECT_FALSE(CheckUtf8("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"));
  for (const char* bad :
       {"\xff", "\xc3\x28", "\xc0\xaf", "\xed\xa0\x80", "\xf4\x90\x80\x80", "\xe2\x82"}) {
    EXPECT_EQ(CheckUtf8(bad), "is not valid UTF-8") << bad;
  }
  EXPECT_EQ(CheckIfName("n\xff"), "is not valid UTF-8");
  EXPECT_EQ(CheckAbsolutePath("/var/\xff"), "is not valid UTF-8");
  EXPECT_FALSE(CheckAbsolutePath("/" + std::string(kMaxPathLength - 1, 'a')));
  EXPECT_EQ(CheckAbsolutePath("/" + std::string(kMaxPathLength, 'a')), "is longer than 4095 bytes");
  EXPECT_FALSE(CheckResourceName("rdma/hca_vfs"));
  EXPECT_FALSE(CheckResourceName("nvidia.com/mlnx-sriov.rdma_1"));
  for (const char* bad : {"hca_vfs", "rdma/", "/x", "rdma/a/b", "../../etc/passwd", "Rdma/x",
                          "rdma/_x", "rdma/x_", "rdma/a b", "-rdma/x"}) {
    EXPECT_TRUE(CheckResourceName(bad)) << bad;
  }
  EXPECT_TRUE(CheckResourceName("rdma/" + std::string(64, 'a')));
  EXPECT_TRUE(CheckResourceName(std::string(254, 'a') + "/x"));
}

// resourceName follows the kubelet's rule for extended resource names, the one in
// config/names.h. The CNI's own check used to accept these prefixes, which the kubelet
// refuses (and the device plugin's resourcePrefix never allowed).
TEST(CniSyntaxTest, ResourceNamePrefixesFollowTheKubeletRule) {
  const std::string label(60, 'a');
  // Four labels of 60 characters (the last one 61) and three dots: 244, the longest prefix.
  const std::string prefix_244 = label + "." + label + "." + label + "." + label + "b";
  ASSERT_EQ(prefix_244.size(), 244u);
  for (const std::string& bad :
       {std::string("a..b/x"), std::string(".rdma/x"), std::string("kubernetes.io/x"),
        std::string("rdma.kubernetes.io/x"), std::string("requests.example.com/x"),
        std::string(64, 'a') + ".com/x", prefix_244 + "b/x"}) {
    EXPECT_TRUE(CheckResourceName(bad)) << bad;
  }
  EXPECT_FALSE(CheckResourceName(prefix_244 + "/x"));
  EXPECT_FALSE(CheckResourceName("kubernetes.io.example.com/x"));
  // The name part allows '-' and '.' inside (the kubelet does; sriov-network-device-plugin
  // names use them).
  EXPECT_FALSE(CheckResourceName("rdma/a-b.c_d"));
  EXPECT_EQ(CheckResourceName("kubernetes.io/x"),
            "has an invalid prefix: \"kubernetes.io\" is in the kubernetes.io domain, which is "
            "reserved for native resources; the kubelet refuses it for extended resources");
}

// ---------------------------------------------------------------------------------------
// Environment

EnvMap AddEnv() {
  return {
      {"CNI_COMMAND", "ADD"},
      {"CNI_CONTAINERID", "8f3c9a0b1d2e"},
      {"CNI_NETNS", "/var/run/netns/cni-1234"},
      {"CNI_IFNAME", "net1"},
      {"CNI_PATH", "/opt/cni/bin::/usr/libexec/cni"},
      {"CNI_ARGS",
       "IgnoreUnknown=1;K8S_POD_NAMESPACE=team-a;K8S_POD_NAME=trainer-0;"
       "K8S_POD_INFRA_CONTAINER_ID=8f3c9a0b1d2e;K8S_POD_UID=0b6d6c9e-1111-2222-3333-444455556666"},
      {"HOME", "/root"}};
}

EnvMap With(EnvMap env, const std::string& name, const std::string& value) {
  env[name] = value;
  return env;
}

EnvMap Without(EnvMap env, const std::string& name) {
  env.erase(name);
  return env;
}

TEST(CniEnvTest, ParsesAValidAddEnvironment) {
  const Result<CniEnv> env = ParseCniEnv(AddEnv());
  ASSERT_TRUE(env.ok()) << env.status().message();
  EXPECT_EQ(env->verb, Verb::kAdd);
  EXPECT_EQ(env->command, "ADD");
  EXPECT_EQ(env->container_id, "8f3c9a0b1d2e");
  EXPECT_EQ(env->netns, "/var/run/netns/cni-1234");
  EXPECT_EQ(env->ifname, "net1");
  EXPECT_EQ(env->path, "/opt/cni/bin::/usr/libexec/cni");
  EXPECT_EQ(env->PathDirs(), (std::vector<std::string>{"/opt/cni/bin", "/usr/libexec/cni"}));
  EXPECT_EQ(env->cni_args.size(), 5u);
  EXPECT_EQ(env->Arg(kArgIgnoreUnknown), "1");
  EXPECT_EQ(env->PodNamespace(), "team-a");
  EXPECT_EQ(env->PodName(), "trainer-0");
  EXPECT_EQ(env->PodUid(), "0b6d6c9e-1111-2222-3333-444455556666");
  EXPECT_EQ(env->PodInfraContainerId(), "8f3c9a0b1d2e");
  EXPECT_EQ(env->Arg("MAC"), "");
}

TEST(CniEnvTest, CommandMustBeAVerb) {
  EXPECT_TRUE(FailsWith(ParseCniEnv({}), 4, "CNI_COMMAND is not set"));
  EXPECT_TRUE(FailsWith(ParseCniEnv({{"CNI_COMMAND", ""}}), 4, "CNI_COMMAND is not set"));
  EXPECT_TRUE(FailsWith(ParseCniEnv(With(AddEnv(), "CNI_COMMAND", "add")), 4,
                        "CNI_COMMAND \"add\" must be one of ADD, DEL, CHECK, STATUS, GC, VERSION"));
  EXPECT_TRUE(FailsWith(ParseCniEnv(With(AddEnv(), "CNI_COMMAND", "UPDATE")), 4, "CNI_COMMAND"));
}

TEST(CniEnvTest, AddAndCheckRequireTheirVariables) {
  for (const char* verb : {"ADD", "CHECK"}) {
    const EnvMap base = With(AddEnv(), "CNI_COMMAND", verb);
    ASSERT_TRUE(ParseCniEnv(base).ok()) << verb;
    for (const char* var : {"CNI_CONTAINERID", "CNI_NETNS", "CNI_IFNAME", "CNI_PATH"}) {
      const std::string expected = std::string(var) + " is required for " + verb;
      EXPECT_TRUE(FailsWith(ParseCniEnv(Without(base, var)), 4, expected)) << var;
      // An empty value counts as unset.
      EXPECT_TRUE(FailsWith(ParseCniEnv(With(base, var, "")), 4, expected)) << var;
    }
    // CNI_ARGS is optional.
    const Result<CniEnv> no_args = ParseCniEnv(Without(base, "CNI_ARGS"));
    ASSERT_TRUE(no_args.ok());
    EXPECT_TRUE(no_args->cni_args.empty());
    EXPECT_EQ(no_args->PodName(), "");
  }
}

TEST(CniEnvTest, DelToleratesAMissingNetns) {
  const EnvMap del = With(AddEnv(), "CNI_COMMAND", "DEL");
  const Result<CniEnv> no_netns = ParseCniEnv(Without(del, "CNI_NETNS"));
  ASSERT_TRUE(no_netns.ok()) << no_netns.status().message();
  EXPECT_EQ(no_netns->netns, "");
  EXPECT_TRUE(ParseCniEnv(With(del, "CNI_NETNS", "")).ok());
  // A netns that is present is still checked.
  EXPECT_TRUE(FailsWith(ParseCniEnv(With(del, "CNI_NETNS", "netns/x")), 4,
                        "CNI_NETNS \"netns/x\" must be an absolute path"));
  EXPECT_TRUE(
      FailsWith(ParseCniEnv(Without(del, "CNI_IFNAME")), 4, "CNI_IFNAME is required for DEL"));
  EXPECT_TRUE(FailsWith(ParseCniEnv(Without(del, "CNI_CONTAINERID")), 4,
                        "CNI_CONTAINERID is required for DEL"));
}

TEST(CniEnvTest, StatusGcAndVersionNeedLittle) {
  const Result<CniEnv> version = ParseCniEnv({{"CNI_COMMAND", "VERSION"}});
  ASSERT_TRUE(version.ok());
  EXPECT_EQ(version->verb, Verb::kVersion);
  const Result<CniEnv> status = ParseCniEnv({{"CNI_COMMAND", "STATUS"}});
  ASSERT_TRUE(status.ok());
  EXPECT_EQ(status->verb, Verb::kStatus);
  // Variables the verb does not use are neither checked nor kept.
  const Result<CniEnv> status_junk =
      ParseCniEnv({{"CNI_COMMAND", "STATUS"}, {"CNI_IFNAME", "eth 0"}, {"CNI_CONTAINERID", "a/b"}});
  ASSERT_TRUE(status_junk.ok());
  EXPECT_EQ(status_junk->ifname, "");
  EXPECT_EQ(status_junk->container_id, "");
  EXPECT_TRUE(FailsWith(ParseCniEnv({{"CNI_COMMAND", "GC"}}), 4, "CNI_PATH is required for GC"));
  // STATUS checks a CNI_PATH it is given.
  EXPECT_TRUE(FailsWith(ParseCniEnv({{"CNI_COMMAND", "STATUS"}, {"CNI_PATH", "bin"}}), 4,
                        "CNI_PATH \"bin\" has a directory"));
  const Result<CniEnv> gc = ParseCniEnv({{"CNI_COMMAND", "GC"}, {"CNI_PATH", "/opt/cni/bin"}});
  ASSERT_TRUE(gc.ok());
  EXPECT_EQ(gc->path, "/opt/cni/bin");
}

TEST(CniEnvTest, RejectsHostileInterfaceNames) {
  EXPECT_TRUE(ParseCniEnv(With(AddEnv(), "CNI_IFNAME", std::string(15, 'a'))).ok());
  const struct {
    std::string ifname;
    std::string problem;
  } cases[] = {
      {std::string(16, 'a'), "is longer than 15 bytes"},
      {"eth 0", "must not contain whitespace or control characters"},
      {"eth\t0", "must not contain whitespace or control characters"},
      {"eth0/x", "must not contain '/'"},
      {"../etc", "must not contain '/'"},
      {".", "must not be \".\" or \"..\""},
      {"..", "must not be \".\" or \"..\""},
      {"eth0:1", "must not contain ':'"},
  };
  for (const auto& c : cases) {
    const Result<CniEnv> env = ParseCniEnv(With(AddEnv(), "CNI_IFNAME", c.ifname));
    EXPECT_TRUE(FailsWith(env, 4, "CNI_IFNAME")) << c.ifname;
    EXPECT_TRUE(FailsWith(env, 4, c.problem)) << c.ifname;
  }
}

TEST(CniEnvTest, RejectsHostileContainerIds) {
  EXPECT_TRUE(ParseCniEnv(With(AddEnv(), "CNI_CONTAINERID", "cnitool-0a1b2c.d_e-f")).ok());
  EXPECT_TRUE(ParseCniEnv(With(AddEnv(), "CNI_CONTAINERID", std::string(256, 'a'))).ok());
  const struct {
    std::string id;
    std::string problem;
  } cases[] = {
      {"abc/def", "may contain only letters, digits, '_', '.' and '-'"},
      {"../../etc", "must start with a letter or digit"},
      {"-abc", "must start with a letter or digit"},
      {"_abc", "must start with a letter or digit"},
      {"abc def", "may contain only letters"},
      {std::string(257, 'a'), "is longer than 256 bytes"},
  };
  for (const auto& c : cases) {
    const Result<CniEnv> env = ParseCniEnv(With(AddEnv(), "CNI_CONTAINERID", c.id));
    EXPECT_TRUE(FailsWith(env, 4, "CNI_CONTAINERID")) << c.id;
    EXPECT_TRUE(FailsWith(env, 4, c.problem)) << c.id;
  }
}

TEST(CniEnvTest, ChecksNetnsAndPath) {
  EXPECT_TRUE(ParseCniEnv(With(AddEnv(), "CNI_NETNS", "/proc/4242/ns/net")).ok());
  EXPECT_TRUE(FailsWith(ParseCniEnv(With(AddEnv(), "CNI_NETNS", "/var/run/netns/../../etc/x")), 4,
                        "CNI_NETNS \"/var/run/netns/../../etc/x\" must not contain a \"..\" "
                        "component"));
  EXPECT_TRUE(FailsWith(ParseCniEnv(With(AddEnv(), "CNI_PATH", "/opt/cni/bin:bin")), 4,
                        "CNI_PATH \"/opt/cni/bin:bin\" has a directory \"bin\" that must be an "
                        "absolute path"));
}

TEST(CniEnvTest, ReportsEveryProblemAtOnce) {
  EnvMap env = With(AddEnv(), "CNI_IFNAME", "eth 0");
  env = Without(env, "CNI_NETNS");
  env = With(env, "CNI_ARGS", "K8S_POD_NAME");
  const Result<CniEnv> parsed = ParseCniEnv(env);
  EXPECT_TRUE(FailsWith(parsed, 4, "CNI_NETNS is required for ADD"));
  EXPECT_TRUE(FailsWith(parsed, 4, "CNI_IFNAME \"eth 0\""));
  EXPECT_TRUE(FailsWith(parsed, 4, "CNI_ARGS has an invalid pair \"K8S_POD_NAME\""));
}

TEST(CniEnvTest, HostileBytesStillMakeValidErrorJson) {
  const Result<CniEnv> env = ParseCniEnv(With(AddEnv(), "CNI_CONTAINERID", "ab\xff\xfe"));
  ASSERT_FALSE(env.ok());
  EXPECT_EQ(CniCodeOf(env.status()), 4);
  // dump() throws on invalid UTF-8; the quoted value must have been sanitised.
  std::string text;
  EXPECT_NO_THROW(text = ToJson(FromStatus(env.status()), "1.0.0").dump());
  EXPECT_TRUE(Contains(text, "CNI_CONTAINERID"));
}

TEST(CniArgsTest, ParsesPairs) {
  const auto empty = ParseCniArgs("");
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->empty());
  const auto args = ParseCniArgs("IgnoreUnknown=1;K8S_POD_NAMESPACE=ns;MAC=;K8S_POD_NAME=p-0");
  ASSERT_TRUE(args.ok());
  EXPECT_EQ(*args, (std::map<std::string, std::string>{{"IgnoreUnknown", "1"},
                                                       {"K8S_POD_NAMESPACE", "ns"},
                                                       {"MAC", ""},
                                                       {"K8S_POD_NAME", "p-0"}}));
}

// More on CNI_ARGS, as libcni parses it and as the real peers send it: cni_args_test.cc.
TEST(CniArgsTest, RejectsInvalidPairs) {
  EXPECT_TRUE(FailsWith(ParseCniArgs("K8S_POD_NAME"), 4,
                        "CNI_ARGS has an invalid pair \"K8S_POD_NAME\" (want KEY=VALUE, one '=')"));
  EXPECT_TRUE(FailsWith(ParseCniArgs("A=b=c"), 4, "invalid pair \"A=b=c\""));
  EXPECT_TRUE(FailsWith(ParseCniArgs("A=1;"), 4, "invalid pair \"\""));
  EXPECT_TRUE(FailsWith(ParseCniEnv(With(AddEnv(), "CNI_ARGS", "A=1;;B=2")), 4, "CNI_ARGS"));
}

// ---------------------------------------------------------------------------------------
// stdin

// A pipe; both ends close on destruction.
struct Pipe {
  Pipe() {
    int fds[2];
    EXPECT_EQ(::pipe(fds), 0);
    read_end.Reset(fds[0]);
    write_end.Reset(fds[1]);
  }
  void Write(const std::string& data) {
    size_t done = 0;
    while (done < data.size()) {
      const ssize_t n = ::write(write_end.get(), data.data() + done, data.size() - done);
      ASSERT_GT(n, 0);
      done += static_cast<size_t>(n);
    }
  }
  UniqueFd read_end;
  UniqueFd write_end;
};

TEST(CniStdinTest, ReadsUpToTheCap) {
  {
    Pipe p;
    p.Write(R"({"cniVersion":"1.0.0"})");
    p.write_end.Reset();
    const auto data = ReadStdin(p.read_end.get());
    ASSERT_TRUE(data.ok());
    EXPECT_EQ(*data, R"({"cniVersion":"1.0.0"})");
  }
  {
    Pipe p;
    p.write_end.Reset();
    const auto data = ReadStdin(p.read_end.get());
    ASSERT_TRUE(data.ok());
    EXPECT_EQ(*data, "");
  }
  {
    Pipe p;
    p.Write(std::string(10, 'x'));
    p.write_end.Reset();
    const auto data = ReadStdin(p.read_end.get(), 10);
    ASSERT_TRUE(data.ok());
    EXPECT_EQ(data->size(), 10u);
  }
  {
    Pipe p;
    p.Write(std::string(11, 'x'));
    p.write_end.Reset();
    EXPECT_TRUE(FailsWith(ReadStdin(p.read_end.get(), 10), 6,
                          "network configuration on stdin exceeds 10 bytes"));
  }
}

TEST(CniStdinTest, OverTheDefaultCapStopsReading) {
  EXPECT_EQ(kMaxStdinBytes, 1048576u);
  Pipe p;
  constexpr size_t kExtra = 1000;
  const std::string big(kMaxStdinBytes + 1 + kExtra, ' ');
  std::thread writer([&p, &big] {
    p.Write(big);
    p.write_end.Reset();
  });
  const auto data = ReadStdin(p.read_end.get());
  writer.join();
  ASSERT_FALSE(data.ok());
  EXPECT_EQ(CniCodeOf(data.status()), kErrDecode);
  EXPECT_EQ(data.status().message(), "network configuration on stdin exceeds 1048576 bytes");
  // Exactly cap + 1 bytes were consumed; the other kExtra are still in the pipe.
  char rest[2 * kExtra];
  size_t left = 0;
  ssize_t n;
  while ((n = ::read(p.read_end.get(), rest, sizeof(rest))) > 0) left += static_cast<size_t>(n);
  EXPECT_EQ(left, kExtra);
}

TEST(CniStdinTest, ReadErrorIsIoFailure) {
  EXPECT_TRUE(FailsWith(ReadStdin(-1), kErrIo, "cannot read the network configuration"));
}

}  // namespace
}  // namespace hcashare::cni
