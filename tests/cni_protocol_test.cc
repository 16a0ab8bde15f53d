// Tests for the CNI protocol layer (cni/): errors and their JSON, versions and the VERSION
// reply, the CNI_* environment and CNI_ARGS, stdin with its cap, the network
// configuration (every error path, defaults, deviceID precedence, typo warnings) and the
// result model in every supported version's shape.
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

namespace hcashare::cni {
namespace {

using nlohmann::json;

// True when `haystack` contains `needle`; prints both otherwise.
::testing::AssertionResult Contains(const std::string& haystack, const std::string& needle) {
  if (haystack.find(needle) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << "\"" << haystack << "\" does not contain \"" << needle << "\"";
}

// Asserts that `result` failed with `code` and that msg + details mention `text`, as the
// plugin prints them.
template <typename T>
::testing::AssertionResult FailsWith(const Result<T>& result, int code, const std::string& text) {
  if (result.ok()) return ::testing::AssertionFailure() << "succeeded, expected code " << code;
  const CniError e = FromStatus(result.status());
  if (e.code != code) {
    return ::testing::AssertionFailure()
           << "code " << e.code << " (" << e.msg << " / " << e.details << "), expected " << code;
  }
  return Contains(e.msg + " | " + e.details, text);
}

// ---------------------------------------------------------------------------------------
// Errors

TEST(CniErrorTest, CodesMatchTheSpec) {
  EXPECT_EQ(kErrIncompatibleVersion, 1);
  EXPECT_EQ(kErrUnsupportedField, 2);
  EXPECT_EQ(kErrUnknownContainer, 3);
  EXPECT_EQ(kErrInvalidEnv, 4);
  EXPECT_EQ(kErrIo, 5);
  EXPECT_EQ(kErrDecode, 6);
  EXPECT_EQ(kErrInvalidNetConf, 7);
  EXPECT_EQ(kErrTryAgainLater, 11);
  EXPECT_EQ(kErrPluginNotAvailable, 50);
  EXPECT_EQ(kErrLimitedConnectivity, 51);
  EXPECT_EQ(kErrDeviceNotFound, 100);
  EXPECT_EQ(kErrDeviceBusy, 101);
  EXPECT_EQ(kErrHostSetupFailed, 102);
  EXPECT_EQ(kErrInternal, 103);
}

TEST(CniErrorTest, ToJsonOmitsEmptyDetails) {
  EXPECT_EQ(ToJson(CniError{7, "invalid network configuration", "vlan: bad"}, "1.0.0"),
            json::parse(R"({"cniVersion":"1.0.0","code":7,"msg":"invalid network configuration",
                            "details":"vlan: bad"})"));
  EXPECT_EQ(ToJson(CniError{100, "device not found", ""}, "0.3.1"),
            json::parse(R"({"cniVersion":"0.3.1","code":100,"msg":"device not found"})"));
}

TEST(CniErrorTest, StatusCodesMapToCniCodes) {
  EXPECT_EQ(CniCodeFor(StatusCode::kNotFound), kErrDeviceNotFound);
  EXPECT_EQ(CniCodeFor(StatusCode::kInvalidArgument), kErrInvalidNetConf);
  EXPECT_EQ(CniCodeFor(StatusCode::kAlreadyExists), kErrDeviceBusy);
  EXPECT_EQ(CniCodeFor(StatusCode::kFailedPrecondition), kErrHostSetupFailed);
  EXPECT_EQ(CniCodeFor(StatusCode::kPermissionDenied), kErrHostSetupFailed);
  EXPECT_EQ(CniCodeFor(StatusCode::kUnavailable), kErrTryAgainLater);
  EXPECT_EQ(CniCodeFor(StatusCode::kIoError), kErrIo);
  EXPECT_EQ(CniCodeFor(StatusCode::kUnimplemented), kErrInternal);
  EXPECT_EQ(CniCodeFor(StatusCode::kInternal), kErrInternal);

  const CniError plain = FromStatus(Status::NotFound("no VF 0000:3b:00.2"));
  EXPECT_EQ(plain.code, 100);
  EXPECT_EQ(plain.msg, "no VF 0000:3b:00.2");
  EXPECT_EQ(plain.details, "");
  const CniError summarised =
      FromStatus(Summarize(Status::IoError("write: EIO"), "cannot save state"));
  EXPECT_EQ(summarised.code, 5);
  EXPECT_EQ(summarised.msg, "cannot save state");
  EXPECT_EQ(summarised.details, "write: EIO");
}

TEST(CniErrorTest, ParsesDelegatedPluginErrors) {
  const auto e = ParseErrorJson(json::parse(
      R"({"cniVersion":"1.0.0","code":11,"msg":"no addresses left","details":"range full"})"));
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->code, 11);
  EXPECT_EQ(e->msg, "no addresses left");
  EXPECT_EQ(e->details, "range full");
  EXPECT_EQ(ParseErrorJson(json::parse(R"({"code":999,"msg":"x"})")).value().details, "");
  EXPECT_FALSE(ParseErrorJson(json::parse(R"({"code":"7","msg":"x"})")));
  EXPECT_FALSE(ParseErrorJson(json::parse(R"({"code":7})")));
  EXPECT_FALSE(ParseErrorJson(json::parse(R"({"code":4294967296,"msg":"x"})")));
  EXPECT_FALSE(ParseErrorJson(json::parse(R"({"cniVersion":"1.0.0","ips":[]})")));
  EXPECT_FALSE(ParseErrorJson(json::parse(R"([1])")));
}

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
  for (const char* bad : {"aa:bb:cc:dd:ee", "aa-bb-cc-dd-ee-f0", "aa:bb:cc:dd:ee:g0",
                          "aa:bb:cc:dd:ee:f0:11", "aabb.ccdd.eef0", "aa:bb:cc:dd:ee:f"}) {
    EXPECT_FALSE(ParseUnicastMac(bad, &why)) << bad;
    EXPECT_EQ(why, "must be six hex octets separated by ':'") << bad;
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
  EXPECT_TRUE(FailsWith(parsed, 4, "CNI_ARGS has a malformed pair \"K8S_POD_NAME\""));
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

TEST(CniArgsTest, RejectsMalformedPairs) {
  EXPECT_TRUE(FailsWith(ParseCniArgs("K8S_POD_NAME"), 4,
                        "CNI_ARGS has a malformed pair \"K8S_POD_NAME\" (want KEY=VALUE)"));
  EXPECT_TRUE(FailsWith(ParseCniArgs("A=b=c"), 4, "malformed pair \"A=b=c\""));
  EXPECT_TRUE(FailsWith(ParseCniArgs("A=1;"), 4, "malformed pair \"\""));
  EXPECT_TRUE(FailsWith(ParseCniArgs(";A=1"), 4, "malformed pair \"\""));
  EXPECT_TRUE(FailsWith(ParseCniArgs("=v"), 4, "CNI_ARGS has a pair with an empty key: \"=v\""));
  EXPECT_TRUE(FailsWith(ParseCniArgs("K8S_POD_NAME=a;K8S_POD_NAME=b"), 4,
                        "CNI_ARGS repeats the key \"K8S_POD_NAME\""));
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

// ---------------------------------------------------------------------------------------
// Network configuration

// A minimal valid ADD configuration, as Multus would pass it.
json BaseConf() {
  return json::parse(R"({
    "cniVersion": "1.0.0",
    "name": "rdma-net-a",
    "type": "hcashare-cni",
    "deviceID": "0000:3b:00.2"
  })");
}

Result<NetConf> Parse(const json& conf, Verb verb = Verb::kAdd) {
  return ParseNetConf(conf.dump(), verb);
}

// BaseConf() with `key` set to `value` (parsed as JSON).
json BaseWith(const std::string& key, const std::string& value_json) {
  json conf = BaseConf();
  conf[key] = json::parse(value_json);
  return conf;
}

TEST(CniNetConfTest, MinimalConfigGetsDefaults) {
  const Result<NetConf> conf = Parse(BaseConf());
  ASSERT_TRUE(conf.ok()) << conf.status().details();
  EXPECT_EQ(conf->cni_version, "1.0.0");
  EXPECT_EQ(conf->name, "rdma-net-a");
  EXPECT_EQ(conf->type, "hcashare-cni");
  ASSERT_TRUE(conf->device);
  EXPECT_EQ(conf->device.value().value, "0000:3b:00.2");
  EXPECT_EQ(conf->device.value().kind, DeviceKind::kPciFunction);
  EXPECT_EQ(conf->device.value().source, DeviceIdSource::kDeviceId);
  EXPECT_EQ(conf->kubelet_root_dir, "/var/lib/kubelet");
  EXPECT_EQ(conf->state_dir, "/var/lib/cni/hcashare");
  EXPECT_EQ(conf->host_root, "/");
  EXPECT_FALSE(conf->resource_name);
  EXPECT_FALSE(conf->vlan);
  EXPECT_FALSE(conf->vlan_qos);
  EXPECT_FALSE(conf->vlan_proto);
  EXPECT_FALSE(conf->mac);
  EXPECT_FALSE(conf->runtime_mac);
  EXPECT_FALSE(conf->spoofchk);
  EXPECT_FALSE(conf->trust);
  EXPECT_FALSE(conf->link_state);
  EXPECT_FALSE(conf->min_tx_rate);
  EXPECT_FALSE(conf->max_tx_rate);
  EXPECT_FALSE(conf->mtu);
  EXPECT_FALSE(conf->ipam);
  EXPECT_EQ(conf->ipam_type, "");
  EXPECT_FALSE(conf->log_level);
  EXPECT_FALSE(conf->log_file);
  EXPECT_FALSE(conf->prev_result);
  EXPECT_FALSE(conf->runtime_config);
  EXPECT_FALSE(conf->valid_attachments);
  EXPECT_FALSE(conf->RequestsPfSideSettings());
  EXPECT_TRUE(conf->warnings.empty());
  EXPECT_EQ(conf->raw, BaseConf());
}

TEST(CniNetConfTest, FullConfigIsNormalised) {
  const json full = json::parse(R"({
    "cniVersion": "0.3.1",
    "name": "sriov-rdma",
    "type": "hcashare-cni",
    "deviceID": "0000:AF:06.1",
    "resourceName": "nvidia.com/hca_vfs",
    "vlan": 100,
    "vlanQoS": 3,
    "vlanProto": "802.1AD",
    "mac": "0A:BB:CC:DD:EE:01",
    "mtu": 9000,
    "spoofchk": "on",
    "trust": "OFF",
    "link_state": "Disable",
    "min_tx_rate": 100,
    "max_tx_rate": 1000,
    "ipam": {"type": "host-local", "subnet": "10.56.217.0/24", "gateway": "10.56.217.1"},
    "kubeletRootDir": "/var/lib/rancher/k3s/agent/kubelet",
    "stateDir": "/run/hcashare",
    "hostRoot": "/host",
    "logLevel": "warning",
    "logFile": "/var/log/hcashare-cni.log",
    "runtimeConfig": {"mac": "0a:00:00:00:00:02"},
    "capabilities": {"mac": true},
    "args": {"cni": {"x": 1}},
    "dns": {}
  })");
  const Result<NetConf> conf = Parse(full);
  ASSERT_TRUE(conf.ok()) << conf.status().details();
  EXPECT_EQ(conf->device.value().value, "0000:af:06.1");
  EXPECT_EQ(conf->resource_name, "nvidia.com/hca_vfs");
  EXPECT_EQ(conf->vlan, 100);
  EXPECT_EQ(conf->vlan_qos, 3);
  EXPECT_EQ(conf->vlan_proto, "802.1ad");
  EXPECT_EQ(conf->mac, "0a:bb:cc:dd:ee:01");
  EXPECT_EQ(conf->runtime_mac, "0a:00:00:00:00:02");
  EXPECT_EQ(conf->mtu, 9000);
  EXPECT_EQ(conf->spoofchk, true);
  EXPECT_EQ(conf->trust, false);
  EXPECT_EQ(conf->link_state, LinkState::kDisable);
  EXPECT_EQ(conf->min_tx_rate, 100);
  EXPECT_EQ(conf->max_tx_rate, 1000);
  ASSERT_TRUE(conf->ipam);
  EXPECT_EQ(*conf->ipam, full["ipam"]);
  EXPECT_EQ(conf->ipam_type, "host-local");
  EXPECT_EQ(conf->kubelet_root_dir, "/var/lib/rancher/k3s/agent/kubelet");
  EXPECT_EQ(conf->state_dir, "/run/hcashare");
  EXPECT_EQ(conf->host_root, "/host");
  EXPECT_EQ(conf->log_level, LogLevel::kWarn);
  EXPECT_EQ(conf->log_file, "/var/log/hcashare-cni.log");
  EXPECT_EQ(conf->runtime_config, full["runtimeConfig"]);
  EXPECT_TRUE(conf->RequestsPfSideSettings());
  EXPECT_TRUE(conf->warnings.empty()) << conf->warnings[0];
  EXPECT_EQ(conf->raw, full);
}

TEST(CniNetConfTest, EachPfSideSettingCounts) {
  for (const auto& [key, value] :
       std::vector<std::pair<std::string, std::string>>{{"vlan", "0"},
                                                        {"mac", "\"02:00:00:00:00:01\""},
                                                        {"spoofchk", "\"off\""},
                                                        {"trust", "\"on\""},
                                                        {"link_state", "\"auto\""},
                                                        {"min_tx_rate", "0"},
                                                        {"max_tx_rate", "0"}}) {
    const Result<NetConf> conf = Parse(BaseWith(key, value));
    ASSERT_TRUE(conf.ok()) << key << ": " << conf.status().details();
    EXPECT_TRUE(conf->RequestsPfSideSettings()) << key;
  }
  const Result<NetConf> mtu_only = Parse(BaseWith("mtu", "1500"));
  ASSERT_TRUE(mtu_only.ok());
  EXPECT_FALSE(mtu_only->RequestsPfSideSettings());
  // A null counts as absent, as in Go.
  const Result<NetConf> null_vlan = Parse(BaseWith("vlan", "null"));
  ASSERT_TRUE(null_vlan.ok());
  EXPECT_FALSE(null_vlan->vlan);
}

TEST(CniNetConfTest, DecodeFailuresAreCode6) {
  EXPECT_TRUE(FailsWith(ParseNetConf("{\"cniVersion\": ", Verb::kAdd), 6,
                        "cannot decode network configuration"));
  EXPECT_TRUE(FailsWith(ParseNetConf("", Verb::kAdd), 6, "cannot decode network configuration"));
  EXPECT_TRUE(FailsWith(ParseNetConf("[1,2]", Verb::kAdd), 6, "must be a JSON object, got array"));
  EXPECT_TRUE(FailsWith(ParseNetConf("\"x\"", Verb::kDel), 6, "must be a JSON object"));
  const std::string deep = std::string(100, '[') + std::string(100, ']');
  EXPECT_TRUE(FailsWith(ParseNetConf(deep, Verb::kAdd), 6, "nested deeper than 64 levels"));
  json nested = BaseConf();
  json* at = &nested["runtimeConfig"];
  for (int i = 0; i < 70; ++i) at = &(*at)["x"];
  *at = 1;
  EXPECT_TRUE(FailsWith(Parse(nested), 6, "nested deeper than 64 levels"));
  // Moderate nesting is fine.
  json shallow = BaseConf();
  shallow["runtimeConfig"]["a"]["b"]["c"] = 1;
  EXPECT_TRUE(Parse(shallow).ok());
}

TEST(CniNetConfTest, CniVersionRules) {
  json conf = BaseConf();
  conf.erase("cniVersion");
  EXPECT_TRUE(FailsWith(Parse(conf), 7, "cniVersion: required"));
  EXPECT_TRUE(FailsWith(Parse(conf, Verb::kDel), 7, "cniVersion: required"));
  EXPECT_TRUE(FailsWith(Parse(BaseWith("cniVersion", "1.0")), 7,
                        "cniVersion: must be a string, got number 1.0"));
  EXPECT_TRUE(
      FailsWith(Parse(BaseWith("cniVersion", "\"0.2.0\"")), 1, "unsupported cniVersion \"0.2.0\""));
  EXPECT_TRUE(FailsWith(Parse(BaseWith("cniVersion", "\"0.3.1\""), Verb::kCheck), 1,
                        "CHECK is not supported by cniVersion \"0.3.1\""));
  EXPECT_TRUE(FailsWith(Parse(BaseWith("cniVersion", "\"1.0.0\""), Verb::kStatus), 1,
                        "STATUS is not supported"));
  // The version error comes first even when other fields are wrong too.
  json both = BaseWith("cniVersion", "\"9.9.9\"");
  both["vlan"] = 99999;
  EXPECT_TRUE(FailsWith(Parse(both), 1, "unsupported cniVersion"));
  for (const std::string& v : SupportedVersions()) {
    EXPECT_TRUE(Parse(BaseWith("cniVersion", "\"" + v + "\"")).ok()) << v;
  }
}

TEST(CniNetConfTest, IdentityFields) {
  for (const char* key : {"name", "type"}) {
    json conf = BaseConf();
    conf.erase(key);
    EXPECT_TRUE(FailsWith(Parse(conf), 7, std::string(key) + ": required"));
  }
  EXPECT_TRUE(
      FailsWith(Parse(BaseWith("name", "\"my net\"")), 7,
                "name: may contain only letters, digits, '_', '.' and '-', got \"my net\""));
  EXPECT_TRUE(FailsWith(Parse(BaseWith("name", "\"../x\"")), 7, "name: must start with"));
  EXPECT_TRUE(FailsWith(Parse(BaseWith("type", "\"../bin/sh\"")), 7,
                        "type: must be a plugin name, not a path, got \"../bin/sh\""));
  EXPECT_TRUE(FailsWith(Parse(BaseWith("resourceName", "5")), 7,
                        "resourceName: must be a string, got number 5"));
  EXPECT_TRUE(FailsWith(Parse(BaseWith("resourceName", "\"../../etc/passwd\"")), 7,
                        "resourceName: must be an extended resource name"));
  EXPECT_TRUE(FailsWith(Parse(BaseWith("resourceName", "\"a..b/vfs\"")), 7,
                        "resourceName: has an invalid prefix: \"a..b\" is not a DNS subdomain"));
}

TEST(CniNetConfTest, CollectsEveryErrorInOneCode7) {
  json conf = BaseConf();
  conf["vlan"] = 5000;
  conf["mtu"] = 20;
  conf["mac"] = "01:00:5e:00:00:01";
  conf["spoofchk"] = "yes";
  conf["ipam"] = {{"type", "../host-local"}};
  const Result<NetConf> parsed = Parse(conf);
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(CniCodeOf(parsed.status()), 7);
  EXPECT_EQ(parsed.status().message(), "invalid network configuration");
  EXPECT_EQ(parsed.status().details(),
            "vlan: must be 0..4094, got 5000; "
            "mac: must be a unicast address, got \"01:00:5e:00:00:01\"; "
            "spoofchk: must be \"on\" or \"off\", got \"yes\"; "
            "mtu: must be 68..65535, got 20; "
            "ipam.type: must be a plugin name, not a path, got \"../host-local\"");
}

TEST(CniNetConfTest, WrongJsonTypesNameThePath) {
  const struct {
    const char* key;
    const char* value;
    const char* detail;
  } cases[] = {
      {"vlan", "\"5\"", "vlan: must be an integer, got string \"5\""},
      {"vlan", "5.0", "vlan: must be an integer, got number 5.0"},
      {"vlan", "true", "vlan: must be an integer, got boolean true"},
      {"vlanQoS", "[1]", "vlanQoS: must be an integer, got array"},
      {"mtu", "\"9000\"", "mtu: must be an integer, got string \"9000\""},
      {"deviceID", "42", "deviceID: must be a string, got number 42"},
      {"mac", "{}", "mac: must be a string, got object"},
      {"spoofchk", "true", "spoofchk: must be a string, got boolean true"},
      {"ipam", "\"host-local\"", "ipam: must be an object, got string \"host-local\""},
      {"prevResult", "[]", "prevResult: must be an object, got array"},
      {"runtimeConfig", "\"x\"", "runtimeConfig: must be an object, got string \"x\""},
      {"stateDir", "1", "stateDir: must be a string, got number 1"},
      {"min_tx_rate", "1.5", "min_tx_rate: must be an integer, got number 1.5"},
  };
  for (const auto& c : cases) {
    const Result<NetConf> parsed = Parse(BaseWith(c.key, c.value));
    ASSERT_FALSE(parsed.ok()) << c.key << "=" << c.value;
    EXPECT_EQ(CniCodeOf(parsed.status()), 7) << c.key;
    EXPECT_EQ(parsed.status().details(), c.detail);
  }
  json runtime_type = BaseConf();
  runtime_type.erase("deviceID");
  runtime_type["runtimeConfig"] = {{"deviceID", 3}};
  EXPECT_TRUE(
      FailsWith(Parse(runtime_type), 7, "runtimeConfig.deviceID: must be a string, got number 3"));
}

TEST(CniNetConfTest, RejectsHostileDeviceIds) {
  for (const char* bad : {"../../etc", "0000:3b:00.2/..", "0000:3b:00.2/../../x", "/sys/bus/pci",
                          "0000:3b:00.8", "mlx5_core.sf.x", "mlx5_core/sf.4", "..", "", "eth0"}) {
    const std::string expected =
        std::string(
            "deviceID: must be a PCI address (DDDD:BB:DD.F) or an auxiliary device name "
            "(e.g. mlx5_core.sf.4), got ") +
        json(bad).dump();
    const Result<NetConf> parsed = Parse(BaseWith("deviceID", json(bad).dump()));
    ASSERT_FALSE(parsed.ok()) << bad;
    EXPECT_EQ(CniCodeOf(parsed.status()), 7) << bad;
    EXPECT_EQ(parsed.status().details(), expected);
  }
  json via_pci_bus = BaseConf();
  via_pci_bus.erase("deviceID");
  via_pci_bus["pciBusID"] = "0000:3b:00.2/..";
  EXPECT_TRUE(FailsWith(Parse(via_pci_bus), 7,
                        "pciBusID: must be a PCI address (DDDD:BB:DD.F) or an auxiliary device "
                        "name (e.g. mlx5_core.sf.4), got \"0000:3b:00.2/..\""));
}

TEST(CniNetConfTest, DeviceIdForms) {
  const Result<NetConf> short_pci = Parse(BaseWith("deviceID", "\"3B:00.2\""));
  ASSERT_TRUE(short_pci.ok());
  EXPECT_EQ(short_pci->device.value().value, "0000:3b:00.2");
  const Result<NetConf> sf = Parse(BaseWith("deviceID", "\"mlx5_core.sf.4\""));
  ASSERT_TRUE(sf.ok());
  EXPECT_EQ(sf->device.value().value, "mlx5_core.sf.4");
  EXPECT_EQ(sf->device.value().kind, DeviceKind::kAuxDevice);
}

TEST(CniNetConfTest, DeviceIdPrecedence) {
  json conf = BaseConf();
  conf["pciBusID"] = "0000:3b:00.3";
  conf["runtimeConfig"] = {{"deviceID", "0000:3b:00.4"}};
  const Result<NetConf> all = Parse(conf);
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->device.value().value, "0000:3b:00.2");
  EXPECT_EQ(all->device.value().source, DeviceIdSource::kDeviceId);

  conf.erase("deviceID");
  const Result<NetConf> pci_bus = Parse(conf);
  ASSERT_TRUE(pci_bus.ok());
  EXPECT_EQ(pci_bus->device.value().value, "0000:3b:00.3");
  EXPECT_EQ(pci_bus->device.value().source, DeviceIdSource::kPciBusId);

  conf.erase("pciBusID");
  const Result<NetConf> runtime = Parse(conf);
  ASSERT_TRUE(runtime.ok());
  EXPECT_EQ(runtime->device.value().value, "0000:3b:00.4");
  EXPECT_EQ(runtime->device.value().source, DeviceIdSource::kRuntimeConfig);

  // An invalid deviceID is an error; there is no fall-back to the next source.
  json bad_first = BaseWith("deviceID", "\"../../etc\"");
  bad_first["pciBusID"] = "0000:3b:00.3";
  EXPECT_TRUE(FailsWith(Parse(bad_first), 7, "deviceID: must be a PCI address"));
  json bad_runtime = BaseConf();
  bad_runtime.erase("deviceID");
  bad_runtime["runtimeConfig"] = {{"deviceID", "../x"}};
  EXPECT_TRUE(FailsWith(Parse(bad_runtime), 7, "runtimeConfig.deviceID: must be a PCI address"));
}

TEST(CniNetConfTest, DeviceIdRequiredForAddWithoutResourceNameOnly) {
  json conf = BaseConf();
  conf.erase("deviceID");
  EXPECT_TRUE(FailsWith(Parse(conf), 7, "deviceID: required when there is no resourceName"));
  json by_resource = conf;
  by_resource["resourceName"] = "rdma/vf_pool_a";
  const Result<NetConf> add = Parse(by_resource);
  ASSERT_TRUE(add.ok());
  EXPECT_FALSE(add->device);
  EXPECT_EQ(add->resource_name, "rdma/vf_pool_a");
  json check = conf;
  check["prevResult"] = {{"cniVersion", "1.0.0"}};
  EXPECT_TRUE(Parse(check, Verb::kCheck).ok()) << "CHECK uses the device ADD recorded";
  const Result<NetConf> del = Parse(conf, Verb::kDel);
  ASSERT_TRUE(del.ok());
  EXPECT_FALSE(del->device);
  json status = conf;
  status["cniVersion"] = "1.1.0";
  EXPECT_TRUE(Parse(status, Verb::kStatus).ok());
}

TEST(CniNetConfTest, VlanRanges) {
  EXPECT_EQ(Parse(BaseWith("vlan", "0"))->vlan, 0);
  EXPECT_EQ(Parse(BaseWith("vlan", "4094"))->vlan, 4094);
  EXPECT_TRUE(FailsWith(Parse(BaseWith("vlan", "4095")), 7, "vlan: must be 0..4094, got 4095"));
  EXPECT_TRUE(FailsWith(Parse(BaseWith("vlan", "-1")), 7, "vlan: must be 0..4094, got -1"));
  EXPECT_TRUE(FailsWith(Parse(BaseWith("vlan", "18446744073709551615")), 7,
                        "vlan: must be 0..4094, got 18446744073709551615"));
  json qos = BaseWith("vlan", "10");
  qos["vlanQoS"] = 8;
  EXPECT_TRUE(FailsWith(Parse(qos), 7, "vlanQoS: must be 0..7, got 8"));
  qos["vlanQoS"] = 7;
  EXPECT_EQ(Parse(qos)->vlan_qos, 7);
}

TEST(CniNetConfTest, VlanCrossFieldRules) {
  EXPECT_TRUE(FailsWith(Parse(BaseWith("vlanQoS", "0")), 7, "vlanQoS: requires vlan"));
  EXPECT_TRUE(FailsWith(Parse(BaseWith("vlanProto", "\"802.1q\"")), 7, "vlanProto: requires vlan"));
  json untagged = BaseWith("vlan", "0");
  untagged["vlanQoS"] = 3;
  EXPECT_TRUE(FailsWith(Parse(untagged), 7, "vlanQoS: a non-zero QoS requires a non-zero vlan"));
  untagged["vlanQoS"] = 0;
  EXPECT_TRUE(Parse(untagged).ok());
  untagged["vlanProto"] = "802.1ad";
  EXPECT_TRUE(FailsWith(Parse(untagged), 7, "vlanProto: \"802.1ad\" requires a non-zero vlan"));
  untagged["vlanProto"] = "802.1Q";
  EXPECT_EQ(Parse(untagged)->vlan_proto, "802.1q");
  json proto = BaseWith("vlan", "100");
  proto["vlanProto"] = "802.1x";
  EXPECT_TRUE(
      FailsWith(Parse(proto), 7, "vlanProto: must be \"802.1q\" or \"802.1ad\", got \"802.1x\""));
  // An invalid vlan does not also produce "requires vlan".
  json invalid_vlan = BaseWith("vlan", "\"x\"");
  invalid_vlan["vlanQoS"] = 1;
  const Result<NetConf> parsed = Parse(invalid_vlan);
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.status().details(), "vlan: must be an integer, got string \"x\"");
}

TEST(CniNetConfTest, MacMtuAndSwitches) {
  EXPECT_TRUE(FailsWith(Parse(BaseWith("mac", "\"aa:bb:cc:dd:ee\"")), 7,
                        "mac: must be six hex octets separated by ':', got \"aa:bb:cc:dd:ee\""));
  EXPECT_TRUE(
      FailsWith(Parse(BaseWith("mac", "\"00:00:00:00:00:00\"")), 7, "mac: must not be all zeros"));
  EXPECT_TRUE(FailsWith(Parse(BaseWith("runtimeConfig", R"({"mac":"ff:ff:ff:ff:ff:ff"})")), 7,
                        "runtimeConfig.mac: must be a unicast address"));
  EXPECT_TRUE(FailsWith(Parse(BaseWith("mtu", "67")), 7, "mtu: must be 68..65535, got 67"));
  EXPECT_TRUE(FailsWith(Parse(BaseWith("mtu", "65536")), 7, "mtu: must be 68..65535, got 65536"));
  EXPECT_EQ(Parse(BaseWith("mtu", "68"))->mtu, 68);
  EXPECT_EQ(Parse(BaseWith("mtu", "65535"))->mtu, 65535);
  EXPECT_EQ(Parse(BaseWith("trust", "\"On\""))->trust, true);
  EXPECT_EQ(Parse(BaseWith("spoofchk", "\"off\""))->spoofchk, false);
  EXPECT_TRUE(FailsWith(Parse(BaseWith("trust", "\"enabled\"")), 7,
                        "trust: must be \"on\" or \"off\", got \"enabled\""));
  EXPECT_EQ(Parse(BaseWith("link_state", "\"auto\""))->link_state, LinkState::kAuto);
  EXPECT_EQ(Parse(BaseWith("link_state", "\"enable\""))->link_state, LinkState::kEnable);
  EXPECT_TRUE(FailsWith(Parse(BaseWith("link_state", "\"up\"")), 7,
                        "link_state: must be \"auto\", \"enable\" or \"disable\", got \"up\""));
}

TEST(CniNetConfTest, TxRates) {
  EXPECT_TRUE(FailsWith(Parse(BaseWith("min_tx_rate", "-1")), 7,
                        "min_tx_rate: must be 0..4294967295, got -1"));
  EXPECT_TRUE(FailsWith(Parse(BaseWith("max_tx_rate", "4294967296")), 7,
                        "max_tx_rate: must be 0..4294967295, got 4294967296"));
  json rates = BaseWith("min_tx_rate", "500");
  rates["max_tx_rate"] = 100;
  EXPECT_TRUE(FailsWith(Parse(rates), 7, "max_tx_rate: must be >= min_tx_rate (500), got 100"));
  rates["max_tx_rate"] = 0;  // no limit
  EXPECT_TRUE(Parse(rates).ok());
  rates["max_tx_rate"] = 500;
  EXPECT_EQ(Parse(rates)->max_tx_rate, 500);
  rates["min_tx_rate"] = 0;
  rates["max_tx_rate"] = 10;
  EXPECT_EQ(Parse(rates)->min_tx_rate, 0);
}

TEST(CniNetConfTest, Ipam) {
  const Result<NetConf> empty = Parse(BaseWith("ipam", "{}"));
  ASSERT_TRUE(empty.ok());
  EXPECT_FALSE(empty->ipam);
  EXPECT_EQ(empty->ipam_type, "");
  const Result<NetConf> whereabouts =
      Parse(BaseWith("ipam", R"({"type":"whereabouts","range":"10.0.0.0/16"})"));
  ASSERT_TRUE(whereabouts.ok());
  EXPECT_EQ(whereabouts->ipam_type, "whereabouts");
  EXPECT_EQ((*whereabouts->ipam)["range"], "10.0.0.0/16");
  const struct {
    const char* ipam;
    const char* detail;
  } cases[] = {
      {R"({"type":"/opt/cni/bin/host-local"})",
       "ipam.type: must be a plugin name, not a path, got \"/opt/cni/bin/host-local\""},
      {R"({"type":".."})", "ipam.type: must not be \".\" or \"..\", got \"..\""},
      {R"({"type":"."})", "ipam.type: must not be \".\" or \"..\", got \".\""},
      {R"({"type":""})", "ipam.type: is empty, got \"\""},
      {R"({"type":5})", "ipam.type: must be a string, got number 5"},
  };
  for (const auto& c : cases) {
    const Result<NetConf> parsed = Parse(BaseWith("ipam", c.ipam));
    ASSERT_FALSE(parsed.ok()) << c.ipam;
    EXPECT_EQ(CniCodeOf(parsed.status()), 7);
    EXPECT_EQ(parsed.status().details(), c.detail);
  }
}

TEST(CniNetConfTest, HostPathsAndLogging) {
  EXPECT_TRUE(FailsWith(Parse(BaseWith("stateDir", "\"state\"")), 7,
                        "stateDir: must be an absolute path, got \"state\""));
  EXPECT_TRUE(FailsWith(Parse(BaseWith("kubeletRootDir", "\"/var/lib/../../etc\"")), 7,
                        "kubeletRootDir: must not contain a \"..\" component"));
  EXPECT_TRUE(
      FailsWith(Parse(BaseWith("hostRoot", "\"host\"")), 7, "hostRoot: must be an absolute"));
  EXPECT_TRUE(FailsWith(Parse(BaseWith("logFile", "\"cni.log\"")), 7,
                        "logFile: must be an absolute path, got \"cni.log\""));
  EXPECT_EQ(Parse(BaseWith("logLevel", "\"debug\""))->log_level, LogLevel::kDebug);
  // An unknown level is a warning (sriov-cni falls back to info), not an error.
  const Result<NetConf> verbose = Parse(BaseWith("logLevel", "\"verbose\""));
  ASSERT_TRUE(verbose.ok());
  EXPECT_FALSE(verbose->log_level);
  EXPECT_EQ(verbose->warnings,
            (std::vector<std::string>{"logLevel: unknown level \"verbose\"; using info"}));
}

TEST(CniNetConfTest, TypoWarnings) {
  json conf = BaseConf();
  conf["vlan"] = 10;
  conf["vlanQos"] = 3;
  conf["MTU"] = 9000;
  conf["spoofChk"] = "on";
  conf["completelyUnrelatedKey"] = 1;
  conf["cniVersions"] = {"1.0.0"};
  conf["disableCheck"] = true;
  const Result<NetConf> parsed = Parse(conf);
  ASSERT_TRUE(parsed.ok()) << parsed.status().details();
  EXPECT_EQ(parsed->warnings, (std::vector<std::string>{
                                  "unknown key \"MTU\"; did you mean \"mtu\"?",
                                  "unknown key \"spoofChk\"; did you mean \"spoofchk\"?",
                                  "unknown key \"vlanQos\"; did you mean \"vlanQoS\"?",
                              }));
  // The misspelt keys are not applied.
  EXPECT_FALSE(parsed->vlan_qos);
  EXPECT_FALSE(parsed->mtu);
  EXPECT_FALSE(parsed->spoofchk);
}

TEST(CniNetConfTest, PrevResultAndRuntimeConfigArePreserved) {
  const json prev = json::parse(R"({"cniVersion":"1.0.0",
      "interfaces":[{"name":"net1","mac":"0a:00:00:00:00:01","sandbox":"/var/run/netns/x"}],
      "ips":[{"address":"10.1.2.3/24","gateway":"10.1.2.1","interface":0}],
      "dns":{"nameservers":["10.1.2.1"]}, "custom":{"kept":[1,2,3]}})");
  json conf = BaseConf();
  conf["prevResult"] = prev;
  conf["runtimeConfig"] = {{"ips", {"10.1.2.3/24"}}, {"portMappings", json::array()}};
  conf["capabilities"] = "tolerated even when odd";
  const Result<NetConf> parsed = Parse(conf, Verb::kCheck);
  ASSERT_TRUE(parsed.ok()) << parsed.status().details();
  EXPECT_EQ(parsed->prev_result, prev);
  EXPECT_EQ(parsed->runtime_config, conf["runtimeConfig"]);
  EXPECT_EQ(parsed->raw, conf);

  conf.erase("prevResult");
  EXPECT_TRUE(FailsWith(Parse(conf, Verb::kCheck), 7, "prevResult: required"));
  EXPECT_TRUE(Parse(conf, Verb::kAdd).ok());
}

TEST(CniNetConfTest, GcValidAttachments) {
  json conf = BaseConf();
  conf["cniVersion"] = "1.1.0";
  conf.erase("deviceID");
  EXPECT_TRUE(FailsWith(Parse(conf, Verb::kGc), 7, "cni.dev/valid-attachments: required"));
  conf["cni.dev/valid-attachments"] =
      json::parse(R"([{"containerID":"c1","ifname":"net1"},{"containerID":"c2","ifname":"net2"}])");
  const Result<NetConf> gc = Parse(conf, Verb::kGc);
  ASSERT_TRUE(gc.ok()) << gc.status().details();
  ASSERT_TRUE(gc->valid_attachments);
  ASSERT_EQ(gc->valid_attachments->size(), 2u);
  EXPECT_EQ((*gc->valid_attachments)[1].container_id, "c2");
  EXPECT_EQ((*gc->valid_attachments)[1].ifname, "net2");
  conf["cni.dev/valid-attachments"] = json::parse(R"([] )");
  const Result<NetConf> none = Parse(conf, Verb::kGc);
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->valid_attachments->empty());
  conf["cni.dev/valid-attachments"] = json::parse(R"([{"containerID":"c1"}, 5])");
  const Result<NetConf> bad = Parse(conf, Verb::kGc);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(CniCodeOf(bad.status()), 7);
  EXPECT_EQ(bad.status().details(),
            "cni.dev/valid-attachments[0].ifname: required; "
            "cni.dev/valid-attachments[1]: must be an object, got number 5");
}

TEST(CniNetConfTest, MacPrecedence) {
  json conf = BaseWith("mac", "\"0a:00:00:00:00:03\"");
  const std::map<std::string, std::string> args_mac = {{"MAC", "0A:00:00:00:00:02"}};
  const Result<NetConf> config_only = Parse(conf);
  ASSERT_TRUE(config_only.ok());
  EXPECT_EQ(*SelectMac(*config_only, {}), "0a:00:00:00:00:03");
  EXPECT_EQ(*SelectMac(*config_only, args_mac), "0a:00:00:00:00:02");
  conf["runtimeConfig"] = {{"mac", "0a:00:00:00:00:01"}};
  const Result<NetConf> with_runtime = Parse(conf);
  ASSERT_TRUE(with_runtime.ok());
  EXPECT_EQ(*SelectMac(*with_runtime, args_mac), "0a:00:00:00:00:01");
  const Result<NetConf> none = Parse(BaseConf());
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(SelectMac(*none, {})->has_value());
  EXPECT_TRUE(FailsWith(SelectMac(*config_only, {{"MAC", "01:00:00:00:00:01"}}), 4,
                        "CNI_ARGS MAC \"01:00:00:00:00:01\": must be a unicast address"));
}

// ---------------------------------------------------------------------------------------
// Results

// A result that uses every field.
CniResult FullResult() {
  CniResult r;
  r.interfaces.push_back({"net1", "0a:00:00:00:00:01", "/var/run/netns/cni-1", 9000,
                          std::string("/run/x.sock"), std::string("0000:3b:00.2")});
  r.ips.push_back({"10.1.2.3/24", std::string("10.1.2.1"), 0});
  r.ips.push_back({"fd00::3/64", std::nullopt, 0});
  r.routes.push_back({"0.0.0.0/0", std::string("10.1.2.1"), 1500, 1460, 100, 200, 0});
  r.routes.push_back({"fd01::/64", std::nullopt, {}, {}, {}, {}, {}});
  r.dns.nameservers = {"10.1.2.1"};
  r.dns.domain = "cluster.local";
  r.dns.search = {"svc.cluster.local"};
  r.dns.options = {"ndots:5"};
  return r;
}

TEST(CniResultTest, ChainResultAppendsOursAfterPrev) {
  CniResult prev;
  prev.interfaces.push_back(
      {"eth0", "", "/var/run/netns/x", std::nullopt, std::nullopt, std::nullopt});
  prev.ips.push_back({"10.0.0.5/24", std::nullopt, 0});
  CniResult ours = FullResult();  // net1 with two ips on interface 0, dns set
  const CniResult chained = ChainResult(prev, ours);
  ASSERT_EQ(chained.interfaces.size(), 2u);
  EXPECT_EQ(chained.interfaces[1].name, "net1");
  ASSERT_EQ(chained.ips.size(), 3u);
  EXPECT_EQ(chained.ips[0].interface, 0);
  EXPECT_EQ(chained.ips[1].interface, 1);
  EXPECT_EQ(chained.ips[2].interface, 1);
  EXPECT_EQ(chained.routes.size(), ours.routes.size());
  EXPECT_EQ(chained.dns.nameservers, ours.dns.nameservers) << "prev had no dns";
  prev.dns.nameservers = {"10.0.0.10"};
  EXPECT_EQ(ChainResult(prev, ours).dns.nameservers, std::vector<std::string>{"10.0.0.10"});
}

TEST(CniResultTest, LegacyShapes) {
  for (const char* version : {"0.3.0", "0.3.1", "0.4.0"}) {
    const Result<json> out = ToJson(FullResult(), version);
    ASSERT_TRUE(out.ok()) << version;
    EXPECT_EQ(*out, json::parse(R"({
      "cniVersion": ")" + std::string(version) +
                                R"(",
      "interfaces": [{"name":"net1","mac":"0a:00:00:00:00:01","sandbox":"/var/run/netns/cni-1"}],
      "ips": [{"version":"4","address":"10.1.2.3/24","gateway":"10.1.2.1","interface":0},
              {"version":"6","address":"fd00::3/64","interface":0}],
      "routes": [{"dst":"0.0.0.0/0","gw":"10.1.2.1"},{"dst":"fd01::/64"}],
      "dns": {"nameservers":["10.1.2.1"],"domain":"cluster.local",
              "search":["svc.cluster.local"],"options":["ndots:5"]}
    })"))
        << version;
  }
}

TEST(CniResultTest, Version100Shape) {
  const Result<json> out = ToJson(FullResult(), "1.0.0");
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(*out, json::parse(R"({
    "cniVersion": "1.0.0",
    "interfaces": [{"name":"net1","mac":"0a:00:00:00:00:01","sandbox":"/var/run/netns/cni-1"}],
    "ips": [{"address":"10.1.2.3/24","gateway":"10.1.2.1","interface":0},
            {"address":"fd00::3/64","interface":0}],
    "routes": [{"dst":"0.0.0.0/0","gw":"10.1.2.1"},{"dst":"fd01::/64"}],
    "dns": {"nameservers":["10.1.2.1"],"domain":"cluster.local",
            "search":["svc.cluster.local"],"options":["ndots:5"]}
  })"));
}

TEST(CniResultTest, Version110Shape) {
  const Result<json> out = ToJson(FullResult(), "1.1.0");
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(*out, json::parse(R"({
    "cniVersion": "1.1.0",
    "interfaces": [{"name":"net1","mac":"0a:00:00:00:00:01","sandbox":"/var/run/netns/cni-1",
                    "mtu":9000,"socketPath":"/run/x.sock","pciID":"0000:3b:00.2"}],
    "ips": [{"address":"10.1.2.3/24","gateway":"10.1.2.1","interface":0},
            {"address":"fd00::3/64","interface":0}],
    "routes": [{"dst":"0.0.0.0/0","gw":"10.1.2.1","mtu":1500,"advmss":1460,"priority":100,
                "table":200,"scope":0},
               {"dst":"fd01::/64"}],
    "dns": {"nameservers":["10.1.2.1"],"domain":"cluster.local",
            "search":["svc.cluster.local"],"options":["ndots:5"]}
  })"));
}

TEST(CniResultTest, EmptyPartsAreOmittedButDnsStays) {
  CniResult r;
  r.interfaces.push_back({"net1", "", "", std::nullopt, std::nullopt, std::nullopt});
  const Result<json> out = ToJson(r, "1.1.0");
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(*out, json::parse(R"({"cniVersion":"1.1.0","interfaces":[{"name":"net1"}],
                                  "dns":{}})"));
  EXPECT_EQ(*ToJson(CniResult{}, "0.3.1"), json::parse(R"({"cniVersion":"0.3.1","dns":{}})"));
}

TEST(CniResultTest, UnsupportedOutputVersion) {
  EXPECT_TRUE(FailsWith(ToJson(FullResult(), "0.2.0"), 1, "unsupported cniVersion \"0.2.0\""));
  EXPECT_TRUE(FailsWith(ToJson(FullResult(), ""), 1, "unsupported cniVersion"));
}

TEST(CniResultTest, ParsesHostLocalOutput) {
  // host-local's output at 0.3.1 (0.4.0 is identical) and at 1.0.0.
  const Result<CniResult> legacy = ParseResultText(R"({
    "cniVersion": "0.3.1",
    "ips": [{"version": "4", "address": "10.56.217.7/24", "gateway": "10.56.217.1"}],
    "routes": [{"dst": "0.0.0.0/0"}],
    "dns": {}
  })");
  ASSERT_TRUE(legacy.ok()) << legacy.status().details();
  EXPECT_EQ(legacy->cni_version, "0.3.1");
  ASSERT_EQ(legacy->ips.size(), 1u);
  EXPECT_EQ(legacy->ips[0].address, "10.56.217.7/24");
  EXPECT_EQ(legacy->ips[0].gateway, "10.56.217.1");
  EXPECT_FALSE(legacy->ips[0].interface);
  ASSERT_EQ(legacy->routes.size(), 1u);
  EXPECT_EQ(legacy->routes[0].dst, "0.0.0.0/0");
  EXPECT_FALSE(legacy->routes[0].gw);
  EXPECT_TRUE(legacy->interfaces.empty());

  const Result<CniResult> current = ParseResultText(R"({
    "cniVersion": "1.0.0",
    "ips": [{"address": "fd00::7/64", "gateway": "fd00::1"}],
    "dns": {"nameservers": ["fd00::53"], "search": ["a.b"]}
  })");
  ASSERT_TRUE(current.ok()) << current.status().details();
  EXPECT_EQ(current->ips[0].address, "fd00::7/64");
  EXPECT_EQ(current->dns.nameservers, std::vector<std::string>{"fd00::53"});
  EXPECT_EQ(current->dns.search, std::vector<std::string>{"a.b"});
  // A stale "version" in a 1.0.0 result is ignored, as the Go library does.
  EXPECT_TRUE(ParseResultText(R"({"cniVersion":"1.0.0",
      "ips":[{"version":"6","address":"10.0.0.1/8"}]})")
                  .ok());
}

TEST(CniResultTest, RoundTripsEveryVersion) {
  for (const std::string& version : SupportedVersions()) {
    const Result<json> out = ToJson(FullResult(), version);
    ASSERT_TRUE(out.ok());
    const Result<CniResult> back = ParseResult(*out);
    ASSERT_TRUE(back.ok()) << version << ": " << back.status().details();
    EXPECT_EQ(back->cni_version, version);
    EXPECT_EQ(*ToJson(*back, version), *out) << version;
  }
  const Result<CniResult> full = ParseResult(*ToJson(FullResult(), "1.1.0"));
  ASSERT_TRUE(full.ok());
  EXPECT_EQ(full->interfaces[0].pci_id, "0000:3b:00.2");
  EXPECT_EQ(full->interfaces[0].mtu, 9000);
  EXPECT_EQ(full->interfaces[0].socket_path, "/run/x.sock");
  EXPECT_EQ(full->routes[0].table, 200);
  EXPECT_EQ(full->routes[0].scope, 0);
}

TEST(CniResultTest, MalformedResultsAreCode6) {
  const struct {
    const char* text;
    int code;
    const char* detail;
  } cases[] = {
      {"{", 6, "cannot decode CNI result"},
      {"[]", 6, "must be a JSON object, got array"},
      {R"({"ips":[]})", 6, "cniVersion: required"},
      {R"({"cniVersion":"0.2.0","ip4":{"ip":"10.0.0.1/8"}})", 1, "unsupported cniVersion"},
      {R"({"cniVersion":"1.0.0","ips":[{"address":"10.1.2.3"}]})", 6,
       "ips[0].address: must be an address with a prefix length, got \"10.1.2.3\""},
      {R"({"cniVersion":"1.0.0","ips":[{"address":"10.1.2.3/33"}]})", 6, "ips[0].address"},
      {R"({"cniVersion":"1.0.0","ips":[{"gateway":"10.1.2.1"}]})", 6, "ips[0].address: required"},
      {R"({"cniVersion":"1.0.0","ips":[{"address":"10.1.2.3/24","gateway":"x"}]})", 6,
       "ips[0].gateway: must be an IP address, got \"x\""},
      {R"({"cniVersion":"1.0.0","ips":[{"address":"10.1.2.3/24","interface":-1}]})", 6,
       "ips[0].interface: must be 0..2147483647, got -1"},
      {R"({"cniVersion":"1.0.0","interfaces":[{"name":"a"}],
           "ips":[{"address":"10.1.2.3/24","interface":1}]})",
       6, "ips[0].interface: 1 is not an index into interfaces (1 entries)"},
      {R"({"cniVersion":"0.4.0","ips":[{"version":"6","address":"10.1.2.3/24"}]})", 6,
       "ips[0].version: \"6\" does not match the address \"10.1.2.3/24\""},
      {R"({"cniVersion":"0.4.0","ips":[{"version":"5","address":"10.1.2.3/24"}]})", 6,
       "ips[0].version: must be \"4\" or \"6\", got \"5\""},
      {R"({"cniVersion":"1.0.0","interfaces":{}})", 6, "interfaces: must be an array, got object"},
      {R"({"cniVersion":"1.0.0","interfaces":[{"mac":"x"}]})", 6, "interfaces[0].name: required"},
      {R"({"cniVersion":"1.0.0","ips":["10.1.2.3/24"]})", 6,
       "ips[0]: must be an object, got string \"10.1.2.3/24\""},
      {R"({"cniVersion":"1.0.0","routes":[{"dst":"default"}]})", 6,
       "routes[0].dst: must be an address with a prefix length, got \"default\""},
      {R"({"cniVersion":"1.1.0","routes":[{"dst":"0.0.0.0/0","scope":256}]})", 6,
       "routes[0].scope: must be 0..255, got 256"},
      {R"({"cniVersion":"1.0.0","dns":{"nameservers":"10.0.0.1"}})", 6,
       "dns.nameservers: must be an array, got string \"10.0.0.1\""},
      {R"({"cniVersion":"1.0.0","dns":{"search":["a",1]}})", 6,
       "dns.search[1]: must be a string, got number 1"},
  };
  for (const auto& c : cases) {
    EXPECT_TRUE(FailsWith(ParseResultText(c.text), c.code, c.detail)) << c.text;
  }
}

TEST(CniResultTest, MergesIpamIntoOurInterface) {
  CniResult ours;
  ours.interfaces.push_back({"net1", "0a:00:00:00:00:01", "/var/run/netns/cni-1", std::nullopt,
                             std::nullopt, std::string("0000:3b:00.2")});
  const Result<CniResult> ipam = ParseResultText(R"({
    "cniVersion": "1.0.0",
    "ips": [{"address": "10.1.2.3/24", "gateway": "10.1.2.1"},
            {"address": "fd00::3/64", "interface": 4}],
    "routes": [{"dst": "0.0.0.0/0", "gw": "10.1.2.1"}],
    "dns": {"nameservers": ["10.1.2.1"]}
  })");
  ASSERT_TRUE(ipam.ok());
  const CniResult merged = MergeIpamResult(ours, *ipam);
  ASSERT_EQ(merged.interfaces.size(), 1u);
  ASSERT_EQ(merged.ips.size(), 2u);
  EXPECT_EQ(merged.ips[0].interface, 0);
  EXPECT_EQ(merged.ips[1].interface, 0);
  EXPECT_EQ(merged.ips[0].gateway, "10.1.2.1");
  ASSERT_EQ(merged.routes.size(), 1u);
  EXPECT_EQ(merged.dns.nameservers, std::vector<std::string>{"10.1.2.1"});
  EXPECT_EQ(*ToJson(merged, "1.1.0"), json::parse(R"({
    "cniVersion": "1.1.0",
    "interfaces": [{"name":"net1","mac":"0a:00:00:00:00:01","sandbox":"/var/run/netns/cni-1",
                    "pciID":"0000:3b:00.2"}],
    "ips": [{"address":"10.1.2.3/24","gateway":"10.1.2.1","interface":0},
            {"address":"fd00::3/64","interface":0}],
    "routes": [{"dst":"0.0.0.0/0","gw":"10.1.2.1"}],
    "dns": {"nameservers":["10.1.2.1"]}
  })"));
  // Our own dns wins over IPAM's.
  ours.dns.domain = "example.org";
  EXPECT_TRUE(MergeIpamResult(ours, *ipam).dns.nameservers.empty());
  EXPECT_EQ(MergeIpamResult(ours, *ipam).dns.domain, "example.org");
}

// ---------------------------------------------------------------------------------------
// JSON field helpers (config/json_fields.h, the reader the device plugin's configuration
// uses too)

TEST(CniJsonFieldsTest, PathsAndDescriptions) {
  using config::DescribeValue;
  EXPECT_EQ(config::JoinKey("", "vlan"), "vlan");
  EXPECT_EQ(config::JoinKey("ipam", "type"), "ipam.type");
  EXPECT_EQ(config::JoinIndex("ips", 2), "ips[2]");
  // A top-level key is written as it is; below the top, one that is not identifier-like is
  // quoted (as in the device plugin's "$.configList[0]" paths).
  EXPECT_EQ(config::JoinKey("", "cni.dev/valid-attachments"), "cni.dev/valid-attachments");
  EXPECT_EQ(config::JoinKey("runtimeConfig", "a b"), "runtimeConfig[\"a b\"]");
  EXPECT_EQ(DescribeValue(json("5")), "string \"5\"");
  EXPECT_EQ(DescribeValue(json(5.5)), "number 5.5");
  EXPECT_EQ(DescribeValue(json(true)), "boolean true");
  EXPECT_EQ(DescribeValue(json(nullptr)), "null");
  EXPECT_EQ(DescribeValue(json::object()), "object");
  EXPECT_EQ(DescribeValue(json::array()), "array");
  EXPECT_EQ(DescribeValue(json(std::string(200, 'a'))).size(),
            std::string("string \"").size() + 80 + 4);
}

}  // namespace
}  // namespace hcashare::cni
