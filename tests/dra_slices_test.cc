// dra/slices: splitting a pool into ResourceSlices, the per-version device shape and the
// metadata a node-local driver gives its slices (issue 27).
#include "dra/slices.h"

#include <gtest/gtest.h>

#include <string>

namespace hcashare::dra {
namespace {

PoolContent PoolOf(int n, bool list_attribute = false) {
  PoolContent pool{"rdma.hcashare.io", "node-a", "node-a", {}};
  for (int i = 0; i < n; ++i) {
    nlohmann::json d = {
        {"name", "dev-" + std::to_string(1000 + i)},
        {"attributes", {{"rdmaDevice", {{"string", "mlx5_" + std::to_string(i)}}}}}};
    if (list_attribute) d["attributes"]["resource.kubernetes.io/numaNode"] = {{"ints", {0, 1}}};
    pool.devices.push_back(d);
  }
  return pool;
}

TEST(DraSlicesTest, PoolSplitsAt128DevicesWithOneGeneration) {
  auto slices = SliceObjects(PoolOf(300), {ApiVersion::kV1, "uid-1", 7});
  ASSERT_EQ(slices.size(), 3u);
  EXPECT_EQ(slices[0]["spec"]["devices"].size(), 128u);
  EXPECT_EQ(slices[1]["spec"]["devices"].size(), 128u);
  EXPECT_EQ(slices[2]["spec"]["devices"].size(), 44u);
  for (const auto& s : slices) {
    EXPECT_EQ(s["apiVersion"], "resource.k8s.io/v1");
    EXPECT_EQ(s["kind"], "ResourceSlice");
    EXPECT_EQ(s["spec"]["pool"]["generation"], 7);
    EXPECT_EQ(s["spec"]["pool"]["resourceSliceCount"], 3);
    EXPECT_EQ(s["spec"]["nodeName"], "node-a");
    EXPECT_EQ(s["spec"]["driver"], "rdma.hcashare.io");
    EXPECT_EQ(s["metadata"]["generateName"], "node-a-rdma.hcashare.io-");
    EXPECT_EQ(s["metadata"]["ownerReferences"][0]["uid"], "uid-1");
    EXPECT_EQ(s["metadata"]["ownerReferences"][0]["kind"], "Node");
    EXPECT_FALSE(s["metadata"].contains("name"));
  }
  // Order is kept across slices.
  EXPECT_EQ(slices[1]["spec"]["devices"][0]["name"], "dev-1128");
}

TEST(DraSlicesTest, ListAttributesHalveTheSliceSize) {
  auto parts = SplitDevices(PoolOf(130, /*list_attribute=*/true));
  ASSERT_EQ(parts.size(), 3u);
  EXPECT_EQ(parts[0].size(), 64u);
  EXPECT_EQ(parts[2].size(), 2u);
}

TEST(DraSlicesTest, EmptyPoolIsOneEmptySlice) {
  auto slices = SliceObjects(PoolOf(0), {ApiVersion::kV1, "", 1});
  ASSERT_EQ(slices.size(), 1u);
  EXPECT_TRUE(slices[0]["spec"]["devices"].empty());
  EXPECT_EQ(slices[0]["spec"]["pool"]["resourceSliceCount"], 1);
  EXPECT_FALSE(slices[0]["metadata"].contains("ownerReferences"));
}

TEST(DraSlicesTest, V1beta1WrapsTheDeviceInBasic) {
  nlohmann::json d = {{"name", "pci-0000-3b-00-0"},
                      {"attributes", {{"isVF", {{"bool", true}}}}},
                      {"allowMultipleAllocations", true}};
  auto b = ShapeDevice(d, ApiVersion::kV1beta1);
  EXPECT_EQ(b, nlohmann::json::parse(R"({"name":"pci-0000-3b-00-0","basic":{
      "attributes":{"isVF":{"bool":true}},"allowMultipleAllocations":true}})"));
  EXPECT_EQ(ShapeDevice(d, ApiVersion::kV1beta2), d);
  auto slices = SliceObjects(PoolOf(1), {ApiVersion::kV1beta1, "u", 1});
  EXPECT_EQ(slices[0]["apiVersion"], "resource.k8s.io/v1beta1");
  EXPECT_TRUE(slices[0]["spec"]["devices"][0].contains("basic"));
}

TEST(DraSlicesTest, ApiVersionNamesRoundTrip) {
  for (ApiVersion v : {ApiVersion::kV1, ApiVersion::kV1beta2, ApiVersion::kV1beta1}) {
    auto parsed = ParseApiVersion(ApiVersionName(v));
    ASSERT_TRUE(parsed.ok());
    EXPECT_EQ(*parsed, v);
  }
  EXPECT_FALSE(ParseApiVersion("v2").ok());
}

}  // namespace
}  // namespace hcashare::dra
