// Tests for the CNI protocol layer (cni/), what the plugin prints: errors and their JSON,
// and the result model in every supported version's shape.
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
// Results

// A result that uses every field.
CniResult FullResult() {
  CniResult r;
  r.interfaces.push_back({"net1", "0a:00:00:00:00:01", "/var/run/netns/cni-1", 9000,
                          std::string("/run/x.sock"), std::string("0000:3b:00.2"), std::nullopt});
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
      {"eth0", "", "/var/run/netns/x", std::nullopt, std::nullopt, std::nullopt, std::nullopt});
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

// hcashare's gpuAffinity (the GPU a device was chosen for) rides on the interface in every
// version; the spec's fields are unchanged by it.
TEST(CniResultTest, GpuAffinityInEveryVersion) {
  CniResult r;
  ResultInterface iface;
  iface.name = "net1";
  iface.gpu_affinity = json{{"gpu", "GPU-1"}, {"gpuPci", "0000:18:00.0"}, {"path", "PIX"}};
  r.interfaces.push_back(iface);
  for (const char* version : {"0.3.1", "0.4.0", "1.0.0", "1.1.0"}) {
    const Result<json> out = ToJson(r, version);
    ASSERT_TRUE(out.ok()) << version;
    EXPECT_EQ((*out)["interfaces"][0]["gpuAffinity"]["path"], "PIX") << version;
  }
}

TEST(CniResultTest, EmptyPartsAreOmittedButDnsStays) {
  CniResult r;
  r.interfaces.push_back({"net1", "", "", std::nullopt, std::nullopt, std::nullopt, std::nullopt});
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
                             std::nullopt, std::string("0000:3b:00.2"), std::nullopt});
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

}  // namespace
}  // namespace hcashare::cni
