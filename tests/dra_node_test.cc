// The DRA driver's kubelet side over real unix sockets: NodeServer (registration, DRAPlugin
// v1 and v1beta1, the health stream) with a Preparer reading ResourceClaims from the fake API
// server, driven by the fake DRA kubelet (testing/fake_dra_kubelet.h).
#include <sys/stat.h>

#include <ctime>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "common/temp_dir.h"
#include "dra/api/dra_health_v1alpha1.pb.h"
#include "dra/cdi_claim.h"
#include "dra/node_server.h"
#include "dra/prepare.h"
#include "interop/dra_checkpoint.h"
#include "kubelet/api/podresources_v1alpha1.pb.h"
#include "testing/cdi_runtime.h"
#include "testing/fake_dra_kubelet.h"
#include "tests/kube_test_util.h"
#include "tests/test_util.h"

namespace hcashare::dra {
namespace {

using fake::DraApi;
using fake::FakeClaim;
using nlohmann::json;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr const char* kDriver = "rdma.hcashare.io";
constexpr const char* kPool = "node-a";
constexpr const char* kClaims = "/apis/resource.k8s.io/v1/namespaces/ml/resourceclaims";
constexpr const char* kVf0 = "pci-0000-3b-00-2";
constexpr const char* kVf1 = "pci-0000-3b-00-3";
constexpr const char* kShared = "shared-0000-3a-00-0";

bool Exists(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0;
}

json AllocResult(const std::string& request, const std::string& driver, const std::string& pool,
                 const std::string& device) {
  return {{"request", request}, {"driver", driver}, {"pool", pool}, {"device", device}};
}

json ClaimObject(const std::string& name, const json& results) {
  return {{"apiVersion", "resource.k8s.io/v1"},
          {"kind", "ResourceClaim"},
          {"metadata", {{"name", name}}},
          {"spec", {{"devices", {{"requests", json::array()}}}}},
          {"status", {{"allocation", {{"devices", {{"results", results}}}}}}}};
}

class DraNodeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    api_ = testing::StartFakeApiServer();
    ASSERT_NE(api_, nullptr);
    client_ = testing::UnlimitedClient(*api_);
    ASSERT_NE(client_, nullptr);
    root_ = tmp_.path() + "/kubelet";
    cdi_dir_ = tmp_.path() + "/cdi";
    kubelet_ = std::make_unique<fake::FakeDraKubelet>(root_);
    devices_[kVf0] = {kVf0,
                      "rdma/hca_vf",
                      "0000:3b:00.2",
                      {"mlx5_2"},
                      {"/dev/infiniband/uverbs2", "/dev/infiniband/rdma_cm",
                       "/dev/infiniband/umad2", "/dev/infiniband/issm2"}};
    devices_[kVf1] = {kVf1,
                      "rdma/hca_vf",
                      "0000:3b:00.3",
                      {"mlx5_3"},
                      {"/dev/infiniband/uverbs3", "/dev/infiniband/rdma_cm"}};
    devices_[kShared] = {
        kShared, "rdma/hca_shared", "0000:3a:00.0", {"mlx5_0"}, {"/dev/infiniband/uverbs0"}};
    StartDriver();
  }

  void StartDriver() {
    source_ = std::make_unique<RestClaimSource>(client_.get(), "v1");
    PreparerOptions o;
    o.driver = kDriver;
    o.pool = kPool;
    o.cdi_dir = cdi_dir_;
    o.checkpoint_path = CheckpointPath(root_, kDriver);
    o.owner = root_;
    o.runtime_refusal = [this] {
      std::lock_guard<std::mutex> lock(mu_);
      return refusal_;
    };
    auto p = Preparer::Create(o, source_.get(),
                              [this](const std::string& pool, const std::string& device) {
                                std::lock_guard<std::mutex> lock(mu_);
                                auto it = devices_.find(device);
                                if (pool != kPool || it == devices_.end())
                                  return std::optional<PreparableDevice>();
                                return std::optional<PreparableDevice>(it->second);
                              });
    ASSERT_TRUE(p.ok()) << p.status().ToString();
    preparer_ = std::move(*p);
    NodeServerOptions so;
    so.kubelet_root = root_;
    so.driver = kDriver;
    server_ = std::make_unique<NodeServer>(so, *preparer_, health_);
    Status st = server_->Start();
    ASSERT_TRUE(st.ok()) << st.ToString();
    auto info = kubelet_->Register(kDriver);
    ASSERT_TRUE(info.ok()) << info.status().ToString();
  }

  void StopDriver() {
    server_.reset();
    preparer_.reset();
  }

  // Seeds claim `name` with `results`; returns the UID the API server gave it.
  std::string SeedClaim(const std::string& name, const std::vector<json>& results) {
    api_->Seed(kClaims, ClaimObject(name, json(results)));
    return api_->Get(kClaims, name)["metadata"]["uid"].get<std::string>();
  }

  // GETs of claim `name` the API server has seen.
  int ClaimGets(const std::string& name) const {
    int n = 0;
    for (const auto& r : api_->Requests()) {
      if (r.method == "GET" && r.target == std::string(kClaims) + "/" + name) ++n;
    }
    return n;
  }

  // The one claim's answer of a Prepare.
  drav1::NodePrepareResourceResponse PrepareOne(DraApi api, const FakeClaim& c) {
    auto resp = kubelet_->Prepare(api, {c});
    EXPECT_TRUE(resp.ok()) << resp.status().ToString();
    if (!resp.ok()) return {};
    EXPECT_EQ(resp->claims().size(), 1u);
    auto it = resp->claims().find(c.uid);
    EXPECT_TRUE(it != resp->claims().end()) << "claim " << c.uid << " missing from the answer";
    return it == resp->claims().end() ? drav1::NodePrepareResourceResponse() : it->second;
  }

  std::string UnprepareOne(DraApi api, const FakeClaim& c) {
    auto resp = kubelet_->Unprepare(api, {c});
    EXPECT_TRUE(resp.ok()) << resp.status().ToString();
    if (!resp.ok()) return "call failed";
    auto it = resp->claims().find(c.uid);
    EXPECT_TRUE(it != resp->claims().end()) << "claim " << c.uid << " missing from the answer";
    return it == resp->claims().end() ? "missing" : it->second.error();
  }

  std::string SpecPath(const std::string& uid) const {
    return cdi_dir_ + "/" + ClaimCdiSpecFileName(kDriver, uid);
  }

  void Unplug(const std::string& device) {
    std::lock_guard<std::mutex> lock(mu_);
    devices_.erase(device);
  }

  TempDir tmp_;
  std::string root_;
  std::string cdi_dir_;
  std::unique_ptr<fake::FakeApiServer> api_;
  std::unique_ptr<kube::RestClient> client_;
  std::unique_ptr<fake::FakeDraKubelet> kubelet_;
  std::mutex mu_;
  std::map<std::string, PreparableDevice> devices_;  // guarded by mu_
  std::string refusal_;                              // guarded by mu_: runtime_refusal's answer
  HealthSource health_;
  std::unique_ptr<RestClaimSource> source_;
  std::unique_ptr<Preparer> preparer_;
  std::unique_ptr<NodeServer> server_;
};

TEST_F(DraNodeTest, RegistersAsDraPluginWithV1First) {
  auto info = kubelet_->Register(kDriver);
  ASSERT_TRUE(info.ok()) << info.status().ToString();
  EXPECT_EQ(info->type(), "DRAPlugin");
  EXPECT_EQ(info->name(), kDriver);
  EXPECT_EQ(info->endpoint(), root_ + "/plugins/rdma.hcashare.io/dra.sock");
  EXPECT_EQ(info->endpoint(), server_->DraSocketPath());
  EXPECT_THAT(info->supported_versions(),
              ElementsAre("v1.DRAPlugin", "v1beta1.DRAPlugin", "v1alpha1.DRAResourceHealth"));
  EXPECT_EQ(server_->RegistrationSocketPath(),
            root_ + "/plugins_registry/rdma.hcashare.io-reg.sock");
  RegistrationState reg = server_->registration();
  EXPECT_TRUE(reg.registered);
  EXPECT_EQ(reg.notifications, 2);

  // A refusal reaches the driver.
  EXPECT_TRUE(kubelet_->Register(kDriver, "endpoint already registered").ok());
  reg = server_->registration();
  EXPECT_FALSE(reg.registered);
  EXPECT_EQ(reg.error, "endpoint already registered");
}

TEST_F(DraNodeTest, PreparesOverV1AndV1beta1) {
  for (DraApi api : {DraApi::kV1, DraApi::kV1beta1}) {
    SCOPED_TRACE(api == DraApi::kV1 ? "v1" : "v1beta1");
    const std::string name = api == DraApi::kV1 ? "nic-v1" : "nic-v1beta1";
    const std::string uid = SeedClaim(name, {AllocResult("nic", kDriver, kPool, kVf0)});
    auto claim = PrepareOne(api, {"ml", uid, name});
    EXPECT_EQ(claim.error(), "");
    ASSERT_EQ(claim.devices_size(), 1);
    const auto& d = claim.devices(0);
    EXPECT_THAT(d.request_names(), ElementsAre("nic"));
    EXPECT_EQ(d.pool_name(), kPool);
    EXPECT_EQ(d.device_name(), kVf0);
    EXPECT_THAT(d.cdi_device_ids(), ElementsAre("rdma.hcashare.io/claim=" + uid + "-" + kVf0));
    EXPECT_FALSE(d.has_share_id());
    EXPECT_TRUE(Exists(SpecPath(uid)));
    EXPECT_EQ(preparer_->PciAddressOf(kPool, kVf0), "0000:3b:00.2");
    EXPECT_EQ(UnprepareOne(api, {"ml", uid, name}), "");
    EXPECT_FALSE(Exists(SpecPath(uid)));
  }
}

TEST_F(DraNodeTest, EchoesShareIdOverV1Only) {
  json r = AllocResult("nic", kDriver, kPool, kShared);
  r["shareID"] = "7c1e1a54-share";
  json r2 = AllocResult("nic2", kDriver, kPool, kShared);
  r2["shareID"] = "9d2f-share";
  const std::string uid = SeedClaim("shared", {r, r2});
  auto v1 = PrepareOne(DraApi::kV1, {"ml", uid, "shared"});
  ASSERT_EQ(v1.devices_size(), 2) << v1.error();
  EXPECT_EQ(v1.devices(0).share_id(), "7c1e1a54-share");
  EXPECT_EQ(v1.devices(1).share_id(), "9d2f-share");
  // Two shares of one device: one CDI device in the spec.
  json spec = json::parse(std::ifstream(SpecPath(uid)));
  EXPECT_EQ(spec["devices"].size(), 1u);
  auto beta = PrepareOne(DraApi::kV1beta1, {"ml", uid, "shared"});
  ASSERT_EQ(beta.devices_size(), 2);
  EXPECT_FALSE(beta.devices(0).has_share_id());
}

TEST_F(DraNodeTest, PreparedTwiceAnswersAgainWithoutAnApiCall) {
  const std::string uid = SeedClaim("twice", {AllocResult("nic", kDriver, kPool, kVf0)});
  auto first = PrepareOne(DraApi::kV1, {"ml", uid, "twice"});
  ASSERT_EQ(first.error(), "");
  EXPECT_EQ(ClaimGets("twice"), 1);
  auto second = PrepareOne(DraApi::kV1, {"ml", uid, "twice"});
  EXPECT_EQ(second.SerializeAsString(), first.SerializeAsString());
  EXPECT_EQ(ClaimGets("twice"), 1);
}

// A runtime without CDI (issue 37): a new claim fails with the reason, before any API call
// or file; a claim prepared earlier is still answered (its pod may be restarting) and
// unprepared.
TEST_F(DraNodeTest, ARuntimeRefusalFailsOnlyNewClaims) {
  const std::string old_uid = SeedClaim("old", {AllocResult("nic", kDriver, kPool, kVf0)});
  ASSERT_EQ(PrepareOne(DraApi::kV1, {"ml", old_uid, "old"}).error(), "");
  {
    std::lock_guard<std::mutex> lock(mu_);
    refusal_ =
        "the node's container runtime containerd://1.6.20 cannot give containers CDI devices";
  }
  const std::string uid = SeedClaim("new", {AllocResult("nic", kDriver, kPool, kVf1)});
  const auto refused = PrepareOne(DraApi::kV1, {"ml", uid, "new"});
  EXPECT_EQ(refused.error(),
            "claim ml/new: the node's container runtime containerd://1.6.20 cannot give "
            "containers CDI devices");
  EXPECT_EQ(ClaimGets("new"), 0);
  EXPECT_EQ(PrepareOne(DraApi::kV1, {"ml", old_uid, "old"}).error(), "");
  EXPECT_EQ(UnprepareOne(DraApi::kV1, {"ml", old_uid, "old"}), "");
  {
    std::lock_guard<std::mutex> lock(mu_);
    refusal_.clear();
  }
  EXPECT_EQ(PrepareOne(DraApi::kV1, {"ml", uid, "new"}).error(), "");
}

TEST_F(DraNodeTest, UnpreparesAfterTheClaimIsDeleted) {
  const std::string uid = SeedClaim("gone", {AllocResult("nic", kDriver, kPool, kVf0)});
  ASSERT_EQ(PrepareOne(DraApi::kV1, {"ml", uid, "gone"}).error(), "");
  ASSERT_TRUE(api_->Delete(kClaims, "gone"));
  EXPECT_EQ(UnprepareOne(DraApi::kV1, {"ml", uid, "gone"}), "");
  EXPECT_FALSE(Exists(SpecPath(uid)));
  EXPECT_FALSE(preparer_->Prepared(uid).has_value());
  EXPECT_EQ(preparer_->PciAddressOf(kPool, kVf0), std::nullopt);
  EXPECT_EQ(ClaimGets("gone"), 1);  // Unprepare never asked the API server
  // Again (a kubelet retry): still a success.
  EXPECT_EQ(UnprepareOne(DraApi::kV1beta1, {"ml", uid, "gone"}), "");
}

TEST_F(DraNodeTest, TakesOnlyOurDriversResults) {
  const std::string uid = SeedClaim("mixed", {AllocResult("gpu", "gpu.nvidia.com", kPool, "gpu-0"),
                                              AllocResult("nic", kDriver, kPool, kVf1),
                                              AllocResult("nic-far", kDriver, "node-b", kVf0),
                                              AllocResult("gpu2", "gpu.nvidia.com", kPool, kVf0)});
  auto claim = PrepareOne(DraApi::kV1, {"ml", uid, "mixed"});
  EXPECT_EQ(claim.error(), "");
  ASSERT_EQ(claim.devices_size(), 1);
  EXPECT_EQ(claim.devices(0).device_name(), kVf1);
  EXPECT_THAT(claim.devices(0).request_names(), ElementsAre("nic"));
  json spec = json::parse(std::ifstream(SpecPath(uid)));
  ASSERT_EQ(spec["devices"].size(), 1u);
  EXPECT_EQ(spec["devices"][0]["name"], uid + "-" + kVf1);
}

TEST_F(DraNodeTest, ClaimWithAnotherUidIsReplaced) {
  const std::string old_uid = SeedClaim("replaced", {AllocResult("nic", kDriver, kPool, kVf0)});
  ASSERT_TRUE(api_->Delete(kClaims, "replaced"));
  const std::string new_uid = SeedClaim("replaced", {AllocResult("nic", kDriver, kPool, kVf0)});
  ASSERT_NE(old_uid, new_uid);
  auto claim = PrepareOne(DraApi::kV1, {"ml", old_uid, "replaced"});
  EXPECT_THAT(claim.error(), HasSubstr("claim replaced"));
  EXPECT_THAT(claim.error(), HasSubstr(new_uid));
  EXPECT_EQ(claim.devices_size(), 0);
  EXPECT_FALSE(Exists(SpecPath(old_uid)));
  EXPECT_FALSE(preparer_->Prepared(old_uid).has_value());
}

TEST_F(DraNodeTest, ApiServerDownFailsTheClaimThenARetrySucceeds) {
  const std::string uid = SeedClaim("retry", {AllocResult("nic", kDriver, kPool, kVf0)});
  api_->InjectError(503, "ServiceUnavailable", 1);
  auto failed = PrepareOne(DraApi::kV1, {"ml", uid, "retry"});
  EXPECT_THAT(failed.error(), HasSubstr("cannot read the ResourceClaim"));
  EXPECT_THAT(failed.error(), HasSubstr("503"));
  EXPECT_FALSE(preparer_->Prepared(uid).has_value());
  auto retried = PrepareOne(DraApi::kV1, {"ml", uid, "retry"});
  EXPECT_EQ(retried.error(), "");
  EXPECT_EQ(retried.devices_size(), 1);

  // A claim the API server does not have: an error for it alone.
  auto resp = kubelet_->Prepare(DraApi::kV1, {{"ml", uid, "retry"}, {"ml", "nope-1", "nope"}});
  ASSERT_TRUE(resp.ok());
  EXPECT_EQ(resp->claims().at(uid).error(), "");
  EXPECT_THAT(resp->claims().at("nope-1").error(), HasSubstr("ml/nope"));
}

TEST_F(DraNodeTest, UnknownClaimUnprepareSucceeds) {
  auto resp = kubelet_->Unprepare(DraApi::kV1, {{"ml", "never-seen", "x"}});
  ASSERT_TRUE(resp.ok()) << resp.status().ToString();
  ASSERT_EQ(resp->claims().count("never-seen"), 1u);
  EXPECT_EQ(resp->claims().at("never-seen").error(), "");
}

TEST_F(DraNodeTest, HotUnplugOfAPreparedDevice) {
  const std::string uid = SeedClaim("held", {AllocResult("nic", kDriver, kPool, kVf0)});
  ASSERT_EQ(PrepareOne(DraApi::kV1, {"ml", uid, "held"}).error(), "");
  Unplug(kVf0);
  // Retried Prepare of the claim already prepared: its checkpointed answer.
  EXPECT_EQ(PrepareOne(DraApi::kV1, {"ml", uid, "held"}).devices_size(), 1);
  EXPECT_EQ(UnprepareOne(DraApi::kV1, {"ml", uid, "held"}), "");
  EXPECT_FALSE(Exists(SpecPath(uid)));

  const std::string uid2 = SeedClaim("late", {AllocResult("nic", kDriver, kPool, kVf0)});
  auto late = PrepareOne(DraApi::kV1, {"ml", uid2, "late"});
  EXPECT_THAT(late.error(), HasSubstr(std::string("device ") + kVf0));
  EXPECT_THAT(late.error(), HasSubstr("not on this node"));
  EXPECT_FALSE(Exists(SpecPath(uid2)));
}

TEST_F(DraNodeTest, CdiSpecHasTheDeviceNodesAndEnv) {
  const std::string uid = SeedClaim(
      "spec", {AllocResult("a", kDriver, kPool, kVf0), AllocResult("b", kDriver, kPool, kVf1)});
  auto claim = PrepareOne(DraApi::kV1, {"ml", uid, "spec"});
  ASSERT_EQ(claim.devices_size(), 2) << claim.error();
  const std::string path = SpecPath(uid);
  EXPECT_EQ(path, cdi_dir_ + "/hcashare-dra-rdma_hcashare_io-" + uid + ".json");
  json spec = json::parse(std::ifstream(path));
  EXPECT_EQ(spec["cdiVersion"], "0.5.0");
  EXPECT_EQ(spec["kind"], "rdma.hcashare.io/claim");
  ASSERT_EQ(spec["devices"].size(), 2u);
  const json& d0 = spec["devices"][0];
  EXPECT_EQ(d0["name"], uid + "-" + kVf0);
  std::vector<std::string> nodes;
  for (const auto& n : d0["containerEdits"]["deviceNodes"]) {
    EXPECT_EQ(n["hostPath"], n["path"]);
    EXPECT_EQ(n["permissions"], "rw");
    nodes.push_back(n["path"]);
  }
  EXPECT_THAT(nodes, ElementsAre("/dev/infiniband/issm2", "/dev/infiniband/umad2",
                                 "/dev/infiniband/uverbs2", "/dev/infiniband/rdma_cm"));
  // No device sets a variable: the claim's are the spec's own, applied once.
  EXPECT_TRUE(d0["containerEdits"]["env"].empty());
  EXPECT_THAT(spec["containerEdits"]["env"].get<std::vector<std::string>>(),
              ElementsAre("HCASHARE_DRA_CLAIM_SPEC_RDMA_DEVICES=mlx5_2,mlx5_3",
                          "HCASHARE_DRA_CLAIM_SPEC_NCCL_IB_HCA==mlx5_2,mlx5_3",
                          "HCASHARE_DRA_CLAIM_SPEC_REQUEST_A_RDMA_DEVICES=mlx5_2",
                          "HCASHARE_DRA_CLAIM_SPEC_REQUEST_A_NCCL_IB_HCA==mlx5_2",
                          "HCASHARE_DRA_CLAIM_SPEC_REQUEST_B_RDMA_DEVICES=mlx5_3",
                          "HCASHARE_DRA_CLAIM_SPEC_REQUEST_B_NCCL_IB_HCA==mlx5_3"));
  const json& d1 = spec["devices"][1];
  EXPECT_EQ(d1["name"], uid + "-" + kVf1);
  EXPECT_EQ(d1["containerEdits"]["deviceNodes"].size(), 2u);
  EXPECT_EQ(d1["containerEdits"]["deviceNodes"][1]["path"], "/dev/infiniband/rdma_cm");
  // Each device's CDI ID names a device of this spec.
  EXPECT_THAT(claim.devices(1).cdi_device_ids(),
              ElementsAre(std::string(spec["kind"]) + "=" + std::string(d1["name"])));
}

// Issue 33: each CDI device set HCASHARE_RDMA_DEVICES to its own RDMA device, and a runtime
// keeps the last value of a variable two devices set: a claim of 8 rails showed one. What
// the container sees, after the kubelet picks its CDI IDs and the runtime merges the specs,
// names all 8, per claim and per request, with NCCL_IB_HCA ready in NUMA order.
TEST_F(DraNodeTest, EveryRailOfAClaimIsNamedInTheContainer) {
  std::vector<json> results;
  std::vector<std::string> all;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (int i = 0; i < 8; ++i) {
      const std::string name = "pci-0000-5" + std::to_string(i) + "-00-0";
      const std::string rdma = "mlx5_" + std::to_string(10 + i);
      PreparableDevice d{name,
                         "rdma/hca_rails",
                         "0000:5" + std::to_string(i) + ":00.0",
                         {rdma},
                         {"/dev/infiniband/uverbs" + std::to_string(10 + i)}};
      d.numa_node = i < 4 ? 1 : 0;  // the first four rails on node 1
      d.set_nccl_ib_hca = true;
      devices_[name] = d;
      results.push_back(AllocResult("rails", kDriver, kPool, name));
      all.push_back(rdma);
    }
  }
  json claim = ClaimObject("job-0-rdma-x7k2p", json(results));
  claim["metadata"]["annotations"] = {{"resource.kubernetes.io/pod-claim-name", "rdma"}};
  api_->Seed(kClaims, claim);
  const std::string uid = api_->Get(kClaims, "job-0-rdma-x7k2p")["metadata"]["uid"];
  auto prepared = PrepareOne(DraApi::kV1, {"ml", uid, "job-0-rdma-x7k2p"});
  ASSERT_EQ(prepared.devices_size(), 8) << prepared.error();

  auto c = fake::InjectCdiDevices(cdi_dir_, fake::ContainerCdiIds(prepared),
                                  {"PATH=/usr/bin", "NCCL_IB_HCA=mlx5"});
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  const std::string names = "mlx5_10,mlx5_11,mlx5_12,mlx5_13,mlx5_14,mlx5_15,mlx5_16,mlx5_17";
  const std::string numa_order = "=mlx5_14,mlx5_15,mlx5_16,mlx5_17,mlx5_10,mlx5_11,mlx5_12,mlx5_13";
  EXPECT_EQ(c->Env("HCASHARE_RDMA_DEVICES"), names);
  EXPECT_EQ(c->Env("HCASHARE_RDMA_DEVICES_RDMA_HCA_RAILS"), names);
  EXPECT_EQ(c->Env("HCASHARE_DRA_CLAIM_RDMA_RDMA_DEVICES"), names);
  EXPECT_EQ(c->Env("HCASHARE_DRA_CLAIM_RDMA_REQUEST_RAILS_RDMA_DEVICES"), names);
  EXPECT_EQ(c->Env("HCASHARE_DRA_CLAIM_RDMA_NCCL_IB_HCA"), numa_order);
  // The resource opted in (setNcclIbHca): the runtime's value replaces the pod's.
  EXPECT_EQ(c->Env("NCCL_IB_HCA"), numa_order);
  EXPECT_EQ(c->Env("PATH"), "/usr/bin");
  EXPECT_EQ(c->device_nodes.size(), 9u);  // 8 uverbs and rdma_cm once
  // The same container naming the request: the same.
  auto by_request = fake::InjectCdiDevices(cdi_dir_, fake::ContainerCdiIds(prepared, "rails"));
  ASSERT_TRUE(by_request.ok());
  std::map<std::string, std::string> expected = c->EnvMap();
  expected.erase("PATH");
  EXPECT_EQ(by_request->EnvMap(), expected);
  EXPECT_EQ(by_request->device_nodes, c->device_nodes);
}

// A claim of two requests names each request's devices and the claim's; the generic names
// are not set, since a container may hold one request only (and gets only its devices).
TEST_F(DraNodeTest, EachRequestIsNamedAndAContainerOfOneGetsOnlyIts) {
  const std::string uid = SeedClaim("pair", {AllocResult("east", kDriver, kPool, kVf0),
                                             AllocResult("west", kDriver, kPool, kVf1)});
  auto prepared = PrepareOne(DraApi::kV1, {"ml", uid, "pair"});
  ASSERT_EQ(prepared.devices_size(), 2) << prepared.error();
  auto whole = fake::InjectCdiDevices(cdi_dir_, fake::ContainerCdiIds(prepared));
  ASSERT_TRUE(whole.ok()) << whole.status().ToString();
  EXPECT_EQ(whole->Env("HCASHARE_DRA_CLAIM_PAIR_RDMA_DEVICES"), "mlx5_2,mlx5_3");
  EXPECT_EQ(whole->Env("HCASHARE_DRA_CLAIM_PAIR_REQUEST_EAST_RDMA_DEVICES"), "mlx5_2");
  EXPECT_EQ(whole->Env("HCASHARE_DRA_CLAIM_PAIR_REQUEST_WEST_RDMA_DEVICES"), "mlx5_3");
  EXPECT_EQ(whole->EnvMap().count("HCASHARE_RDMA_DEVICES"), 0u);
  EXPECT_EQ(whole->EnvMap().count("HCASHARE_RDMA_DEVICES_RDMA_HCA_VF"), 0u);
  EXPECT_EQ(whole->EnvMap().count("NCCL_IB_HCA"), 0u);

  auto west = fake::InjectCdiDevices(cdi_dir_, fake::ContainerCdiIds(prepared, "west"));
  ASSERT_TRUE(west.ok()) << west.status().ToString();
  EXPECT_THAT(west->device_nodes,
              ElementsAre("/dev/infiniband/uverbs3", "/dev/infiniband/rdma_cm"));
  EXPECT_EQ(west->Env("HCASHARE_DRA_CLAIM_PAIR_REQUEST_WEST_RDMA_DEVICES"), "mlx5_3");
}

// Two claims in one container: each keeps its own names.
TEST_F(DraNodeTest, TwoClaimsInOneContainerKeepTheirNames) {
  const std::string a = SeedClaim("rail-a", {AllocResult("nic", kDriver, kPool, kVf0)});
  const std::string b = SeedClaim("rail-b", {AllocResult("nic", kDriver, kPool, kVf1)});
  auto pa = PrepareOne(DraApi::kV1, {"ml", a, "rail-a"});
  auto pb = PrepareOne(DraApi::kV1, {"ml", b, "rail-b"});
  std::vector<std::string> ids = fake::ContainerCdiIds(pa);
  for (const auto& id : fake::ContainerCdiIds(pb)) ids.push_back(id);
  auto c = fake::InjectCdiDevices(cdi_dir_, ids);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->Env("HCASHARE_DRA_CLAIM_RAIL_A_RDMA_DEVICES"), "mlx5_2");
  EXPECT_EQ(c->Env("HCASHARE_DRA_CLAIM_RAIL_B_RDMA_DEVICES"), "mlx5_3");
  EXPECT_EQ(c->Env("HCASHARE_DRA_CLAIM_RAIL_A_REQUEST_NIC_NCCL_IB_HCA"), "=mlx5_2");
  EXPECT_THAT(c->device_nodes, ElementsAre("/dev/infiniband/issm2", "/dev/infiniband/umad2",
                                           "/dev/infiniband/uverbs2", "/dev/infiniband/rdma_cm",
                                           "/dev/infiniband/uverbs3"));
}

// The kubelet gives a container the devices whose request names contain the request it
// names, exactly, and a container names a subrequest's parent: "nic/fast" was answered
// verbatim, so a container naming "nic" got no device at all.
TEST_F(DraNodeTest, ASubrequestIsAnsweredAsItsParentRequest) {
  const std::string uid = SeedClaim("prio", {AllocResult("nic/fast", kDriver, kPool, kVf0)});
  auto prepared = PrepareOne(DraApi::kV1, {"ml", uid, "prio"});
  ASSERT_EQ(prepared.devices_size(), 1) << prepared.error();
  EXPECT_THAT(prepared.devices(0).request_names(), ElementsAre("nic"));
  auto c = fake::InjectCdiDevices(cdi_dir_, fake::ContainerCdiIds(prepared, "nic"));
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->Env("HCASHARE_DRA_CLAIM_PRIO_REQUEST_NIC_RDMA_DEVICES"), "mlx5_2");
  EXPECT_EQ(c->Env("HCASHARE_RDMA_DEVICES"), "mlx5_2");
}

// The claim's opaque configuration for this driver (dra/claim_config.h) names and sizes the
// devices' interfaces for the CNI's DRA step: the class's entry first, the claim's after it,
// other drivers' entries skipped.
TEST_F(DraNodeTest, TheClaimsConfigNamesItsInterfacesInTheCheckpoint) {
  json claim = ClaimObject("cfg", json::array({AllocResult("rail0", kDriver, kPool, kVf0),
                                               AllocResult("rail1", kDriver, kPool, kVf1)}));
  claim["status"]["allocation"]["devices"]["config"] = json::array(
      {{{"source", "FromClass"},
        {"opaque", {{"driver", kDriver}, {"parameters", {{"interface", {{"mtu", 4000}}}}}}}},
       {{"source", "FromClaim"},
        {"requests", {"rail0"}},
        {"opaque",
         {{"driver", kDriver},
          {"parameters",
           {{"apiVersion", "rdma.hcashare.io/v1alpha1"},
            {"kind", "PodInterface"},
            {"interface", {{"name", "rdma0"}, {"mtu", 9000}, {"addresses", {"10.0.0.5/24"}}}}}}}}},
       {{"source", "FromClaim"},
        {"opaque", {{"driver", "gpu.nvidia.com"}, {"parameters", {{"anything", 1}}}}}}});
  api_->Seed(kClaims, claim);
  const std::string uid = api_->Get(kClaims, "cfg")["metadata"]["uid"].get<std::string>();
  auto prepared = PrepareOne(DraApi::kV1, {"ml", uid, "cfg"});
  ASSERT_EQ(prepared.error(), "");
  auto cp = Checkpoint::Load(CheckpointPath(root_, kDriver));
  ASSERT_TRUE(cp.ok()) << cp.status().ToString();
  const PreparedDevice* d0 = cp->FindDevice(kPool, kVf0);
  const PreparedDevice* d1 = cp->FindDevice(kPool, kVf1);
  ASSERT_TRUE(d0 != nullptr && d1 != nullptr);
  EXPECT_EQ(d0->interface_name, "rdma0");
  EXPECT_EQ(d0->mtu, 9000);
  EXPECT_EQ(d0->addresses, std::vector<std::string>{"10.0.0.5/24"});
  EXPECT_EQ(d1->interface_name, "");  // the CNI's default: the VF's host name
  EXPECT_EQ(d1->mtu, 4000);
}

// Written by a tenant (the claim) or an admin (the class): every problem is named with its
// JSON path, and nothing is prepared.
TEST_F(DraNodeTest, AnInvalidClaimConfigFailsPrepareNamingEveryProblem) {
  json claim = ClaimObject("bad", json::array({AllocResult("nic", kDriver, kPool, kVf0),
                                               AllocResult("nic", kDriver, kPool, kVf1)}));
  claim["status"]["allocation"]["devices"]["config"] = json::array(
      {{{"source", "FromClaim"},
        {"opaque",
         {{"driver", kDriver},
          {"parameters",
           {{"interface", {{"name", "a/b"}, {"mtu", 10}, {"speed", 1}}}, {"extra", true}}}}}},
       {{"source", "FromClaim"},
        {"opaque", {{"driver", kDriver}, {"parameters", {{"interface", {{"name", "rdma0"}}}}}}}}});
  api_->Seed(kClaims, claim);
  const std::string uid = api_->Get(kClaims, "bad")["metadata"]["uid"].get<std::string>();
  auto prepared = PrepareOne(DraApi::kV1, {"ml", uid, "bad"});
  const std::string at = "status.allocation.devices.config[0].opaque.parameters.";
  EXPECT_THAT(prepared.error(), HasSubstr(at + "interface.name: it must not contain '/'"));
  EXPECT_THAT(prepared.error(), HasSubstr(at + "interface.mtu: must be an integer from 68"));
  EXPECT_THAT(prepared.error(), HasSubstr(at + "interface.speed: unknown key"));
  EXPECT_THAT(prepared.error(), HasSubstr(at + "extra: unknown key"));
  EXPECT_THAT(prepared.error(),
              HasSubstr("config[1].opaque.parameters.interface.name: names one interface but "
                        "applies to 2 devices"));
  EXPECT_FALSE(Exists(SpecPath(uid)));
  auto cp = Checkpoint::Load(CheckpointPath(root_, kDriver));
  ASSERT_TRUE(cp.ok());
  EXPECT_EQ(cp->Find(uid), nullptr);
}

TEST_F(DraNodeTest, CheckpointSurvivesARestart) {
  const std::string uid = SeedClaim("kept", {AllocResult("nic", kDriver, kPool, kVf0)});
  auto before = PrepareOne(DraApi::kV1, {"ml", uid, "kept"});
  ASSERT_EQ(before.error(), "");
  StopDriver();
  EXPECT_FALSE(Exists(root_ + "/plugins/rdma.hcashare.io/dra.sock"));
  EXPECT_FALSE(Exists(root_ + "/plugins_registry/rdma.hcashare.io-reg.sock"));
  EXPECT_TRUE(Exists(SpecPath(uid)));  // the pod still runs with it

  auto cp = Checkpoint::Load(CheckpointPath(root_, kDriver));
  ASSERT_TRUE(cp.ok()) << cp.status().ToString();
  EXPECT_EQ(cp->PciAddressOf(kPool, kVf0), "0000:3b:00.2");  // what the CNI reads

  StartDriver();
  auto after = PrepareOne(DraApi::kV1beta1, {"ml", uid, "kept"});
  EXPECT_EQ(after.SerializeAsString(), before.SerializeAsString());
  EXPECT_EQ(ClaimGets("kept"), 1);
  EXPECT_EQ(UnprepareOne(DraApi::kV1, {"ml", uid, "kept"}), "");
  EXPECT_FALSE(Exists(SpecPath(uid)));  // reclaimed at start, so still ours to remove
}

// The daemon killed between writing a claim's CDI spec and checkpointing the claim: the
// spec is ours (the ledger names it) but no prepared claim holds it. The next start removes
// it, and the kubelet's retry prepares the claim again, spec and all.
TEST_F(DraNodeTest, ASpecKilledBeforeItsCheckpointIsRemovedAtStart) {
  const std::string uid = SeedClaim("torn", {AllocResult("nic", kDriver, kPool, kVf0)});
  ASSERT_EQ(PrepareOne(DraApi::kV1, {"ml", uid, "torn"}).error(), "");
  StopDriver();
  ASSERT_TRUE(Exists(SpecPath(uid)));
  {
    auto cp = Checkpoint::Load(CheckpointPath(root_, kDriver));
    ASSERT_TRUE(cp.ok()) << cp.status().ToString();
    ASSERT_TRUE(cp->Erase(uid).ok());  // the state a SIGKILL before Put() leaves
  }
  StartDriver();
  EXPECT_FALSE(Exists(SpecPath(uid)));
  EXPECT_EQ(PrepareOne(DraApi::kV1, {"ml", uid, "torn"}).error(), "");
  EXPECT_TRUE(Exists(SpecPath(uid)));
  EXPECT_EQ(ClaimGets("torn"), 2);
}

TEST_F(DraNodeTest, ForeignSpecFileIsNeverRemoved) {
  const std::string uid = SeedClaim("foreign", {AllocResult("nic", kDriver, kPool, kVf0)});
  ASSERT_EQ(PrepareOne(DraApi::kV1, {"ml", uid, "foreign"}).error(), "");
  // Someone else replaces the file (a new inode): ours no more.
  std::ofstream(SpecPath(uid) + ".new") << "{}";
  ASSERT_EQ(::rename((SpecPath(uid) + ".new").c_str(), SpecPath(uid).c_str()), 0);
  EXPECT_EQ(UnprepareOne(DraApi::kV1, {"ml", uid, "foreign"}), "");
  EXPECT_TRUE(Exists(SpecPath(uid)));
}

TEST_F(DraNodeTest, HealthStreamSendsTheFullListAndUpdates) {
  health_.Publish({{kPool, kVf0, DeviceHealthStatus::kHealthy, 30, ""},
                   {kPool, kVf1, DeviceHealthStatus::kHealthy, 30, ""}});
  const int64_t before = static_cast<int64_t>(std::time(nullptr));
  auto watch = kubelet_->WatchHealth();
  ASSERT_NE(watch, nullptr);
  auto first = watch->Next(std::chrono::seconds(10));
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  ASSERT_EQ(first->devices_size(), 2);
  EXPECT_EQ(first->devices(0).device().pool_name(), kPool);
  EXPECT_EQ(first->devices(0).device().device_name(), kVf0);
  EXPECT_EQ(first->devices(0).health(), v1alpha1::HEALTHY);
  // Stamped when sent.
  EXPECT_GE(first->devices(0).last_updated_time(), before);
  EXPECT_LE(first->devices(0).last_updated_time(), static_cast<int64_t>(std::time(nullptr)));
  EXPECT_EQ(first->devices(0).health_check_timeout_seconds(), 30);

  health_.Publish({{kPool, kVf0, DeviceHealthStatus::kHealthy, 30, ""},
                   {kPool, kVf1, DeviceHealthStatus::kUnhealthy, 30,
                    "port 1 is DOWN " + std::string(2000, 'x')}});
  auto second = watch->Next(std::chrono::seconds(10));
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  ASSERT_EQ(second->devices_size(), 2);  // the full list, not the change
  EXPECT_EQ(second->devices(0).health(), v1alpha1::HEALTHY);
  EXPECT_EQ(second->devices(1).health(), v1alpha1::UNHEALTHY);
  EXPECT_EQ(second->devices(1).message().size(), kMaxHealthMessage);

  // Stopping the driver ends the stream.
  StopDriver();
  EXPECT_TRUE(testing::WaitUntil([&] { return watch->ended(); }));
}

// Issue 33: every poll resent the whole list, and with a poll interval of 30 s or more the
// kubelet, hearing nothing for its 30 s, showed the devices Unknown. An unchanged list is
// not sent again; a keep-alive beat resends it whatever the poll interval.
TEST_F(DraNodeTest, HealthStreamSendsOnChangeAndKeepsAlive) {
  const std::vector<DeviceHealthEntry> list = {{kPool, kVf0, DeviceHealthStatus::kHealthy, 0, ""}};
  health_.Publish(list);
  auto watch = kubelet_->WatchHealth();
  ASSERT_NE(watch, nullptr);
  ASSERT_TRUE(watch->Next(std::chrono::seconds(10)).ok());
  health_.Publish(list);  // the next poll, nothing changed
  health_.Publish(list);
  EXPECT_FALSE(watch->Next(std::chrono::milliseconds(500)).ok()) << "an unchanged list was resent";
  health_.Publish({{kPool, kVf0, DeviceHealthStatus::kUnhealthy, 0, "gone"}});
  auto changed = watch->Next(std::chrono::seconds(10));
  ASSERT_TRUE(changed.ok());
  EXPECT_EQ(changed->devices(0).health(), v1alpha1::UNHEALTHY);

  // With the beat, the list comes again without any publish, stamped anew.
  health_.StartKeepAlive(std::chrono::milliseconds(100));
  for (int i = 0; i < 3; ++i) {
    auto beat = watch->Next(std::chrono::seconds(10));
    ASSERT_TRUE(beat.ok()) << "beat " << i;
    ASSERT_EQ(beat->devices_size(), 1);
    EXPECT_EQ(beat->devices(0).health(), v1alpha1::UNHEALTHY);
    EXPECT_GE(beat->devices(0).last_updated_time(), changed->devices(0).last_updated_time());
  }
}

TEST_F(DraNodeTest, TooManyClaimsFailTheCall) {
  std::vector<FakeClaim> claims(kMaxClaimsPerRequest + 1, FakeClaim{"ml", "u", "c"});
  auto resp = kubelet_->Prepare(DraApi::kV1, claims);
  ASSERT_FALSE(resp.ok());
  EXPECT_THAT(resp.status().message(), HasSubstr("at most 128"));
}

TEST_F(DraNodeTest, StopLeavesASuccessorsSocket) {
  const std::string sock = server_->RegistrationSocketPath();
  // Another instance's file at the name (a new inode).
  std::ofstream(sock + ".new") << "successor";
  ASSERT_EQ(::rename((sock + ".new").c_str(), sock.c_str()), 0);
  StopDriver();
  EXPECT_TRUE(Exists(sock));
  EXPECT_FALSE(Exists(root_ + "/plugins/rdma.hcashare.io/dra.sock"));
}

// The health API and pod-resources v1alpha1 share the C++ namespace v1alpha1: both built
// into one binary, each message its own.
TEST(DraProtos, HealthAndPodResourcesShareANamespace) {
  v1alpha1::NodeWatchResourcesResponse health;
  health.add_devices()->mutable_device()->set_device_name("d");
  v1alpha1::ListPodResourcesResponse pods;
  pods.add_pod_resources()->set_name("p");
  EXPECT_EQ(health.devices(0).device().device_name(), "d");
  EXPECT_EQ(pods.pod_resources(0).name(), "p");
}

}  // namespace
}  // namespace hcashare::dra
