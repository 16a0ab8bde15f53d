// dra/publisher.h against testing/fake_apiserver.h over HTTPS on loopback: the first
// publication (object shape, the Node's uid as owner), an update in place, 300 devices in
// three slices of one generation, a shrink (obsolete slices deleted first, the generation
// bumped), the kubelet's wipe and a foreign edit repaired, v1beta2- and v1beta1-only
// servers, no resource.k8s.io, 409 / 500 / 429 Retry-After, a server without consumable
// capacity, and a prompt Stop() while the server stalls.
#include "dra/publisher.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "kube/status_error.h"
#include "testing/resource_slice_schema.h"
#include "tests/kube_test_util.h"
#include "tests/test_util.h"

namespace hcashare::dra {
namespace {

using ::hcashare::testing::MsSince;
using ::hcashare::testing::WaitUntil;
using ::testing::HasSubstr;
using json = nlohmann::json;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// The release build checks the second; a sanitized publisher and server are slower.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr milliseconds kWipeBound{5000};
#else
constexpr milliseconds kWipeBound{1000};
#endif

constexpr char kNode[] = "node-a";
constexpr char kSlices[] = "/apis/resource.k8s.io/v1/resourceslices";

// An exclusive device (v1 shape) named dev-<i>, with `port_state` as an attribute.
json Device(int i, const std::string& port_state = "ACTIVE") {
  char name[16];
  std::snprintf(name, sizeof(name), "dev-%04d", i);
  return {{"name", name},
          {"attributes",
           {{"resource.kubernetes.io/pcieRoot", {{"string", "pci0000:3a"}}},
            {"rdmaDevice", {{"string", "mlx5_" + std::to_string(i)}}},
            {"portState", {{"string", port_state}}}}}};
}

// A shared device: several allocations, a consumable capacity of 16 shares.
json SharedDevice() {
  return {
      {"name", "shared-0000-3b-00-0"},
      {"allowMultipleAllocations", true},
      {"attributes", {{"rdmaDevice", {{"string", "mlx5_0"}}}}},
      {"capacity",
       {{"shares",
         {{"value", "16"},
          {"requestPolicy", {{"default", "1"}, {"validRange", {{"min", "1"}, {"step", "1"}}}}}}}}}};
}

PoolContent Pool(int devices, const std::string& port_state = "ACTIVE") {
  PoolContent p{kDefaultDriver, kNode, kNode, {}};
  for (int i = 0; i < devices; ++i) p.devices.push_back(Device(i, port_state));
  return p;
}

// "METHOD path" of each request that writes ResourceSlices.
std::vector<std::string> SliceWrites(const std::vector<fake::SeenRequest>& requests) {
  std::vector<std::string> out;
  for (const auto& r : requests) {
    if (r.method != "GET" && r.target.find("/resourceslices") != std::string::npos) {
      out.push_back(r.method + " " + r.target.substr(0, r.target.find('?')));
    }
  }
  return out;
}

size_t CountMethod(const std::vector<std::string>& writes, const std::string& method) {
  size_t n = 0;
  for (const auto& w : writes) n += w.rfind(method + " ", 0) == 0;
  return n;
}

class DraPublisherTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = testing::StartFakeApiServer();
    ASSERT_NE(server_, nullptr);
    server_->Seed("/api/v1/nodes", {{"metadata", {{"name", kNode}}}});
    client_ = testing::UnlimitedClient(*server_);
    ASSERT_NE(client_, nullptr);
  }

  void TearDown() override {
    if (server_) CheckSent();
  }

  // Every slice POSTed or PUT since the log was last cleared matches the OpenAPI schema of
  // its version and the API server's rules (testing/resource_slice_schema.h).
  void CheckSent() {
    for (const auto& r : server_->Requests()) {
      if ((r.method != "POST" && r.method != "PUT") ||
          r.target.find("/resourceslices") == std::string::npos) {
        continue;
      }
      std::vector<std::string> problems =
          testing::ValidateResourceSlice(json::parse(r.body, nullptr, false));
      EXPECT_TRUE(problems.empty())
          << r.method << " " << r.target << ": " << ::testing::PrintToString(problems);
      ++checked_;
    }
  }

  PublisherOptions Options() {
    PublisherOptions o;
    o.node_name = kNode;
    o.backoff.initial = milliseconds(10);
    o.backoff.max = milliseconds(2000);
    o.backoff_seed = 1;
    return o;
  }

  // A started publisher given `pool`.
  std::unique_ptr<SlicePublisher> Started(const PoolContent& pool) {
    auto p = std::make_unique<SlicePublisher>(client_.get(), Options());
    EXPECT_TRUE(p->Update(pool).ok());
    Status st = p->Start();
    EXPECT_TRUE(st.ok()) << st.ToString();
    return p;
  }

  // Started(pool), published, its watch open and the request log cleared.
  std::unique_ptr<SlicePublisher> Published(const PoolContent& pool) {
    auto p = Started(pool);
    EXPECT_TRUE(p->WaitPublished(milliseconds(10000))) << p->status().last_error.ToString();
    EXPECT_TRUE(WaitUntil([&] { return server_->open_watches() == 1; }));
    CheckSent();
    server_->ClearRequests();
    return p;
  }

  std::vector<json> Slices(const std::string& collection = kSlices) {
    return server_->List(collection);
  }

  // The devices of every slice in `collection`, by name order of the slices.
  std::vector<json> PublishedDevices(const std::string& collection = kSlices) {
    std::vector<json> out;
    for (const json& s : Slices(collection)) {
      for (const json& d : s["spec"]["devices"]) out.push_back(d);
    }
    std::sort(out.begin(), out.end(),
              [](const json& a, const json& b) { return a["name"] < b["name"]; });
    return out;
  }

  // Waits until the server holds exactly `pool`'s devices.
  bool WaitDevices(const PoolContent& pool, milliseconds timeout = milliseconds(10000)) {
    return WaitUntil([&] { return PublishedDevices() == pool.devices; }, timeout);
  }

  std::string NodeUid() { return server_->Get("/api/v1/nodes", kNode)["metadata"]["uid"]; }

  std::unique_ptr<fake::FakeApiServer> server_;
  std::unique_ptr<kube::RestClient> client_;
  size_t checked_ = 0;  // slices checked against the schema
};

TEST_F(DraPublisherTest, FirstPublishHasTheShapeAndTheNodeAsOwner) {
  PoolContent pool = Pool(3);
  pool.devices.push_back(SharedDevice());
  auto p = Started(pool);
  ASSERT_TRUE(p->WaitPublished(milliseconds(10000))) << p->status().last_error.ToString();

  std::vector<json> slices = Slices();
  ASSERT_EQ(slices.size(), 1u);
  const json& s = slices[0];
  EXPECT_EQ(s["apiVersion"], "resource.k8s.io/v1");
  EXPECT_EQ(s["kind"], "ResourceSlice");
  EXPECT_THAT(s["metadata"]["name"].get<std::string>(),
              ::testing::StartsWith("node-a-rdma.hcashare.io-"));
  const json& owner = s["metadata"]["ownerReferences"][0];
  EXPECT_EQ(owner["kind"], "Node");
  EXPECT_EQ(owner["name"], kNode);
  EXPECT_EQ(owner["uid"], NodeUid());
  EXPECT_EQ(owner["controller"], true);
  EXPECT_EQ(s["spec"]["driver"], kDefaultDriver);
  EXPECT_EQ(s["spec"]["nodeName"], kNode);
  EXPECT_EQ(s["spec"]["pool"],
            json({{"name", kNode}, {"generation", 1}, {"resourceSliceCount", 1}}));
  EXPECT_EQ(s["spec"]["devices"], json(pool.devices));  // the shared one with its policy

  PublisherStatus st = p->status();
  EXPECT_TRUE(st.published);
  EXPECT_TRUE(st.last_error.ok()) << st.last_error.ToString();
  EXPECT_TRUE(st.shared_refused.ok());
  ASSERT_TRUE(st.version.has_value());
  EXPECT_EQ(*st.version, ApiVersion::kV1);
  EXPECT_EQ(st.node_uid, NodeUid());
  EXPECT_EQ(st.generation, 1);
  EXPECT_EQ(st.slices, 1u);
  EXPECT_EQ(st.publish_count, 1u);
  EXPECT_EQ(st.writes, 1u);
  EXPECT_GT(st.last_latency.count(), 0);
  EXPECT_EQ(SliceWrites(server_->Requests()),
            std::vector<std::string>{"POST " + std::string(kSlices)});
  CheckSent();  // the shared device's fields too
  EXPECT_EQ(checked_, 1u);
}

TEST_F(DraPublisherTest, ContentChangeIsOnePutInPlaceKeepingTheGeneration) {
  auto p = Published(Pool(3));
  const std::string name = Slices()[0]["metadata"]["name"];
  ASSERT_TRUE(p->Update(Pool(3)).ok());  // equal: nothing to send
  EXPECT_TRUE(p->status().published);
  ASSERT_TRUE(p->Update(Pool(3, "DOWN")).ok());
  ASSERT_TRUE(p->WaitPublished(milliseconds(10000)));
  ASSERT_TRUE(WaitDevices(Pool(3, "DOWN")));

  EXPECT_EQ(SliceWrites(server_->Requests()),
            std::vector<std::string>{"PUT " + std::string(kSlices) + "/" + name});
  std::vector<json> slices = Slices();
  ASSERT_EQ(slices.size(), 1u);
  EXPECT_EQ(slices[0]["metadata"]["name"], name);
  EXPECT_EQ(slices[0]["spec"]["pool"]["generation"], 1);
  EXPECT_EQ(p->status().generation, 1);
  EXPECT_EQ(p->status().publish_count, 2u);
}

TEST_F(DraPublisherTest, ThreeHundredDevicesAreThreeSlicesOfOneGeneration) {
  auto p = Started(Pool(300));
  ASSERT_TRUE(p->WaitPublished(milliseconds(10000))) << p->status().last_error.ToString();
  std::vector<json> slices = Slices();
  ASSERT_EQ(slices.size(), 3u);
  std::multiset<size_t> sizes;
  for (const json& s : slices) {
    EXPECT_EQ(s["spec"]["pool"]["generation"], 1);
    EXPECT_EQ(s["spec"]["pool"]["resourceSliceCount"], 3);
    sizes.insert(s["spec"]["devices"].size());
  }
  EXPECT_EQ(sizes, (std::multiset<size_t>{44, 128, 128}));
  EXPECT_EQ(PublishedDevices(), Pool(300).devices);
  EXPECT_EQ(CountMethod(SliceWrites(server_->Requests()), "POST"), 3u);
  EXPECT_EQ(p->status().slices, 3u);
}

TEST_F(DraPublisherTest, ShrinkingDeletesObsoleteSlicesFirstAndBumpsTheGeneration) {
  auto p = Published(Pool(300));
  ASSERT_TRUE(p->Update(Pool(10)).ok());
  ASSERT_TRUE(p->WaitPublished(milliseconds(10000)));
  ASSERT_TRUE(WaitDevices(Pool(10)));

  std::vector<json> slices = Slices();
  ASSERT_EQ(slices.size(), 1u);
  EXPECT_EQ(slices[0]["spec"]["pool"]["generation"], 2);
  EXPECT_EQ(slices[0]["spec"]["pool"]["resourceSliceCount"], 1);
  std::vector<std::string> writes = SliceWrites(server_->Requests());
  ASSERT_EQ(writes.size(), 3u) << ::testing::PrintToString(writes);
  EXPECT_THAT(writes[0], ::testing::StartsWith("DELETE "));
  EXPECT_THAT(writes[1], ::testing::StartsWith("DELETE "));
  EXPECT_THAT(writes[2], ::testing::StartsWith("PUT "));
  for (const auto& r : server_->Requests()) {
    if (r.method != "DELETE") continue;
    json body = json::parse(r.body);
    EXPECT_TRUE(body["preconditions"].contains("uid")) << r.body;
    EXPECT_TRUE(body["preconditions"].contains("resourceVersion")) << r.body;
  }
  EXPECT_EQ(p->status().generation, 2);
}

TEST_F(DraPublisherTest, TheKubeletsWipeIsUndoneWithinASecond) {
  auto p = Published(Pool(5));
  Result<size_t> wiped = server_->DeleteCollection(kSlices, "spec.nodeName=node-a");
  ASSERT_TRUE(wiped.ok()) << wiped.status().ToString();
  ASSERT_EQ(*wiped, 1u);
  const auto t0 = Clock::now();
  ASSERT_TRUE(WaitDevices(Pool(5), kWipeBound)) << MsSince(t0) << " ms";
  EXPECT_EQ(Slices()[0]["spec"]["pool"]["generation"], 2);  // above the one wiped
  EXPECT_EQ(Slices()[0]["metadata"]["ownerReferences"][0]["uid"], NodeUid());
  ASSERT_TRUE(WaitUntil([&] { return p->status().publish_count == 2; }));
}

TEST_F(DraPublisherTest, ANodeMadeAgainIsTheNewOwner) {
  auto p = Published(Pool(5));
  const std::string old_uid = NodeUid();
  ASSERT_TRUE(server_->Delete("/api/v1/nodes", kNode));
  server_->Seed("/api/v1/nodes", {{"metadata", {{"name", kNode}}}});
  ASSERT_NE(NodeUid(), old_uid);
  // The garbage collector removes the slices of the Node that went.
  ASSERT_TRUE(server_->DeleteCollection(kSlices).ok());
  ASSERT_TRUE(WaitUntil([&] {
    auto s = Slices();
    return s.size() == 1 && s[0]["metadata"]["ownerReferences"][0]["uid"] == NodeUid();
  }));
  EXPECT_EQ(p->status().node_uid, NodeUid());
}

TEST_F(DraPublisherTest, SomeoneElsesEditIsRepaired) {
  auto p = Published(Pool(4));
  json edited = Slices()[0];
  edited["spec"]["devices"][1]["attributes"]["portState"] = {{"string", "tampered"}};
  ASSERT_TRUE(client_
                  ->Put(std::string(kSlices) + "/" + edited["metadata"]["name"].get<std::string>(),
                        edited.dump())
                  .ok());
  ASSERT_TRUE(WaitUntil([&] {
    auto s = Slices();
    return s.size() == 1 && s[0]["spec"]["devices"] == json(Pool(4).devices) &&
           s[0]["metadata"]["resourceVersion"] != edited["metadata"]["resourceVersion"];
  }));
  EXPECT_EQ(Slices()[0]["spec"]["pool"]["generation"], 1);              // in place
  EXPECT_EQ(CountMethod(SliceWrites(server_->Requests()), "PUT"), 2u);  // theirs and ours
}

TEST_F(DraPublisherTest, AServerWithV1beta2AndV1beta1GetsV1beta2) {
  server_->SetServedVersions("resource.k8s.io", {"v1beta1", "v1beta2"});
  auto p = Started(Pool(2));
  ASSERT_TRUE(p->WaitPublished(milliseconds(10000))) << p->status().last_error.ToString();
  std::vector<json> slices = Slices("/apis/resource.k8s.io/v1beta2/resourceslices");
  ASSERT_EQ(slices.size(), 1u);
  EXPECT_EQ(slices[0]["apiVersion"], "resource.k8s.io/v1beta2");
  EXPECT_EQ(slices[0]["spec"]["devices"], json(Pool(2).devices));
  EXPECT_EQ(*p->status().version, ApiVersion::kV1beta2);
}

TEST_F(DraPublisherTest, AV1beta1OnlyServerGetsTheBasicShape) {
  server_->SetServedVersions("resource.k8s.io", {"v1beta1"});
  auto p = Started(Pool(2));
  ASSERT_TRUE(p->WaitPublished(milliseconds(10000))) << p->status().last_error.ToString();
  std::vector<json> slices = Slices("/apis/resource.k8s.io/v1beta1/resourceslices");
  ASSERT_EQ(slices.size(), 1u);
  EXPECT_EQ(slices[0]["apiVersion"], "resource.k8s.io/v1beta1");
  const json& d = slices[0]["spec"]["devices"][0];
  EXPECT_EQ(d["name"], "dev-0000");
  EXPECT_EQ(d["basic"]["attributes"], Device(0)["attributes"]);
  EXPECT_FALSE(d.contains("attributes"));
  // Updates keep the shape (an in-place PUT on the v1beta1 path).
  server_->ClearRequests();
  ASSERT_TRUE(p->Update(Pool(2, "DOWN")).ok());
  ASSERT_TRUE(WaitUntil([&] {
    auto s = Slices("/apis/resource.k8s.io/v1beta1/resourceslices");
    return s.size() == 1 &&
           s[0]["spec"]["devices"][1]["basic"]["attributes"]["portState"]["string"] == "DOWN";
  }));
}

TEST_F(DraPublisherTest, NoResourceGroupIsAClearError) {
  server_->SetServedVersions("resource.k8s.io", {});
  auto p = Started(Pool(2));
  ASSERT_TRUE(WaitUntil([&] { return !p->status().last_error.ok(); }));
  PublisherStatus st = p->status();
  EXPECT_THAT(st.last_error.message(),
              HasSubstr("the API server does not serve resource.k8s.io (DRA off?)"));
  EXPECT_FALSE(st.published);
  EXPECT_FALSE(st.version.has_value());
  EXPECT_TRUE(SliceWrites(server_->Requests()).empty());
  // Turned on later: found on a retry.
  server_->SetServedVersions("resource.k8s.io", {"v1"});
  EXPECT_TRUE(p->WaitPublished(milliseconds(10000))) << p->status().last_error.ToString();
}

TEST_F(DraPublisherTest, AMissingNodeIsNamed) {
  ASSERT_TRUE(server_->Delete("/api/v1/nodes", kNode));
  auto p = Started(Pool(1));
  ASSERT_TRUE(WaitUntil([&] { return !p->status().last_error.ok(); }));
  EXPECT_THAT(p->status().last_error.message(), HasSubstr("node \"node-a\" not found"));
}

TEST_F(DraPublisherTest, AConflictOnPutIsReadAgainAndRetried) {
  auto p = Published(Pool(3));
  server_->InjectError(409, "Conflict", 1);
  ASSERT_TRUE(p->Update(Pool(3, "DOWN")).ok());
  ASSERT_TRUE(p->WaitPublished(milliseconds(10000)));
  ASSERT_TRUE(WaitDevices(Pool(3, "DOWN")));
  std::vector<std::string> seen;
  for (const auto& r : server_->Requests()) {
    if (r.target.find("/resourceslices/") != std::string::npos) seen.push_back(r.method);
  }
  EXPECT_EQ(seen, (std::vector<std::string>{"PUT", "GET", "PUT"}));
  EXPECT_TRUE(p->status().last_error.ok());
  EXPECT_EQ(Slices()[0]["spec"]["pool"]["generation"], 1);
}

TEST_F(DraPublisherTest, ServerErrorsAreRetriedUntilSuccess) {
  auto p = Published(Pool(3));
  server_->InjectError(500, "InternalError", 3);
  ASSERT_TRUE(p->Update(Pool(3, "DOWN")).ok());
  ASSERT_TRUE(WaitDevices(Pool(3, "DOWN")));
  ASSERT_TRUE(p->WaitPublished(milliseconds(10000)));
  EXPECT_EQ(CountMethod(SliceWrites(server_->Requests()), "PUT"), 4u);
  EXPECT_TRUE(p->status().last_error.ok());
}

TEST_F(DraPublisherTest, TooManyRequestsWaitsForRetryAfter) {
  auto p = Published(Pool(3));
  server_->InjectError(429, "TooManyRequests", 1, 1);
  const auto t0 = Clock::now();
  ASSERT_TRUE(p->Update(Pool(3, "DOWN")).ok());
  ASSERT_TRUE(WaitUntil([&] { return !p->status().last_error.ok(); }));
  EXPECT_TRUE(kube::IsTooManyRequests(p->status().last_error));
  ASSERT_TRUE(WaitDevices(Pool(3, "DOWN")));
  // The back-off alone would have retried after 5-10 ms.
  EXPECT_GE(MsSince(t0), 950);
  EXPECT_EQ(CountMethod(SliceWrites(server_->Requests()), "PUT"), 2u);
}

TEST_F(DraPublisherTest, SharedDevicesNeedConsumableCapacity) {
  server_->SetConsumableCapacity(false);
  PoolContent pool = Pool(2);
  pool.devices.push_back(SharedDevice());
  auto p = Started(pool);
  ASSERT_TRUE(WaitUntil([&] { return !p->status().shared_refused.ok() && p->status().published; }))
      << p->status().last_error.ToString();
  EXPECT_THAT(p->status().shared_refused.message(),
              HasSubstr("shared DRA resources need consumable capacity: Kubernetes 1.36+ "
                        "(DRAConsumableCapacity)"));
  EXPECT_THAT(p->status().shared_refused.message(), HasSubstr("shared-0000-3b-00-0"));
  // Left out, not published as a device of one allocation.
  EXPECT_TRUE(WaitDevices(Pool(2)));
  for (const json& d : PublishedDevices()) EXPECT_FALSE(d.contains("allowMultipleAllocations"));
}

// A device tainted as render.cc taints an unhealthy one.
json Tainted(json device, const std::string& effect = "NoSchedule") {
  device["taints"] = json::array({{{"key", std::string(kDefaultDriver) + "/unhealthy"},
                                   {"effect", effect},
                                   {"timeAdded", "2026-12-06T03:04:05Z"}}});
  return device;
}

// Issue 33: unhealthy devices were still handed out. Where the API server serves device
// taints they are published as sent (the time they were added included, so that the
// server's default changes nothing and a repeat sends nothing).
TEST_F(DraPublisherTest, TaintsArePublishedWhereServed) {
  PoolContent pool = Pool(3);
  pool.devices[1] = Tainted(pool.devices[1]);
  auto p = Published(pool);
  const std::vector<json> devices = PublishedDevices();
  ASSERT_EQ(devices.size(), 3u);
  EXPECT_EQ(devices[1]["taints"], pool.devices[1]["taints"]);
  EXPECT_TRUE(p->status().taints_refused.ok());
  server_->ClearRequests();
  ASSERT_TRUE(p->Update(pool).ok());
  ASSERT_TRUE(p->WaitPublished(milliseconds(10000)));
  EXPECT_TRUE(SliceWrites(server_->Requests()).empty());
  // Healthy again: the taint goes.
  ASSERT_TRUE(p->Update(Pool(3)).ok());
  ASSERT_TRUE(WaitDevices(Pool(3)));
}

// A server without DRADeviceTaints (v1.34's default) drops them: the publisher notices,
// says so, and stops sending them rather than rewriting the slice for ever.
TEST_F(DraPublisherTest, ADroppedTaintIsNoticedAndNotSentAgain) {
  server_->SetDeviceTaints(false);
  PoolContent pool = Pool(3);
  pool.devices[2] = Tainted(pool.devices[2], "NoExecute");
  auto p = Started(pool);
  ASSERT_TRUE(WaitUntil([&] { return !p->status().taints_refused.ok() && p->status().published; }))
      << p->status().last_error.ToString();
  EXPECT_THAT(p->status().taints_refused.message(), HasSubstr("DRADeviceTaints"));
  EXPECT_TRUE(WaitDevices(Pool(3)));
  server_->ClearRequests();
  PoolContent changed = pool;
  changed.devices[0] = Device(0, "DOWN");
  ASSERT_TRUE(p->Update(changed).ok());
  PoolContent expected = Pool(3);
  expected.devices[0] = Device(0, "DOWN");
  ASSERT_TRUE(WaitDevices(expected));
  // Acknowledged after one write: the plan is empty again, with no taint to put back.
  ASSERT_TRUE(p->WaitPublished(milliseconds(10000)));
  EXPECT_EQ(CountMethod(SliceWrites(server_->Requests()), "PUT"), 1u);
}

TEST_F(DraPublisherTest, StopIsPromptWhileTheServerStalls) {
  auto p = Published(Pool(3));
  server_->SetStall(true);
  ASSERT_TRUE(p->Update(Pool(3, "DOWN")).ok());
  ASSERT_TRUE(WaitUntil([&] { return !SliceWrites(server_->Requests()).empty(); }));
  const auto t0 = Clock::now();
  p->Stop();
  EXPECT_LT(MsSince(t0), 500);
  EXPECT_FALSE(p->status().published);
}

TEST_F(DraPublisherTest, ARestartWithTheSameContentSendsNothing) {
  auto first = Published(Pool(200));
  first->Stop();
  server_->ClearRequests();
  auto second = Started(Pool(200));
  ASSERT_TRUE(second->WaitPublished(milliseconds(10000)));
  EXPECT_TRUE(SliceWrites(server_->Requests()).empty())
      << ::testing::PrintToString(SliceWrites(server_->Requests()));
  EXPECT_EQ(second->status().generation, 1);
  EXPECT_EQ(second->status().slices, 2u);
  EXPECT_EQ(second->status().publish_count, 0u);
}

TEST_F(DraPublisherTest, LeftoversOfAnOlderGenerationAndAnotherPoolAreDeleted) {
  auto p = Published(Pool(2));
  json stale = Slices()[0];
  stale["metadata"] = {{"name", "stale-generation"}};
  stale["spec"]["pool"]["generation"] = 0;
  server_->Seed(kSlices, stale);
  json other = stale;
  other["metadata"] = {{"name", "other-pool"}};
  other["spec"]["pool"]["name"] = "node-a-old";
  server_->Seed(kSlices, other);
  ASSERT_TRUE(WaitUntil([&] { return Slices().size() == 1; }));
  EXPECT_EQ(Slices()[0]["spec"]["pool"]["generation"], 1);  // nothing else changed
  EXPECT_EQ(CountMethod(SliceWrites(server_->Requests()), "DELETE"), 2u);
  EXPECT_EQ(CountMethod(SliceWrites(server_->Requests()), "PUT"), 0u);
}

TEST_F(DraPublisherTest, UpdatesFromAnotherThreadEndWithTheLastPool) {
  auto p = Published(Pool(100));
  std::thread updater([&] {
    for (int i = 0; i < 50; ++i) {
      EXPECT_TRUE(p->Update(Pool(100 + (i % 2) * 100, i % 3 ? "ACTIVE" : "DOWN")).ok());
    }
    EXPECT_TRUE(p->Update(Pool(7)).ok());
  });
  for (int i = 0; i < 20; ++i) (void)p->status();  // reads meanwhile (TSan)
  updater.join();
  ASSERT_TRUE(WaitDevices(Pool(7)));
  ASSERT_TRUE(p->WaitPublished(milliseconds(10000)));
  EXPECT_EQ(Slices().size(), 1u);
  EXPECT_EQ(Slices()[0]["spec"]["pool"]["generation"], p->status().generation);
}

TEST(SlicePlanTest, TheViewHidesWhatTheInformerHasNotSeen) {
  auto cached = [](const std::string& name, const std::string& rv) {
    return std::make_shared<const json>(
        json{{"metadata", {{"name", name}, {"resourceVersion", rv}}}});
  };
  SliceView view;
  view.Wrote({{"metadata", {{"name", "a"}, {"resourceVersion", "12"}}}});
  view.Wrote({{"metadata", {{"name", "new"}, {"resourceVersion", "13"}}}});
  view.Deleted("gone");
  // The informer is at 11: it has the old a, the deleted one, and not the new one.
  std::vector<json> v = view.Merge({cached("a", "10"), cached("gone", "9")}, "11");
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(v[0]["metadata"]["resourceVersion"], "12");
  EXPECT_EQ(v[1]["metadata"]["name"], "new");
  // At 20 it has seen everything: a edited since (20), new deleted since, gone gone.
  v = view.Merge({cached("a", "20")}, "20");
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0]["metadata"]["resourceVersion"], "20");
  EXPECT_TRUE(VersionAtLeast("10", "9"));
  EXPECT_FALSE(VersionAtLeast("9", "10"));
  EXPECT_FALSE(VersionAtLeast("abc", "abd"));
}

TEST(SlicePlanTest, OneChangedSliceOfThreeIsAnUpdateInPlace) {
  PoolContent pool = Pool(300);
  std::vector<json> existing = SliceObjects(pool, {ApiVersion::kV1, "uid-1", 4});
  for (size_t i = 0; i < existing.size(); ++i) {
    existing[i]["metadata"]["name"] = "s" + std::to_string(i);
    existing[i]["metadata"]["resourceVersion"] = std::to_string(i + 1);
  }
  SlicePlan same = PlanSlices(existing, pool, {ApiVersion::kV1, "uid-1", 0}, 0);
  EXPECT_TRUE(same.empty());
  EXPECT_EQ(same.generation, 4);
  pool.devices[200] = Device(200, "DOWN");
  SlicePlan one = PlanSlices(existing, pool, {ApiVersion::kV1, "uid-1", 0}, 0);
  EXPECT_FALSE(one.bumped);
  ASSERT_EQ(one.updates.size(), 1u);
  EXPECT_EQ(one.updates[0]["metadata"]["name"], "s1");
  EXPECT_EQ(one.updates[0]["metadata"]["resourceVersion"], "2");
  EXPECT_EQ(one.updates[0]["spec"]["pool"]["generation"], 4);
  pool.devices[0] = Device(0, "DOWN");  // two slices change: a new generation
  SlicePlan two = PlanSlices(existing, pool, {ApiVersion::kV1, "uid-1", 0}, 0);
  EXPECT_TRUE(two.bumped);
  EXPECT_EQ(two.generation, 5);
  EXPECT_EQ(two.updates.size(), 3u);
  // Another owner uid (the Node was re-created): every slice changes.
  EXPECT_EQ(PlanSlices(existing, Pool(300), {ApiVersion::kV1, "uid-2", 0}, 0).updates.size(), 3u);
  // Nothing there after a wipe: above the last generation written.
  SlicePlan wiped = PlanSlices({}, pool, {ApiVersion::kV1, "uid-1", 0}, 5);
  EXPECT_EQ(wiped.generation, 6);
  EXPECT_EQ(wiped.creates.size(), 3u);
}

TEST_F(DraPublisherTest, StopIsPromptWhileDiscoveryStalls) {
  server_->SetStall(true);
  auto p = Started(Pool(3));
  ASSERT_TRUE(WaitUntil([&] { return !server_->Requests().empty(); }));
  const auto t0 = Clock::now();
  p->Stop();
  EXPECT_LT(MsSince(t0), 500);
  EXPECT_EQ(server_->Requests().size(), 1u);  // the discovery, never answered
}

TEST_F(DraPublisherTest, BadNamesAndForeignPoolsAreRefused) {
  PublisherOptions o = Options();
  o.driver = "RDMA_driver";
  SlicePublisher bad(client_.get(), o);
  Status st = bad.Start();
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(st.message(), HasSubstr("RDMA_driver"));
  o = Options();
  o.node_name = "";
  EXPECT_EQ(SlicePublisher(client_.get(), o).Start().code(), StatusCode::kInvalidArgument);

  SlicePublisher p(client_.get(), Options());
  PoolContent other = Pool(1);
  other.node_name = "node-b";
  st = p.Update(other);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(st.message(), HasSubstr("node-b"));
  EXPECT_EQ(p.Update(Pool(static_cast<int>(kMaxPoolDevices) + 1)).code(),
            StatusCode::kInvalidArgument);
  ASSERT_TRUE(p.Start().ok());
  EXPECT_EQ(p.Start().code(), StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace hcashare::dra
