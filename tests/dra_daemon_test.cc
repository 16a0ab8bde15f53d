// hcashare-device-plugin with DRA resources (issue 27), as a process: the real daemon on the
// simulated demo node, against the fake API server (HTTPS, keep-alive) and the fake kubelet's
// DRA side. One daemon serves a device-plugin resource and a DRA resource from one config:
// it publishes the DRA pool as ResourceSlices, undoes the kubelet's wipe, prepares and
// unprepares claims through its socket, reports a hot-unplugged device, and is ready only
// once registered and published. Without DRA resources it never calls the API server.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <utility>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "interop/dra_network_status.h"
#include "testing/fake_dra_kubelet.h"
#include "tests/daemon_fixture.h"
#include "tests/kube_test_util.h"
#include "tests/support/http_get.h"

namespace hcashare::testing {
namespace {

using json = nlohmann::json;
using std::chrono::milliseconds;

constexpr char kDriver[] = "rdma.hcashare.io";
// A host change is published within a second; a sanitized daemon and test are slower, and
// the release build checks the second.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr milliseconds kPublishBound{5000};
#else
constexpr milliseconds kPublishBound{1000};
#endif
constexpr char kNode[] = "node-a";
constexpr char kSlices[] = "/apis/resource.k8s.io/v1/resourceslices";
constexpr char kClaims[] = "/apis/resource.k8s.io/v1/namespaces/ml/resourceclaims";

// ib0/ib1 stay a shared device-plugin resource; the PFs of ib3 and ib4 are DRA devices.
constexpr char kDraConfig[] = R"({"configList": [
  {"resourceName": "hca_shared_devices_a", "rdmaHcaMax": 10, "devices": ["ib0", "ib1"]},
  {"resourceName": "hca_dra", "api": "dra", "mode": "exclusive",
   "selectors": {"ifNames": ["ib3", "ib4"]}}]})";

class DraDaemonTest : public DaemonTest {
 protected:
  void SetUp() override {
    ::unsetenv("NODE_NAME");  // the daemon takes it when --node-name is absent
    DaemonTest::SetUp();
    fake::FakeApiServerOptions o;
    o.keep_alive = true;
    api_ = StartFakeApiServer(o);
    ASSERT_NE(api_, nullptr);
    api_->Seed("/api/v1/nodes",
               {{"apiVersion", "v1"}, {"kind", "Node"}, {"metadata", {{"name", kNode}}}});
    node_uid_ = api_->Get("/api/v1/nodes", kNode)["metadata"]["uid"].get<std::string>();
    kubeconfig_ = tmp_.path() + "/kubeconfig";
    std::ofstream(kubeconfig_) << KubeconfigFor(api_->url(), SharedPki().ca_pem());
    std::filesystem::create_directories(kubelet_root_ + "/plugins_registry");
    dra_kubelet_ = std::make_unique<fake::FakeDraKubelet>(kubelet_root_);
  }

  Result<Subprocess> SpawnDra(const std::string& log) {
    return Spawn({"--config", config_, "--kubeconfig", kubeconfig_, "--node-name", kNode,
                  "--cdi-spec-dir", tmp_.path() + "/cdi", "--health-poll-interval", "0.1",
                  "--health-debounce", "0.1", "--metrics-address", "127.0.0.1:0"},
                 log);
  }

  // The devices of our slices in the fake API server, by name.
  std::map<std::string, json> Devices() const {
    std::map<std::string, json> out;
    for (const json& s : api_->List(kSlices)) {
      if (s["spec"]["driver"] != kDriver) continue;
      for (const json& d : s["spec"]["devices"]) out[d["name"].get<std::string>()] = d;
    }
    return out;
  }

  int MetricsPort(const std::string& log_name) const {
    const std::string log = ReadTextFile(tmp_.path() + "/" + log_name);
    auto at = log.find("serving metrics and probes");
    if (at == std::string::npos) return 0;
    auto port_at = log.find("port=", at);
    return port_at == std::string::npos ? 0 : std::atoi(log.c_str() + port_at + 5);
  }

  // Seeds claim `name` allocating `device` of our pool; its UID.
  std::string SeedClaim(const std::string& name, const std::string& device) {
    json claim = {{"apiVersion", "resource.k8s.io/v1"},
                  {"kind", "ResourceClaim"},
                  {"metadata", {{"name", name}, {"namespace", "ml"}}}};
    claim["spec"]["devices"]["requests"] = json::array();
    claim["status"]["allocation"]["devices"]["results"] = json::array(
        {{{"request", "nic"}, {"driver", kDriver}, {"pool", kNode}, {"device", device}}});
    api_->Seed(kClaims, claim);
    return api_->Get(kClaims, name)["metadata"]["uid"].get<std::string>();
  }

  std::unique_ptr<fake::FakeApiServer> api_;
  std::string node_uid_;
  std::string kubeconfig_;
  std::unique_ptr<fake::FakeDraKubelet> dra_kubelet_;
};

TEST_F(DraDaemonTest, PublishesPreparesAndStaysPublished) {
  WriteConfig(kDraConfig);
  ASSERT_TRUE(kubelet_->Start().ok());
  auto p = SpawnDra("dra.log");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  // The device-plugin resource is served as before, over ib0 and ib1 only.
  ASSERT_TRUE(WaitDevices(10));
  // The DRA pool: the two PFs of ib3 and ib4, named from their PCI addresses.
  ASSERT_TRUE(WaitUntil([&] { return Devices().size() == 2; }))
      << ReadTextFile(tmp_.path() + "/dra.log");
  auto devices = Devices();
  ASSERT_TRUE(devices.count("pci-0000-af-00-0")) << json(devices).dump();
  const json& dev = devices["pci-0000-af-00-0"];
  EXPECT_EQ(dev["attributes"]["k8s.cni.cncf.io/resourceName"]["string"], "rdma/hca_dra");
  EXPECT_EQ(dev["attributes"]["k8s.cni.cncf.io/deviceID"]["string"], "0000:af:00.0");
  EXPECT_EQ(dev["attributes"]["resource.kubernetes.io/numaNode"]["int"], 1);
  const json slice = api_->List(kSlices).at(0);
  EXPECT_EQ(slice["metadata"]["ownerReferences"][0]["uid"], node_uid_);
  EXPECT_EQ(slice["spec"]["nodeName"], kNode);

  // Not ready until the kubelet registered the DRA driver.
  const int port = MetricsPort("dra.log");
  ASSERT_GT(port, 0);
  EXPECT_NE(HttpGet(port, "/readyz").find("has not registered the DRA driver"), std::string::npos);
  ASSERT_TRUE(dra_kubelet_->Register(kDriver).ok());
  ASSERT_TRUE(WaitUntil([&] { return HttpGet(port, "/readyz").find("HTTP/1.1 200") == 0; }))
      << HttpGet(port, "/readyz");
  EXPECT_NE(HttpGet(port, "/metrics").find("hcashare_dra_published{driver=\"rdma.hcashare.io\"} 1"),
            std::string::npos);

  // The kubelet's wipe at its start is undone.
  ASSERT_TRUE(api_->DeleteCollection(kSlices, "spec.nodeName=node-a").ok());
  ASSERT_TRUE(WaitUntil([&] { return Devices().size() == 2; }, 2 * kPublishBound));

  // A claim prepared through the daemon's socket, twice, then unprepared after deletion.
  const std::string uid = SeedClaim("nic", "pci-0000-af-00-0");
  for (int i = 0; i < 2; ++i) {
    auto r = dra_kubelet_->Prepare(fake::DraApi::kV1, {{"ml", uid, "nic"}});
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    const auto& claim = r->claims().at(uid);
    ASSERT_EQ(claim.error(), "") << i;
    ASSERT_EQ(claim.devices_size(), 1);
    EXPECT_EQ(claim.devices(0).device_name(), "pci-0000-af-00-0");
    ASSERT_EQ(claim.devices(0).cdi_device_ids_size(), 1);
  }
  const std::string spec = tmp_.path() + "/cdi/hcashare-dra-rdma_hcashare_io-" + uid + ".json";
  const json cdi = json::parse(ReadTextFile(spec));
  EXPECT_NE(cdi.dump().find("/dev/infiniband/rdma_cm"), std::string::npos) << cdi.dump();
  ASSERT_TRUE(api_->Delete(kClaims, "nic"));
  auto un = dra_kubelet_->Unprepare(fake::DraApi::kV1, {{"ml", uid, "nic"}});
  ASSERT_TRUE(un.ok());
  EXPECT_EQ(un->claims().at(uid).error(), "");
  EXPECT_FALSE(std::filesystem::exists(spec));

  // Hot-unplug: the device is reported unhealthy at once, and not prepared any more.
  ASSERT_TRUE(env_.node.RemovePciFunction("0000:af:00.1").ok());
  ASSERT_TRUE(WaitUntil(
      [&] {
        auto d = Devices();
        return !d.count("pci-0000-af-00-1") ||
               d["pci-0000-af-00-1"]["attributes"]["healthy"]["bool"] == false;
      },
      milliseconds(3000)));
  const std::string gone = SeedClaim("gone", "pci-0000-af-00-1");
  auto r = dra_kubelet_->Prepare(fake::DraApi::kV1, {{"ml", gone, "gone"}});
  ASSERT_TRUE(r.ok());
  EXPECT_NE(r->claims().at(gone).error().find("pci-0000-af-00-1"), std::string::npos)
      << r->claims().at(gone).error();

  // SIGTERM: the sockets go, the slices stay for the successor.
  ASSERT_TRUE(p->Signal(SIGTERM).ok());
  ASSERT_TRUE(p->Wait(milliseconds(5000)).ok());
  EXPECT_FALSE(
      std::filesystem::exists(kubelet_root_ + "/plugins_registry/rdma.hcashare.io-reg.sock"));
  EXPECT_FALSE(Devices().empty());
}

// The daemon writes the network data hcashare-cni records for a claim's device into the
// claim's status, and takes it out when the CNI's DEL removes the file.
TEST_F(DraDaemonTest, TheCnisNetworkDataReachesTheClaimsStatus) {
  WriteConfig(kDraConfig);
  ASSERT_TRUE(kubelet_->Start().ok());
  auto p = SpawnDra("status.log");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  ASSERT_TRUE(WaitUntil([&] { return Devices().size() == 2; }))
      << ReadTextFile(tmp_.path() + "/status.log");
  const std::string uid = SeedClaim("nic", "pci-0000-af-00-0");
  dra::DeviceNetworkStatus s;
  s.claim_uid = uid;
  s.claim_namespace = "ml";
  s.claim_name = "nic";
  s.pool = kNode;
  s.device = "pci-0000-af-00-0";
  s.interface_name = "rdma0";
  s.hardware_address = "02:00:00:00:00:01";
  const std::string file =
      dra::NetworkStatusPath(dra::NetworkStatusDir(kubelet_root_, kDriver), uid, s.device);
  ASSERT_TRUE(dra::WriteNetworkStatus(file, s).ok());
  auto status = [&] { return api_->Get(kClaims, "nic")["status"].value("devices", json::array()); };
  ASSERT_TRUE(WaitUntil([&] { return status().size() == 1; }))
      << ReadTextFile(tmp_.path() + "/status.log");
  EXPECT_EQ(status()[0]["networkData"]["interfaceName"], "rdma0");
  // The counter rises once the API server's answer is read, a moment after the status can
  // be seen there.
  const int port = MetricsPort("status.log");
  EXPECT_TRUE(WaitUntil([&] {
    return HttpGet(port, "/metrics")
               .find("hcashare_dra_claim_status_writes_total{driver=\"rdma.hcashare.io\"} 1") !=
           std::string::npos;
  })) << HttpGet(port, "/metrics");
  std::filesystem::remove(file);
  ASSERT_TRUE(WaitUntil([&] { return status().empty(); }));
}

// At the daemon's default health settings an RDMA port state change, which no event
// announces (sysfs cannot signal it), reaches the slice within a second. The second device
// goes down right after the first one's change was published, i.e. just after a poll: with
// a poll interval over a second it would wait that long.
TEST_F(DraDaemonTest, APortStateChangeReachesTheSliceWithinASecondAtTheDefaults) {
  WriteConfig(kDraConfig);
  ASSERT_TRUE(kubelet_->Start().ok());
  auto p = Spawn({"--config", config_, "--kubeconfig", kubeconfig_, "--node-name", kNode,
                  "--cdi-spec-dir", tmp_.path() + "/cdi"},
                 "defaults.log");
  ASSERT_TRUE(p.ok());
  const auto healthy = [&](const char* device) -> std::optional<bool> {
    auto d = Devices();
    if (!d.count(device)) return std::nullopt;
    return d[device]["attributes"]["healthy"]["bool"].get<bool>();
  };
  ASSERT_TRUE(WaitUntil([&] {
    return healthy("pci-0000-af-00-0") == true && healthy("pci-0000-af-00-1") == true;
  })) << ReadTextFile(tmp_.path() + "/defaults.log");
  for (const auto& [address, device] : {std::pair{"0000:af:00.0", "pci-0000-af-00-0"},
                                        std::pair{"0000:af:00.1", "pci-0000-af-00-1"}}) {
    SCOPED_TRACE(device);
    const auto start = std::chrono::steady_clock::now();
    ASSERT_TRUE(env_.node.SetPortState(address, 1, "1: DOWN").ok());
    ASSERT_TRUE(WaitUntil([&] { return healthy(device) == false; }, milliseconds(5000)));
    EXPECT_LE(testing::MsSince(start), kPublishBound.count());
  }
  ASSERT_TRUE(p->Signal(SIGTERM).ok());
  EXPECT_TRUE(p->Wait(milliseconds(5000)).ok());
}

// The claims a kubelet may send, through the daemon's socket: another driver's results mixed
// in, a claim replaced under the same name, the API server failing during Prepare (an error
// for the kubelet to retry, then success), and a prepared device unplugged (reported
// unhealthy at once; its claim still unprepares).
TEST_F(DraDaemonTest, ClaimsAsTheKubeletSendsThem) {
  WriteConfig(kDraConfig);
  ASSERT_TRUE(kubelet_->Start().ok());
  auto p = SpawnDra("claims.log");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  ASSERT_TRUE(WaitUntil([&] { return Devices().size() == 2; }))
      << ReadTextFile(tmp_.path() + "/claims.log");
  ASSERT_TRUE(dra_kubelet_->Register(kDriver).ok());

  // A GPU of another driver and our device in one claim: only ours is prepared.
  json claim = {{"apiVersion", "resource.k8s.io/v1"},
                {"kind", "ResourceClaim"},
                {"metadata", {{"name", "mixed"}, {"namespace", "ml"}}}};
  claim["spec"]["devices"]["requests"] = json::array();
  claim["status"]["allocation"]["devices"]["results"] = json::array(
      {{{"request", "gpu"}, {"driver", "gpu.nvidia.com"}, {"pool", kNode}, {"device", "gpu-0"}},
       {{"request", "nic"}, {"driver", kDriver}, {"pool", kNode}, {"device", "pci-0000-af-00-1"}}});
  api_->Seed(kClaims, claim);
  const std::string mixed = api_->Get(kClaims, "mixed")["metadata"]["uid"].get<std::string>();
  auto r = dra_kubelet_->Prepare(fake::DraApi::kV1beta1, {{"ml", mixed, "mixed"}});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->claims().at(mixed).error(), "");
  ASSERT_EQ(r->claims().at(mixed).devices_size(), 1);
  EXPECT_EQ(r->claims().at(mixed).devices(0).device_name(), "pci-0000-af-00-1");

  // The kubelet names a UID the claim no longer has (deleted and created again).
  const std::string uid = SeedClaim("nic", "pci-0000-af-00-0");
  r = dra_kubelet_->Prepare(fake::DraApi::kV1, {{"ml", "old-" + uid, "nic"}});
  ASSERT_TRUE(r.ok());
  EXPECT_NE(r->claims().at("old-" + uid).error().find("replaced"), std::string::npos)
      << r->claims().at("old-" + uid).error();

  // The API server fails the GET: an error for this claim; the kubelet's retry succeeds.
  api_->InjectError(500, "InternalError", 1);
  r = dra_kubelet_->Prepare(fake::DraApi::kV1, {{"ml", uid, "nic"}});
  ASSERT_TRUE(r.ok());
  EXPECT_NE(r->claims().at(uid).error(), "");
  r = dra_kubelet_->Prepare(fake::DraApi::kV1, {{"ml", uid, "nic"}});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->claims().at(uid).error(), "");

  // The prepared device of "mixed" is unplugged: published unhealthy or gone within a
  // second (health polled every 0.1 s here), and its claim still unprepares.
  const auto unplugged = std::chrono::steady_clock::now();
  ASSERT_TRUE(env_.node.RemovePciFunction("0000:af:00.1").ok());
  ASSERT_TRUE(WaitUntil(
      [&] {
        auto d = Devices();
        return !d.count("pci-0000-af-00-1") ||
               d["pci-0000-af-00-1"]["attributes"]["healthy"]["bool"] == false;
      },
      kPublishBound));
  EXPECT_LT(std::chrono::steady_clock::now() - unplugged, kPublishBound);
  auto un = dra_kubelet_->Unprepare(fake::DraApi::kV1, {{"ml", mixed, "mixed"}});
  ASSERT_TRUE(un.ok());
  EXPECT_EQ(un->claims().at(mixed).error(), "");
}

// Issue 37: on containerd 1.6 a DRA pod started Ready without /dev/infiniband and without
// HCASHARE_RDMA_DEVICES, as the runtime ignores the CDI IDs Prepare returns. The driver reads
// the runtime from its Node and refuses such claims, saying why (the kubelet puts the error
// in the pod's events); once the node runs a runtime with CDI (the kubelet's restart wipes
// the slices, and the driver reads the Node again) the same claim is prepared.
TEST_F(DraDaemonTest, ARuntimeWithoutCdiRefusesClaimsSayingWhy) {
  const auto set_runtime = [&](const std::string& runtime) {
    json node = api_->Get("/api/v1/nodes", kNode);
    node["status"]["nodeInfo"]["containerRuntimeVersion"] = runtime;
    api_->Seed("/api/v1/nodes", node);
  };
  set_runtime("containerd://1.6.20");
  WriteConfig(kDraConfig);
  ASSERT_TRUE(kubelet_->Start().ok());
  auto p = SpawnDra("nocdi.log");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  ASSERT_TRUE(WaitUntil([&] { return Devices().size() == 2; }))
      << ReadTextFile(tmp_.path() + "/nocdi.log");
  ASSERT_TRUE(dra_kubelet_->Register(kDriver).ok());
  const std::string uid = SeedClaim("nic", "pci-0000-af-00-0");
  auto r = dra_kubelet_->Prepare(fake::DraApi::kV1, {{"ml", uid, "nic"}});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const std::string error = r->claims().at(uid).error();
  EXPECT_NE(error.find("claim ml/nic: the node's container runtime containerd://1.6.20 cannot "
                       "give containers CDI devices"),
            std::string::npos)
      << error;
  EXPECT_NE(error.find("containerd 1.7+ with enable_cdi = true"), std::string::npos) << error;
  const std::string spec = tmp_.path() + "/cdi/hcashare-dra-rdma_hcashare_io-" + uid + ".json";
  EXPECT_FALSE(std::filesystem::exists(spec));
  const int port = MetricsPort("nocdi.log");
  ASSERT_GT(port, 0);
  EXPECT_NE(HttpGet(port, "/metrics")
                .find("hcashare_dra_runtime_without_cdi{driver=\"rdma.hcashare.io\"} 1"),
            std::string::npos)
      << HttpGet(port, "/metrics");
  const std::string log = ReadTextFile(tmp_.path() + "/nocdi.log");
  EXPECT_NE(log.find("cannot give containers CDI devices"), std::string::npos) << log;
  EXPECT_NE(log.find("containerd://1.6.20"), std::string::npos) << log;

  set_runtime("containerd://1.7.24");
  ASSERT_TRUE(api_->DeleteCollection(kSlices, "spec.nodeName=node-a").ok());
  ASSERT_TRUE(WaitUntil([&] {
    return HttpGet(port, "/metrics")
               .find("hcashare_dra_runtime_without_cdi{driver=\"rdma.hcashare.io\"} 0") !=
           std::string::npos;
  })) << HttpGet(port, "/metrics");
  r = dra_kubelet_->Prepare(fake::DraApi::kV1, {{"ml", uid, "nic"}});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->claims().at(uid).error(), "");
  EXPECT_TRUE(std::filesystem::exists(spec));
  ASSERT_TRUE(p->Signal(SIGTERM).ok());
  ASSERT_TRUE(p->Wait(milliseconds(5000)).ok());
}

// Issue 33: a corrupt checkpoint stopped the DRA driver from starting (and the CNI then
// failed DRA pods too). The daemon keeps it aside, says so, and serves claims.
TEST_F(DraDaemonTest, ACorruptCheckpointIsKeptAsideAndTheDriverStarts) {
  const std::string dir = kubelet_root_ + "/plugins/" + kDriver;
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/checkpoint.json") << "{\"version\": 1, \"claims\": {\"x\": [";
  WriteConfig(kDraConfig);
  ASSERT_TRUE(kubelet_->Start().ok());
  auto p = SpawnDra("corrupt.log");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  ASSERT_TRUE(WaitUntil([&] { return Devices().size() == 2; }))
      << ReadTextFile(tmp_.path() + "/corrupt.log");
  ASSERT_TRUE(dra_kubelet_->Register(kDriver).ok());
  const std::string uid = SeedClaim("nic", "pci-0000-af-00-0");
  auto r = dra_kubelet_->Prepare(fake::DraApi::kV1, {{"ml", uid, "nic"}});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->claims().at(uid).error(), "");
  const std::string log = ReadTextFile(tmp_.path() + "/corrupt.log");
  EXPECT_NE(log.find("the DRA checkpoint cannot be used; it is kept aside"), std::string::npos)
      << log;
  bool kept = false;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    kept = kept || e.path().filename().string().rfind("checkpoint.json.unusable-", 0) == 0;
  }
  EXPECT_TRUE(kept);
  const int port = MetricsPort("corrupt.log");
  ASSERT_GT(port, 0);
  const std::string metrics = HttpGet(port, "/metrics");
  EXPECT_NE(metrics.find("hcashare_dra_checkpoint_rebuilt{driver=\"rdma.hcashare.io\"} 1"),
            std::string::npos)
      << metrics;
  EXPECT_NE(metrics.find("hcashare_dra_prepared_claims{driver=\"rdma.hcashare.io\"} 1"),
            std::string::npos)
      << metrics;
  ASSERT_TRUE(p->Signal(SIGTERM).ok());
  ASSERT_TRUE(p->Wait(milliseconds(5000)).ok());
}

TEST_F(DraDaemonTest, WithoutDraResourcesTheApiServerIsNeverCalled) {
  WriteConfig(Config(5));
  ASSERT_TRUE(kubelet_->Start().ok());
  auto p = SpawnDra("plain.log");
  ASSERT_TRUE(p.ok());
  ASSERT_TRUE(WaitDevices(5));
  const int port = MetricsPort("plain.log");
  ASSERT_TRUE(WaitUntil([&] { return HttpGet(port, "/readyz").find("HTTP/1.1 200") == 0; }));
  EXPECT_TRUE(api_->Requests().empty());
  EXPECT_FALSE(
      std::filesystem::exists(kubelet_root_ + "/plugins_registry/rdma.hcashare.io-reg.sock"));
}

TEST_F(DraDaemonTest, NoNodeNameIsAClearErrorAndNotReady) {
  WriteConfig(kDraConfig);
  ASSERT_TRUE(kubelet_->Start().ok());
  auto p =
      Spawn({"--config", config_, "--kubeconfig", kubeconfig_, "--metrics-address", "127.0.0.1:0"},
            "noname.log");
  ASSERT_TRUE(p.ok());
  ASSERT_TRUE(WaitDevices(10));  // the device-plugin resource still works
  const int port = MetricsPort("noname.log");
  ASSERT_TRUE(WaitUntil([&] {
    return HttpGet(port, "/readyz").find("DRA driver not started") != std::string::npos;
  })) << HttpGet(port, "/readyz");
  EXPECT_NE(ReadTextFile(tmp_.path() + "/noname.log").find("set --node-name, or NODE_NAME"),
            std::string::npos);
}

}  // namespace
}  // namespace hcashare::testing
