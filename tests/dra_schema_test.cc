// Every ResourceSlice that dra::SliceObjects builds validates against the OpenAPI schema the
// API server (v1.34.9) serves for its version, and the usual mistakes do not (issue 27).
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "dra/slices.h"
#include "testing/resource_slice_schema.h"

namespace hcashare::testing {
namespace {

using json = nlohmann::json;
using dra::ApiVersion;

const ApiVersion kAllVersions[] = {ApiVersion::kV1, ApiVersion::kV1beta2, ApiVersion::kV1beta1};

json Str(const std::string& s) { return {{"string", s}}; }

// The attributes the design gives a PCI function (one of each type).
json PciAttributes(const std::string& bdf, const std::string& rdma, bool vf) {
  json a = {{"resource.kubernetes.io/pcieRoot", Str("pci0000:3a")},
            {"resource.kubernetes.io/pciBusID", Str(bdf)},
            {"resource.kubernetes.io/numaNode", {{"int", 0}}},
            {"resourceName", Str("rdma/hca_a")},
            {"rdmaDevice", Str(rdma)},
            {"netdev", Str("ens1f0np0")},
            {"linkType", Str("ethernet")},
            {"pciVendor", Str("15b3")},
            {"pciDevice", Str(vf ? "101e" : "101d")},
            {"isVF", {{"bool", vf}}},
            {"isSF", {{"bool", false}}},
            {"fwVersion", Str("22.39.1002")},
            {"portState", Str("ACTIVE")},
            {"portRateGbps", {{"int", 200}}},
            {"healthy", {{"bool", true}}},
            {"k8s.cni.cncf.io/deviceID", Str(bdf)},
            {"k8s.cni.cncf.io/resourceName", Str("rdma/hca_a")}};
  if (vf) a["pfPciAddress"] = Str("0000:3b:00.0");
  return a;
}

// A node's pool with every kind of device the design names, sorted by name.
dra::PoolContent DesignPool() {
  dra::PoolContent pool{dra::kDefaultDriver, "node-a", "node-a", {}};
  pool.devices.push_back({{"name", "pci-0000-3b-00-0"},
                          {"attributes", PciAttributes("0000:3b:00.0", "mlx5_0", false)}});
  pool.devices.push_back({{"name", "pci-0000-3b-00-2"},
                          {"attributes", PciAttributes("0000:3b:00.2", "mlx5_2", true)}});
  // The reference's example types the firmware as a semantic version: that type too.
  pool.devices.push_back({{"name", "rdma-rxe0"},
                          {"attributes",
                           {{"rdmaDevice", Str("rxe0")},
                            {"linkType", Str("ethernet")},
                            {"fwVersion", {{"version", "1.0.0"}}},
                            {"healthy", {{"bool", true}}}}}});
  json sf = PciAttributes("0000:3b:00.0", "mlx5_5", false);
  sf.erase("resource.kubernetes.io/pciBusID");
  sf["isSF"] = {{"bool", true}};
  sf["pfPciAddress"] = Str("0000:3b:00.0");
  sf["k8s.cni.cncf.io/deviceID"] = Str("mlx5_core.sf.4");
  pool.devices.push_back({{"name", "sf-mlx5-core-sf-4"}, {"attributes", sf}});
  pool.devices.push_back(
      {{"name", "shared-0000-3b-00-0"},
       {"attributes", PciAttributes("0000:3b:00.0", "mlx5_0", false)},
       {"allowMultipleAllocations", true},
       {"capacity",
        {{"shares",
          {{"value", "1000"},
           {"requestPolicy",
            {{"default", "1"}, {"validRange", {{"min", "1"}, {"step", "1"}}}}}}}}}});
  return pool;
}

json FirstSlice(ApiVersion v, const dra::PoolContent& pool = DesignPool()) {
  return dra::SliceObjects(pool, {v, "0b7c2f52-8f6a-4c1e-9d0e-3a1f5f0d9e11", 3}).at(0);
}

std::string Joined(const std::vector<std::string>& problems) {
  std::string out;
  for (const auto& p : problems) out += p + "\n";
  return out;
}

// True when one of `problems` is exactly `expected`.
bool Has(const std::vector<std::string>& problems, const std::string& expected) {
  for (const auto& p : problems) {
    if (p == expected) return true;
  }
  return false;
}

TEST(DraSchemaTest, TheDesignsDevicesValidateInEveryVersion) {
  for (ApiVersion v : kAllVersions) {
    auto slices = dra::SliceObjects(DesignPool(), {v, "uid-1", 3});
    ASSERT_EQ(slices.size(), 1u);
    EXPECT_EQ(Joined(ValidateResourceSlice(slices[0])), "") << dra::ApiVersionName(v);
    // Without the Node's UID (no ownerReference) too.
    auto no_owner = dra::SliceObjects(DesignPool(), {v, "", 1});
    EXPECT_EQ(Joined(ValidateResourceSlice(no_owner.at(0))), "");
  }
}

TEST(DraSchemaTest, SplitAndEmptyPoolsValidate) {
  dra::PoolContent big{dra::kDefaultDriver, "node-a", "node-a", {}};
  for (int i = 0; i < 300; ++i) {
    big.devices.push_back(
        {{"name", "pci-0000-" + std::to_string(100 + i / 8) + "-00-" + std::to_string(i % 8)},
         {"attributes", {{"rdmaDevice", Str("mlx5_" + std::to_string(i))}}}});
  }
  dra::PoolContent empty{dra::kDefaultDriver, "node-a", "node-a", {}};
  for (ApiVersion v : kAllVersions) {
    auto slices = dra::SliceObjects(big, {v, "", 9});
    ASSERT_EQ(slices.size(), 3u);
    for (const auto& s : slices) EXPECT_EQ(Joined(ValidateResourceSlice(s)), "");
    EXPECT_EQ(Joined(ValidateResourceSlice(FirstSlice(v, empty))), "");
  }
}

// `ints` (draNumaNode "list") is not in the v1.34.9 schemas: refused unless the test asks
// for the 1.36 field by name, and then only in v1.
TEST(DraSchemaTest, ListAttributesAreAnExplicitV1Extension) {
  dra::PoolContent pool = DesignPool();
  pool.devices[0]["attributes"]["resource.kubernetes.io/numaNode"] = {{"ints", {0, 1}}};
  const json v1 = FirstSlice(ApiVersion::kV1, pool);
  const std::string field = "spec.devices[0].attributes.resource.kubernetes.io/numaNode.ints";
  auto plain = ValidateResourceSlice(v1);
  EXPECT_TRUE(Has(plain, field + ": unknown field")) << Joined(plain);
  EXPECT_EQ(Joined(ValidateResourceSlice(v1, SliceSchemaExtension::kListAttributes)), "");

  auto beta2 = ValidateResourceSlice(FirstSlice(ApiVersion::kV1beta2, pool),
                                     SliceSchemaExtension::kListAttributes);
  EXPECT_TRUE(Has(beta2, field + ": unknown field")) << Joined(beta2);
  auto beta1 = ValidateResourceSlice(FirstSlice(ApiVersion::kV1beta1, pool),
                                     SliceSchemaExtension::kListAttributes);
  EXPECT_TRUE(Has(beta1,
                  "spec.devices[0].basic.attributes.resource.kubernetes.io/numaNode.ints: "
                  "unknown field"))
      << Joined(beta1);

  // The extension takes int64 items only.
  json bad = v1;
  bad["spec"]["devices"][0]["attributes"]["resource.kubernetes.io/numaNode"]["ints"] = {0, "1"};
  auto wrong = ValidateResourceSlice(bad, SliceSchemaExtension::kListAttributes);
  EXPECT_TRUE(Has(wrong, field + "[1]: expected integer, got string \"1\"")) << Joined(wrong);
  // The v1 schema itself is untouched by the extension's copy.
  EXPECT_FALSE(
      ResourceSliceSchema(
          "v1", SliceSchemaExtension::kNone)["components"]["schemas"]
                                            ["io.k8s.api.resource.v1.DeviceAttribute"]["properties"]
                                                .contains("ints"));
}

TEST(DraSchemaTest, WrongTypesAreRefused) {
  for (ApiVersion v : {ApiVersion::kV1, ApiVersion::kV1beta2}) {
    json s = FirstSlice(v);
    json& attrs = s["spec"]["devices"][0]["attributes"];
    attrs["isVF"] = {{"bool", "false"}};
    attrs["portRateGbps"] = {{"int", "200"}};
    attrs["resource.kubernetes.io/numaNode"] = {{"int", 0.5}};
    s["spec"]["pool"]["generation"] = "3";
    s["spec"]["devices"][4]["allowMultipleAllocations"] = "true";
    s["spec"]["devices"][4]["capacity"]["shares"]["value"] = true;
    auto p = ValidateResourceSlice(s);
    const std::string d0 = "spec.devices[0].attributes.";
    EXPECT_TRUE(Has(p, d0 + "isVF.bool: expected boolean, got string \"false\"")) << Joined(p);
    EXPECT_TRUE(Has(p, d0 + "portRateGbps.int: expected integer, got string \"200\""));
    EXPECT_TRUE(
        Has(p, d0 + "resource.kubernetes.io/numaNode.int: expected integer, got number 0.5"));
    EXPECT_TRUE(Has(p, "spec.pool.generation: expected integer, got string \"3\""));
    EXPECT_TRUE(Has(p,
                    "spec.devices[4].allowMultipleAllocations: expected boolean, got string "
                    "\"true\""));
    EXPECT_EQ(p.size(), 6u) << Joined(p);  // the quantity's oneOf is the sixth
  }
}

TEST(DraSchemaTest, OutOfRangeAndMalformedValuesAreRefused) {
  json s = FirstSlice(ApiVersion::kV1);
  s["spec"]["pool"]["generation"] = 9223372036854775808u;  // 2^63
  s["metadata"]["creationTimestamp"] = "yesterday";
  s["metadata"]["labels"] = nullptr;
  s["metadata"]["ownerReferences"].push_back(s["metadata"]["ownerReferences"][0]);
  auto p = ValidateResourceSlice(s);
  EXPECT_TRUE(Has(p, "spec.pool.generation: 9223372036854775808 does not fit format int64"))
      << Joined(p);
  EXPECT_TRUE(Has(p, "metadata.creationTimestamp: \"yesterday\" is not an RFC 3339 date-time"));
  EXPECT_TRUE(Has(p, "metadata.labels: null is not allowed (the schema is not nullable)"));
  EXPECT_TRUE(Has(p,
                  "metadata.ownerReferences[1]: duplicate entry "
                  "[\"0b7c2f52-8f6a-4c1e-9d0e-3a1f5f0d9e11\"] in a list of type map"));
  EXPECT_EQ(p.size(), 4u) << Joined(p);
}

TEST(DraSchemaTest, UnknownFieldsAreRefusedAsStrictValidationDoes) {
  for (ApiVersion v : kAllVersions) {
    json s = FirstSlice(v);
    s["status"] = json::object();
    s["metadata"]["labelz"] = {{"a", "b"}};
    s["spec"]["pool"]["size"] = 1;
    s["spec"]["devices"][0]["colour"] = "blue";
    s["metadata"]["ownerReferences"][0]["blockOwnerDeletion"] = true;  // known: no problem
    auto p = ValidateResourceSlice(s);
    EXPECT_TRUE(Has(p, "status: unknown field")) << Joined(p);
    EXPECT_TRUE(Has(p, "metadata.labelz: unknown field"));
    EXPECT_TRUE(Has(p, "spec.pool.size: unknown field"));
    EXPECT_TRUE(Has(p, "spec.devices[0].colour: unknown field"));
    EXPECT_EQ(p.size(), 4u) << Joined(p);
  }
}

TEST(DraSchemaTest, MissingRequiredFieldsAreRefused) {
  for (ApiVersion v : kAllVersions) {
    json s = FirstSlice(v);
    s["spec"].erase("driver");
    s["spec"]["pool"].erase("name");
    s["spec"]["devices"][1].erase("name");
    s["metadata"]["ownerReferences"][0].erase("uid");
    json& shared = s["spec"]["devices"][4];
    json& capacity = v == ApiVersion::kV1beta1 ? shared["basic"]["capacity"] : shared["capacity"];
    capacity["shares"].erase("value");
    auto p = ValidateResourceSlice(s);
    EXPECT_TRUE(Has(p, "spec: required field \"driver\" is missing")) << Joined(p);
    EXPECT_TRUE(Has(p, "spec.pool: required field \"name\" is missing"));
    EXPECT_TRUE(Has(p, "spec.devices[1]: required field \"name\" is missing"));
    EXPECT_TRUE(Has(p, "metadata.ownerReferences[0]: required field \"uid\" is missing"));
    const std::string cap = v == ApiVersion::kV1beta1 ? "spec.devices[4].basic.capacity.shares"
                                                      : "spec.devices[4].capacity.shares";
    EXPECT_TRUE(Has(p, cap + ": required field \"value\" is missing"));
    EXPECT_EQ(p.size(), 5u) << Joined(p);
  }
  json s = FirstSlice(ApiVersion::kV1);
  s.erase("spec");
  EXPECT_EQ(ValidateResourceSlice(s),
            std::vector<std::string>{"(root): required field \"spec\" is missing"});
}

// The one shape difference between versions: v1beta1 wraps a device in `basic`.
TEST(DraSchemaTest, ADeviceShapedForAnotherVersionIsRefused) {
  json v1_as_beta1 = FirstSlice(ApiVersion::kV1);
  v1_as_beta1["apiVersion"] = "resource.k8s.io/v1beta1";
  auto p = ValidateResourceSlice(v1_as_beta1);
  for (const char* f : {"attributes", "capacity", "allowMultipleAllocations"}) {
    EXPECT_TRUE(Has(p, std::string("spec.devices[4].") + f + ": unknown field")) << Joined(p);
  }
  EXPECT_TRUE(Has(p, "spec.devices[0].attributes: unknown field"));
  EXPECT_EQ(p.size(), 7u) << Joined(p);  // attributes on 5 devices, and the shared one's 2

  for (const char* version : {"resource.k8s.io/v1", "resource.k8s.io/v1beta2"}) {
    json beta1_as_newer = FirstSlice(ApiVersion::kV1beta1);
    beta1_as_newer["apiVersion"] = version;
    auto q = ValidateResourceSlice(beta1_as_newer);
    EXPECT_EQ(q.size(), 5u) << Joined(q);
    EXPECT_TRUE(Has(q, "spec.devices[0].basic: unknown field")) << version;
  }
}

TEST(DraSchemaTest, TheApiVersionAndKindAreChecked) {
  json s = FirstSlice(ApiVersion::kV1);
  for (const json& bad : {json("resource.k8s.io/v1alpha3"), json("v1"), json(nullptr), json(1)}) {
    s["apiVersion"] = bad;
    auto p = ValidateResourceSlice(s);
    ASSERT_EQ(p.size(), 1u) << Joined(p);
    EXPECT_NE(p[0].find("apiVersion: " + bad.dump() + " is not resource.k8s.io/v1"),
              std::string::npos)
        << p[0];
  }
  s.erase("apiVersion");
  EXPECT_EQ(ValidateResourceSlice(s).size(), 1u);
  s = FirstSlice(ApiVersion::kV1);
  s["kind"] = "ResourceClaim";
  EXPECT_EQ(ValidateResourceSlice(s),
            std::vector<std::string>{"kind: \"ResourceClaim\" is not \"ResourceSlice\""});
  EXPECT_EQ(ValidateResourceSlice(json::array()).size(), 1u);
  EXPECT_THROW(ResourceSliceSchema("v2", SliceSchemaExtension::kNone), std::invalid_argument);
}

// The vendored files are what scripts/openapi-extract.sh makes: trimming one again changes
// nothing (same closure of references, no descriptions), so a regenerated file diffs cleanly.
TEST(DraSchemaTest, VendoredSchemasAreTheExtractScriptsFixedPoint) {
  if (std::system("jq --version >/dev/null 2>&1") != 0) GTEST_SKIP() << "no jq on PATH";
  const std::string dir = std::string(HCASHARE_SOURCE_DIR) + "/tests/data/openapi/";
  for (const char* v : {"v1", "v1beta2", "v1beta1"}) {
    const std::string file = dir + "resource.k8s.io_" + v + "_resourceslice.json";
    const std::string cmd = "bash " + std::string(HCASHARE_SOURCE_DIR) +
                            "/scripts/openapi-extract.sh " + file + " io.k8s.api.resource." + v +
                            ".ResourceSlice";
    std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(cmd.c_str(), "r"), pclose);
    ASSERT_TRUE(pipe);
    std::string out;
    char buf[4096];
    for (size_t n; (n = fread(buf, 1, sizeof buf, pipe.get())) > 0;) out.append(buf, n);
    std::ifstream in(file);
    std::stringstream text;
    text << in.rdbuf();
    EXPECT_EQ(json::parse(out), json::parse(text.str())) << v;
    EXPECT_EQ(json::parse(text.str())["openapi"], "3.0.0");
  }
}

}  // namespace
}  // namespace hcashare::testing
