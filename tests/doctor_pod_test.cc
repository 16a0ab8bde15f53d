// `hcashare doctor --pod`: CheckPodNetworks on pods with and without what their networks
// need (a map of NADs), and the command against the fake API server (a kubeconfig, the pod
// and its NADs over HTTPS): exit 1 with what is missing, 0 when all is requested, 2 when the
// pod cannot be read.
#include "doctor/pod_networks.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/process.h"
#include "common/temp_dir.h"
#include "testing/fake_apiserver.h"
#include "tests/injector_test_util.h"
#include "tests/kube_test_util.h"
#include "tests/test_util.h"

namespace hcashare {
namespace {

using doctor::CheckResult;
using doctor::Verdict;
using ::testing::HasSubstr;
using json = nlohmann::json;

json TrainerPod(const std::string& networks, const json& resources = json()) {
  json c = {{"name", "main"}, {"image", "x"}};
  if (!resources.is_null()) c["resources"] = resources;
  json pod = {{"apiVersion", "v1"},
              {"kind", "Pod"},
              {"metadata", {{"name", "trainer"}, {"namespace", "team-a"}}},
              {"spec", {{"containers", json::array({c})}}}};
  if (!networks.empty())
    pod["metadata"]["annotations"] = {{"k8s.v1.cni.cncf.io/networks", networks}};
  return pod;
}

std::string Summary(const std::vector<CheckResult>& results) {
  std::string out;
  for (const auto& r : results) {
    out += std::string(doctor::VerdictName(r.verdict)) + " " + r.name + ": " + r.reason + "\n";
  }
  return out;
}

class CheckPodNetworksTest : public ::testing::Test {
 protected:
  void SetUp() override {
    nads_.Add("team-a", "rdma-a", "rdma/vfs_a").Add("shared", "rdma-b", "rdma/vfs_b");
  }
  testing::MapNadLookup nads_;
};

TEST_F(CheckPodNetworksTest, NoNetworksIsOnePass) {
  auto r = doctor::CheckPodNetworks(TrainerPod(""), nads_);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].verdict, Verdict::kPass);
  EXPECT_THAT(r[0].reason, HasSubstr("names no networks"));
}

TEST_F(CheckPodNetworksTest, MissingRequestsFailWithWhatTheInjectorWouldSet) {
  auto r = doctor::CheckPodNetworks(
      TrainerPod("rdma-a, rdma-a@net2, shared/rdma-b",
                 {{"requests", {{"rdma/vfs_a", "1"}}}, {"limits", {{"rdma/vfs_a", "1"}}}}),
      nads_);
  ASSERT_EQ(r.size(), 3u) << Summary(r);
  EXPECT_EQ(r[0].verdict, Verdict::kPass);
  EXPECT_EQ(r[1].verdict, Verdict::kFail);
  EXPECT_THAT(r[1].reason, HasSubstr("container main requests rdma/vfs_a: 1, limits 1; "
                                     "its networks need 2"));
  EXPECT_THAT(r[1].fix, HasSubstr("hcashare-webhook would set requests and limits to 2"));
  EXPECT_EQ(r[2].verdict, Verdict::kFail);
  EXPECT_THAT(r[2].reason, HasSubstr("rdma/vfs_b: none, limits none; its networks need 1"));
  EXPECT_TRUE(doctor::AnyFailed(r));
}

TEST_F(CheckPodNetworksTest, LimitsMissingAloneIsAFail) {
  auto r =
      doctor::CheckPodNetworks(TrainerPod("rdma-a", {{"requests", {{"rdma/vfs_a", "1"}}}}), nads_);
  ASSERT_EQ(r.size(), 2u) << Summary(r);
  EXPECT_EQ(r[1].verdict, Verdict::kFail);
  EXPECT_THAT(r[1].reason, HasSubstr("requests rdma/vfs_a: 1, limits none"));
}

TEST_F(CheckPodNetworksTest, EverythingRequestedPasses) {
  auto r = doctor::CheckPodNetworks(
      TrainerPod("rdma-a, shared/rdma-b", {{"requests", {{"rdma/vfs_a", "1"}, {"rdma/vfs_b", "2"}}},
                                           {"limits", {{"rdma/vfs_a", "1"}, {"rdma/vfs_b", "2"}}}}),
      nads_);
  ASSERT_EQ(r.size(), 2u) << Summary(r);
  EXPECT_EQ(r[1].verdict, Verdict::kPass);
  EXPECT_EQ(r[1].reason,
            "every network's resource is requested (main: rdma/vfs_a 1, main: rdma/vfs_b 2)");
  EXPECT_FALSE(doctor::AnyFailed(r));
}

TEST_F(CheckPodNetworksTest, MissingNadFailsNamingIt) {
  auto r = doctor::CheckPodNetworks(TrainerPod("rdma-a, gone"), nads_);
  ASSERT_EQ(r.size(), 1u) << Summary(r);
  EXPECT_EQ(r[0].verdict, Verdict::kFail);
  EXPECT_THAT(r[0].reason, HasSubstr("team-a/gone"));
}

// A network served by DRA needs no request: a pod with its claim passes; one without a claim
// gets the webhook's warning.
TEST_F(CheckPodNetworksTest, DraNetworkNeedsAClaimNotARequest) {
  nads_.Set("team-a", "vf-dra", injector::NadInfo{"rdma/hca_vfs", std::nullopt, "dra"});
  json pod = TrainerPod("vf-dra");
  pod["spec"]["resourceClaims"] = json::array({{{"name", "rdma"}, {"resourceClaimName", "c"}}});
  auto r = doctor::CheckPodNetworks(pod, nads_);
  ASSERT_EQ(r.size(), 2u) << Summary(r);
  EXPECT_EQ(r[1].verdict, Verdict::kPass) << Summary(r);
  EXPECT_FALSE(doctor::AnyFailed(r));

  r = doctor::CheckPodNetworks(TrainerPod("vf-dra"), nads_);
  ASSERT_EQ(r.size(), 3u) << Summary(r);
  EXPECT_EQ(r[2].verdict, Verdict::kWarn);
  EXPECT_THAT(r[2].reason, HasSubstr("team-a/vf-dra (rdma/hca_vfs)"));
  EXPECT_THAT(r[2].reason, HasSubstr("spec.resourceClaims"));
}

// The command: the pod and NADs from the fake API server through a kubeconfig.
class DoctorPodCommandTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto api = fake::FakeApiServer::Start(&testing::SharedPki());
    ASSERT_TRUE(api.ok()) << api.status().ToString();
    api_ = std::move(api).value();
    api_->Seed("/apis/k8s.cni.cncf.io/v1/namespaces/team-a/network-attachment-definitions",
               {{"metadata",
                 {{"name", "rdma-a"},
                  {"annotations", {{"k8s.v1.cni.cncf.io/resourceName", "rdma/vfs_a"}}}}}});
    testing::WriteText(dir_.path() + "/kubeconfig",
                       testing::KubeconfigFor(api_->url(), testing::SharedPki().ca_pem()));
  }

  ExecOutput Doctor(const std::string& pod) {
    const std::string bin = testing::BinDir() + "/hcashare";
    auto out =
        Execute(bin, {bin, "doctor", "--pod", pod, "--kubeconfig", dir_.path() + "/kubeconfig"}, {},
                "", std::chrono::milliseconds(20000));
    EXPECT_TRUE(out.ok()) << out.status().ToString();
    return out.ok() ? *out : ExecOutput{};
  }

  TempDir dir_;
  std::unique_ptr<fake::FakeApiServer> api_;
};

TEST_F(DoctorPodCommandTest, SaysWhatIsMissingAndWhenAllIsThere) {
  api_->Seed("/api/v1/namespaces/team-a/pods", TrainerPod("rdma-a"));
  ExecOutput missing = Doctor("team-a/trainer");
  EXPECT_EQ(missing.exit_code, 1) << missing.out << missing.err;
  EXPECT_THAT(missing.out, HasSubstr("FAIL"));
  EXPECT_THAT(missing.out, HasSubstr("its networks need 1"));

  json ok = TrainerPod("rdma-a",
                       {{"requests", {{"rdma/vfs_a", "1"}}}, {"limits", {{"rdma/vfs_a", "1"}}}});
  ok["metadata"]["name"] = "ok";
  api_->Seed("/api/v1/namespaces/team-a/pods", ok);
  ExecOutput fine = Doctor("team-a/ok");
  EXPECT_EQ(fine.exit_code, 0) << fine.out << fine.err;
  EXPECT_THAT(fine.out, HasSubstr("every network's resource is requested"));
}

TEST_F(DoctorPodCommandTest, UnreadablePodIsExit2) {
  ExecOutput absent = Doctor("team-a/absent");
  EXPECT_EQ(absent.exit_code, 2);
  EXPECT_THAT(absent.err, HasSubstr("team-a/absent"));
  ExecOutput bad = Doctor("no-slash");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_THAT(bad.err, HasSubstr("NAMESPACE/NAME"));
}

}  // namespace
}  // namespace hcashare
