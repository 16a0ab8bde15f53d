// dra/claim_status.h against the fake API server over HTTPS: the CNI's network status files
// become each claim's status.devices[].networkData by server-side apply, other managers'
// entries kept; nothing is sent while nothing changes; a removed file removes its entry; a
// claim gone (404), a write refused for its content (422) or by RBAC (403) are handled
// without a request storm. The files are root's, as on a node (root_owned reads).
#include "dra/claim_status.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "common/temp_dir.h"
#include "tests/kube_test_util.h"

namespace hcashare::dra {
namespace {

using json = nlohmann::json;
using ::testing::HasSubstr;

constexpr char kDriver[] = "rdma.hcashare.io";
constexpr char kClaims[] = "/apis/resource.k8s.io/v1/namespaces/ml/resourceclaims";

json Result(const std::string& driver, const std::string& device) {
  return {{"request", "nic"}, {"driver", driver}, {"pool", "node-a"}, {"device", device}};
}

class ClaimStatusTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "the status files must be root's";
    api_ = testing::StartFakeApiServer();
    ASSERT_NE(api_, nullptr);
    client_ = testing::UnlimitedClient(*api_);
    ASSERT_NE(client_, nullptr);
    api_->Seed(kClaims, {{"apiVersion", "resource.k8s.io/v1"},
                         {"kind", "ResourceClaim"},
                         {"metadata", {{"name", "rails"}}},
                         {"status",
                          {{"allocation",
                            {{"devices",
                              {{"results",
                                {Result(kDriver, "d0"), Result(kDriver, "d1"),
                                 Result("gpu.nvidia.com", "gpu-0")}}}}}}}}});
    uid_ = api_->Get(kClaims, "rails")["metadata"]["uid"].get<std::string>();
    ClaimStatusOptions o;
    o.dir = dir_.path() + "/network";
    o.driver = kDriver;
    writer_ = std::make_unique<ClaimStatusWriter>(o, client_.get());
  }

  std::string PathOf(const std::string& device) const {
    return NetworkStatusPath(dir_.path() + "/network", uid_, device);
  }
  void WriteFile(const std::string& device, const std::string& ifname,
                 const std::string& claim = "rails") {
    DeviceNetworkStatus s;
    s.claim_uid = uid_;
    s.claim_namespace = "ml";
    s.claim_name = claim;
    s.pool = "node-a";
    s.device = device;
    s.interface_name = ifname;
    s.hardware_address = "02:00:00:00:00:0" + device.substr(1);
    if (device == "d0") s.ips = {"10.0.0.5/24", "fd00::5/64"};
    ASSERT_TRUE(WriteNetworkStatus(PathOf(device), s).ok());
  }
  json Devices() { return api_->Get(kClaims, "rails")["status"].value("devices", json::array()); }
  size_t StatusPatches() {
    size_t n = 0;
    for (const auto& r : api_->Requests()) n += r.method == "PATCH";
    return n;
  }

  TempDir dir_;
  std::unique_ptr<fake::FakeApiServer> api_;
  std::unique_ptr<kube::RestClient> client_;
  std::unique_ptr<ClaimStatusWriter> writer_;
  std::string uid_;
};

TEST_F(ClaimStatusTest, EachDevicesNetworkDataIsAppliedAndOtherManagersKept) {
  // The GPU driver's own entry, applied by its own manager first.
  kube::Request gpu;
  gpu.verb = kube::Verb::kPatch;
  gpu.path = std::string(kClaims) + "/rails/status?fieldManager=gpu.nvidia.com";
  gpu.content_type = "application/apply-patch+yaml";
  gpu.body = json({{"apiVersion", "resource.k8s.io/v1"},
                   {"kind", "ResourceClaim"},
                   {"metadata", {{"name", "rails"}, {"namespace", "ml"}}},
                   {"status",
                    {{"devices",
                      {{{"driver", "gpu.nvidia.com"}, {"pool", "node-a"}, {"device", "gpu-0"}}}}}}})
                 .dump();
  ASSERT_TRUE(client_->Call(gpu).ok());

  WriteFile("d0", "rdma0");
  WriteFile("d1", "rdma1");
  api_->ClearRequests();
  ClaimStatusRound r = writer_->Sync();
  EXPECT_EQ(r.claims, 1u);
  EXPECT_EQ(r.applied, 1u);
  const auto requests = api_->Requests();
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_THAT(requests[0].target, HasSubstr("/resourceclaims/rails/status?fieldManager=" +
                                            std::string(kDriver) + "&force=true"));
  json devices = Devices();
  ASSERT_EQ(devices.size(), 3u) << devices.dump();
  EXPECT_EQ(devices[0]["driver"], "gpu.nvidia.com");
  EXPECT_EQ(devices[1]["device"], "d0");
  EXPECT_EQ(devices[1]["networkData"], json({{"interfaceName", "rdma0"},
                                             {"hardwareAddress", "02:00:00:00:00:00"},
                                             {"ips", {"10.0.0.5/24", "fd00::5/64"}}}));
  EXPECT_EQ(devices[2]["networkData"]["interfaceName"], "rdma1");
  EXPECT_EQ(writer_->applied_total(), 1u);

  // Unchanged: nothing sent.
  api_->ClearRequests();
  EXPECT_EQ(writer_->Sync().applied, 0u);
  EXPECT_EQ(StatusPatches(), 0u);

  // DEL of one device removes its file: its entry goes, the others stay.
  std::filesystem::remove(PathOf("d1"));
  EXPECT_EQ(writer_->Sync().applied, 1u);
  devices = Devices();
  ASSERT_EQ(devices.size(), 2u) << devices.dump();
  EXPECT_EQ(devices[1]["device"], "d0");
  // And the last: only the GPU driver's entry is left, and nothing more is sent.
  std::filesystem::remove(PathOf("d0"));
  EXPECT_EQ(writer_->Sync().applied, 1u);
  devices = Devices();
  ASSERT_EQ(devices.size(), 1u) << devices.dump();
  EXPECT_EQ(devices[0]["driver"], "gpu.nvidia.com");
  api_->ClearRequests();
  writer_->Sync();
  EXPECT_EQ(StatusPatches(), 0u);
}

TEST_F(ClaimStatusTest, AClaimGoneOrADeviceNotAllocatedIsNotSentAgainUntilItsFilesChange) {
  WriteFile("d9", "rdma9");  // not allocated in the claim: 422
  ClaimStatusRound r = writer_->Sync();
  EXPECT_EQ(r.failed, 1u);
  api_->ClearRequests();
  writer_->Sync();
  EXPECT_EQ(StatusPatches(), 0u);
  std::filesystem::remove(PathOf("d9"));
  WriteFile("d0", "rdma0");
  EXPECT_EQ(writer_->Sync().applied, 1u);
  // The claim is deleted (its pod went): one 404, then silence.
  ASSERT_TRUE(api_->Delete(kClaims, "rails"));
  WriteFile("d0", "renamed0");
  EXPECT_EQ(writer_->Sync().failed, 1u);
  api_->ClearRequests();
  writer_->Sync();
  writer_->Sync();
  EXPECT_EQ(StatusPatches(), 0u);
}

TEST_F(ClaimStatusTest, ARefusalByRbacIsReportedAndRetried) {
  WriteFile("d0", "rdma0");
  api_->InjectError(403, "Forbidden", 1);
  EXPECT_EQ(writer_->Sync().failed, 1u);
  EXPECT_TRUE(writer_->refused());
  EXPECT_EQ(writer_->Sync().applied, 1u);
  EXPECT_FALSE(writer_->refused());
  EXPECT_EQ(Devices().size(), 1u);
}

TEST_F(ClaimStatusTest, UnreadableFilesAndBadClaimNamesAreSkipped) {
  WriteFile("d0", "rdma0");
  const std::string odd = dir_.path() + "/network/odd.json";
  { std::ofstream(odd) << "{\"claimUID\": 5}"; }
  WriteFile("d1", "rdma1", "Bad/Name");  // a path component of its own: never sent
  EXPECT_EQ(writer_->Sync().applied, 1u);
  ASSERT_EQ(Devices().size(), 1u);
  EXPECT_EQ(Devices()[0]["device"], "d0");
}

// The request checked by hand on a real kube-apiserver v1.34.9 (tests/by-hand/
// dra-claim-status.sh; its outcomes in tests/data/dra-claim-status/recorded.json): the
// writer still sends exactly it, and the fake answers the recorded refusals in the same words.
TEST_F(ClaimStatusTest, TheRequestIsTheOneCheckedOnARealApiServer) {
  std::ifstream in(std::string(HCASHARE_SOURCE_DIR) + "/tests/data/dra-claim-status/recorded.json");
  const json recorded = json::parse(in, nullptr, false);
  ASSERT_TRUE(recorded.is_object());
  DeviceNetworkStatus s;
  s.claim_uid = uid_;
  s.claim_namespace = "ml";
  s.claim_name = "rails";
  s.pool = "node-a";
  s.device = "pci-0000-5e-00-2";
  s.interface_name = "rdma0";
  s.hardware_address = "02:00:00:00:00:01";
  s.ips = {"10.0.0.5/24", "fd00::5/64"};
  ASSERT_TRUE(WriteNetworkStatus(PathOf(s.device), s).ok());
  api_->ClearRequests();
  writer_->Sync();  // the fake answers 422: the device is not allocated in its claim
  const auto requests = api_->Requests();
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_EQ(requests[0].target, recorded["target"]);
  EXPECT_EQ(requests[0].content_type, recorded["contentType"]);
  EXPECT_EQ(json::parse(requests[0].body), recorded["body"]);
  // The fake's refusals, in the real server's words.
  std::string outcomes;
  for (const auto& line : recorded["outcomes"]) outcomes += line.get<std::string>() + "\n";
  kube::Request bad_ip;
  bad_ip.verb = kube::Verb::kPatch;
  bad_ip.path = std::string(kClaims) + "/rails/status?fieldManager=" + kDriver + "&force=true";
  bad_ip.content_type = "application/apply-patch+yaml";
  json body = recorded["body"];
  body["status"]["devices"][0]["device"] = "d0";
  body["status"]["devices"][0]["networkData"] = {{"ips", {"10.0.0.5"}}};
  bad_ip.body = body.dump();
  auto r = client_->Call(bad_ip);
  ASSERT_FALSE(r.ok());
  const std::string said = r.status().message();
  const std::string real =
      "networkData.ips[0]: Invalid value: \"10.0.0.5\": must be a valid address in CIDR form, "
      "(e.g. 10.9.8.7/24 or 2001:db8::1/64)";
  EXPECT_THAT(said, HasSubstr(real));
  EXPECT_THAT(outcomes, HasSubstr(real));
  EXPECT_THAT(outcomes, HasSubstr("must be an allocated device in the claim"));
}

}  // namespace
}  // namespace hcashare::dra
