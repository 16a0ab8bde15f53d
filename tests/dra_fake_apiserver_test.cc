// testing/fake_apiserver.h's DRA parts over HTTPS: discovery of resource.k8s.io and its
// served versions, the field selectors of ResourceSlices, DELETE on the collection (and its
// hook), the validation of slices (422 naming the field), immutable fields, the uid
// precondition, and the consumable-capacity fields an older server drops.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "dra/slices.h"
#include "kube/list.h"
#include "kube/status_error.h"
#include "tests/kube_test_util.h"

namespace hcashare::fake {
namespace {

using ::testing::HasSubstr;
using json = nlohmann::json;

constexpr char kSlices[] = "/apis/resource.k8s.io/v1/resourceslices";

json Device(const std::string& name) {
  return {{"name", name}, {"attributes", {{"rdmaDevice", {{"string", "mlx5_0"}}}}}};
}

// A slice of `driver` on `node` with `devices` in one slice (not split: the server's limits
// are under test), in the shape of `version`.
json Slice(const std::string& node, const std::string& driver = "rdma.hcashare.io",
           const std::vector<json>& devices = {Device("dev-0")},
           dra::ApiVersion version = dra::ApiVersion::kV1) {
  dra::PoolContent pool{driver, node, node, {}};
  json slice = dra::SliceObjects(pool, {version, "", 1})[0];
  for (const json& d : devices) slice["spec"]["devices"].push_back(dra::ShapeDevice(d, version));
  return slice;
}

class DraFakeApiServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = testing::StartFakeApiServer();
    ASSERT_NE(server_, nullptr);
    client_ = testing::UnlimitedClient(*server_);
    ASSERT_NE(client_, nullptr);
  }

  // POSTs `slice` to `collection`; the answer's HTTP code and body.
  std::pair<int, json> Post(const json& slice, const std::string& collection = kSlices) {
    kube::Request req;
    req.verb = kube::Verb::kPost;
    req.path = collection;
    req.body = slice.dump();
    Result<kube::Response> r = client_->Do(req);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? std::make_pair(r->status, json::parse(r->body)) : std::make_pair(0, json());
  }

  // POST `slice` must be refused with 422 naming `field` (also in details.causes).
  void ExpectInvalid(const json& slice, const std::string& field, const std::string& what = "") {
    auto [code, body] = Post(slice);
    EXPECT_EQ(code, 422) << field;
    EXPECT_EQ(body.value("reason", ""), "Invalid") << field;
    EXPECT_THAT(body.value("message", ""), HasSubstr(field + ": " + what));
    bool named = false;
    if (code == 422) {
      for (const json& c : body["details"]["causes"]) named |= c["field"] == field;
    }
    EXPECT_TRUE(named) << field;
  }

  std::unique_ptr<FakeApiServer> server_;
  std::unique_ptr<kube::RestClient> client_;
};

TEST_F(DraFakeApiServerTest, DiscoveryAnswersTheServedVersions) {
  Result<kube::Response> r = client_->Get("/apis/resource.k8s.io");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  json group = json::parse(r->body);
  EXPECT_EQ(group["kind"], "APIGroup");
  EXPECT_EQ(group["name"], "resource.k8s.io");
  EXPECT_EQ(group["versions"],
            json::array({{{"groupVersion", "resource.k8s.io/v1"}, {"version", "v1"}}}));
  EXPECT_EQ(group["preferredVersion"]["version"], "v1");

  server_->SetServedVersions("resource.k8s.io", {"v1beta2", "v1beta1"});
  group = json::parse(client_->Get("/apis/resource.k8s.io")->body);
  ASSERT_EQ(group["versions"].size(), 2u);
  EXPECT_EQ(group["preferredVersion"]["version"], "v1beta2");
  EXPECT_TRUE(kube::IsNotFound(client_->Get(kSlices).status()));
  EXPECT_TRUE(client_->Get("/apis/resource.k8s.io/v1beta1/resourceslices").ok());

  server_->SetServedVersions("resource.k8s.io", {});
  EXPECT_TRUE(kube::IsNotFound(client_->Get("/apis/resource.k8s.io").status()));
}

TEST_F(DraFakeApiServerTest, TheNodeIsServedFromSeed) {
  server_->Seed("/api/v1/nodes", {{"metadata", {{"name", "node-a"}}}});
  Result<kube::Response> r = client_->Get("/api/v1/nodes/node-a");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_FALSE(json::parse(r->body)["metadata"].value("uid", "").empty());
}

TEST_F(DraFakeApiServerTest, FieldSelectorsOnSlicesAndTheWipe) {
  ASSERT_EQ(Post(Slice("node-a")).first, 201);
  ASSERT_EQ(Post(Slice("node-a", "gpu.example.com")).first, 201);
  ASSERT_EQ(Post(Slice("node-b")).first, 201);
  kube::ListOptions o;
  o.field_selector = "spec.nodeName=node-a,spec.driver=rdma.hcashare.io";
  Result<kube::ListResult> l = kube::ListAll(*client_, kSlices, o);
  ASSERT_TRUE(l.ok()) << l.status().ToString();
  ASSERT_EQ(l->items.size(), 1u);
  EXPECT_EQ(l->items[0]["spec"]["nodeName"], "node-a");
  EXPECT_EQ(l->items[0]["spec"]["driver"], "rdma.hcashare.io");

  o.field_selector = "spec.pool.name=node-a";
  Status bad = kube::ListAll(*client_, kSlices, o).status();
  EXPECT_EQ(kube::HttpCodeOf(bad), 400);
  EXPECT_THAT(bad.message(), HasSubstr("spec.pool.name"));
  o.field_selector = "spec.nodeName=node-a";  // only slices have it
  EXPECT_EQ(kube::HttpCodeOf(kube::ListAll(*client_, "/api/v1/configmaps", o).status()), 400);

  // The kubelet's wipe of node-a: every driver's slices there, nothing else.
  ASSERT_TRUE(client_->Delete(std::string(kSlices) + "?fieldSelector=spec.nodeName%3Dnode-a").ok());
  std::vector<json> left = server_->List(kSlices);
  ASSERT_EQ(left.size(), 1u);
  EXPECT_EQ(left[0]["spec"]["nodeName"], "node-b");
  Result<size_t> n = server_->DeleteCollection(kSlices, "spec.driver=rdma.hcashare.io");
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(*n, 1u);
  EXPECT_TRUE(server_->List(kSlices).empty());
  EXPECT_EQ(server_->DeleteCollection(kSlices, "spec.devices=x").status().code(),
            StatusCode::kInvalidArgument);
}

TEST_F(DraFakeApiServerTest, SlicesAreValidated) {
  ASSERT_EQ(Post(Slice("node-a")).first, 201);
  json s = Slice("node-a", "rdma.hcashare.io", {Device("Pci_0")});
  ExpectInvalid(s, "spec.devices[0].name", "Invalid value");
  ExpectInvalid(Slice("node-a", "rdma.hcashare.io", {Device("a"), Device("a")}),
                "spec.devices[1].name", "Duplicate value");
  std::vector<json> many;
  for (int i = 0; i < 129; ++i) many.push_back(Device("d" + std::to_string(i)));
  ExpectInvalid(Slice("node-a", "rdma.hcashare.io", many), "spec.devices", "Too many: 129");
  many.resize(65);
  many[0]["attributes"]["numa"] = {{"ints", {0, 1}}};
  ExpectInvalid(Slice("node-a", "rdma.hcashare.io", many), "spec.devices", "Too many: 65");
  many.resize(128);
  many[0]["attributes"].erase("numa");
  for (size_t i = 65; i < 128; ++i) many[i] = Device("d" + std::to_string(i));
  ASSERT_EQ(Post(Slice("node-b", "rdma.hcashare.io", many)).first, 201);

  json d = Device("dev");
  for (int i = 0; i < 32; ++i) d["attributes"]["a" + std::to_string(i)] = {{"int", i}};
  ExpectInvalid(Slice("node-a", "rdma.hcashare.io", {d}), "spec.devices[0]", "Too many: 33");
  d = Device("dev");
  d["attributes"]["bad-name"] = {{"int", 1}};
  ExpectInvalid(Slice("node-a", "rdma.hcashare.io", {d}), "spec.devices[0].attributes",
                "Invalid value: \"bad-name\"");
  d = Device("dev");
  d["attributes"]["Example.COM/x"] = {{"int", 1}};
  ExpectInvalid(Slice("node-a", "rdma.hcashare.io", {d}), "spec.devices[0].attributes");
  d = Device("dev");
  d["attributes"]["x"] = {{"int", 1}, {"string", "a"}};
  ExpectInvalid(Slice("node-a", "rdma.hcashare.io", {d}), "spec.devices[0].attributes[x]",
                "Invalid value: exactly one value");
  d = Device("dev");
  d["attributes"]["x"] = {{"string", std::string(65, 'a')}};
  ExpectInvalid(Slice("node-a", "rdma.hcashare.io", {d}), "spec.devices[0].attributes[x].string",
                "Too long");
  d = Device("dev");
  d["attributes"]["fw"] = {{"version", "28.39"}};
  ExpectInvalid(Slice("node-a", "rdma.hcashare.io", {d}), "spec.devices[0].attributes[fw].version");
  d = Device("dev");
  d["capacity"] = {{"shares", {{"value", "lots"}}}};
  ExpectInvalid(Slice("node-a", "rdma.hcashare.io", {d}), "spec.devices[0].capacity[shares].value");

  s = Slice("node-a");
  s["spec"]["pool"]["resourceSliceCount"] = 0;
  ExpectInvalid(s, "spec.pool.resourceSliceCount");
  ExpectInvalid(Slice("node-a", "rdma_x.hcashare.io"), "spec.driver");
  ExpectInvalid(Slice("node-a", std::string(61, 'a') + ".io"), "spec.driver");
  // The server checks the driver name lower-cased (kube-apiserver v1.34.9 took this one).
  EXPECT_EQ(Post(Slice("node-c", "Rdma.hcashare.io")).first, 201);
  s = Slice("node-a");
  s["metadata"]["ownerReferences"] = {{{"apiVersion", "v1"}, {"kind", "Node"}, {"name", "n"}}};
  ExpectInvalid(s, "metadata.ownerReferences[0].uid", "Required value");
  s = Slice("node-a");
  s["spec"]["allNodes"] = true;
  ExpectInvalid(s, "spec", "Invalid value: exactly one of");
}

TEST_F(DraFakeApiServerTest, ShapesAndVersionsMustMatchThePath) {
  server_->SetServedVersions("resource.k8s.io", {"v1", "v1beta1"});
  const std::string beta = "/apis/resource.k8s.io/v1beta1/resourceslices";
  json v1beta1 = Slice("node-a", "rdma.hcashare.io", {Device("dev")}, dra::ApiVersion::kV1beta1);
  EXPECT_EQ(Post(v1beta1, beta).first, 201);
  EXPECT_EQ(Post(v1beta1).first, 400);  // apiVersion v1beta1 on the v1 path
  v1beta1["apiVersion"] = "resource.k8s.io/v1";
  ExpectInvalid(v1beta1, "spec.devices[0].basic", "Forbidden");
  json v1 = Slice("node-a");
  v1["apiVersion"] = "resource.k8s.io/v1beta1";
  auto [code, body] = Post(v1, beta);
  EXPECT_EQ(code, 422);
  EXPECT_THAT(body.value("message", ""), HasSubstr("spec.devices[0].basic: Required value"));
}

TEST_F(DraFakeApiServerTest, ImmutableFieldsAndTheUidPrecondition) {
  auto [code, stored] = Post(Slice("node-a"));
  ASSERT_EQ(code, 201);
  const std::string path =
      std::string(kSlices) + "/" + stored["metadata"]["name"].get<std::string>();
  for (const char* pointer : {"/spec/driver", "/spec/pool/name", "/spec/nodeName"}) {
    json changed = stored;
    changed[json::json_pointer(pointer)] = "other.example.com";
    Status st = client_->Put(path, changed.dump()).status();
    EXPECT_EQ(kube::HttpCodeOf(st), 422) << pointer;
    EXPECT_THAT(st.message(), HasSubstr("field is immutable")) << st.ToString();
  }
  json ok = stored;
  ok["spec"]["pool"]["generation"] = 2;
  ASSERT_TRUE(client_->Put(path, ok.dump()).ok());

  json wrong_uid = {{"preconditions", {{"uid", "someone-else"}}}};
  EXPECT_TRUE(kube::IsConflict(client_->Delete(path, wrong_uid.dump()).status()));
  json right = {{"preconditions", {{"uid", stored["metadata"]["uid"]}}}};
  EXPECT_TRUE(client_->Delete(path, right.dump()).ok());
}

TEST_F(DraFakeApiServerTest, WithoutConsumableCapacityTheSharedFieldsAreDropped) {
  json d = Device("shared-0");
  d["allowMultipleAllocations"] = true;
  d["capacity"] = {{"shares", {{"value", "16"}, {"requestPolicy", {{"default", "1"}}}}}};
  auto [code, kept] = Post(Slice("node-a", "rdma.hcashare.io", {d}));
  ASSERT_EQ(code, 201);
  EXPECT_EQ(kept["spec"]["devices"][0], d);

  server_->SetConsumableCapacity(false);
  auto [code2, dropped] = Post(Slice("node-b", "rdma.hcashare.io", {d}));
  ASSERT_EQ(code2, 201);
  const json& back = dropped["spec"]["devices"][0];
  EXPECT_FALSE(back.contains("allowMultipleAllocations"));
  EXPECT_EQ(back["capacity"], json({{"shares", {{"value", "16"}}}}));
}

}  // namespace
}  // namespace hcashare::fake
