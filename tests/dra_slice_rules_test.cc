// testing/resource_slice_rules: what kube-apiserver refuses in a ResourceSlice beyond its
// OpenAPI schema (names, limits, one value per attribute), through ValidateResourceSlice.
#include "testing/resource_slice_rules.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "dra/slices.h"
#include "testing/resource_slice_schema.h"

namespace hcashare::testing {
namespace {

using json = nlohmann::json;
using dra::ApiVersion;

json Device(const std::string& name, int attributes = 1) {
  json d = {{"name", name}, {"attributes", json::object()}};
  for (int i = 0; i < attributes; ++i) {
    d["attributes"]["a" + std::to_string(i)] = {{"int", i}};
  }
  return d;
}

// A slice of `devices` (v1 shape), shaped for `v`, whatever their number.
json SliceOf(std::vector<json> devices, ApiVersion v = ApiVersion::kV1) {
  dra::PoolContent pool{dra::kDefaultDriver, "node-a", "node-a", {Device("d0")}};
  json s = dra::SliceObjects(pool, {v, "0b7c2f52-8f6a-4c1e-9d0e-3a1f5f0d9e11", 1}).at(0);
  s["spec"]["devices"] = json::array();
  for (const auto& d : devices) s["spec"]["devices"].push_back(dra::ShapeDevice(d, v));
  return s;
}

std::string Joined(const std::vector<std::string>& problems) {
  std::string out;
  for (const auto& p : problems) out += p + "\n";
  return out;
}

using Problems = std::vector<std::string>;

// The API server's words for a bad driver name and for a slice placed 0 or 2 ways.
const std::string kDriver = "a lowercase DNS subdomain of at most 63 characters is required";
const std::string kOnePlacement =
    "spec: Invalid value: exactly one of `nodeName`, `nodeSelector`, `allNodes`, "
    "`perDeviceNodeSelection` is required";

TEST(DraSliceRulesTest, NamesMustBeDnsAndQualified) {
  json ok = SliceOf({Device("pci-0000-3b-00-0")});
  ASSERT_EQ(Joined(ValidateResourceSlice(ok)), "");
  json s = ok;
  s["spec"]["driver"] = "rdma_x.hcashare.io";
  s["spec"]["pool"]["name"] = "node_a";
  s["spec"]["devices"] = {Device("pci-0000:3b:00.0"), Device("x"), Device("x")};
  s["spec"]["devices"][1]["attributes"]["bad name"] = {{"int", 1}};
  s["spec"]["devices"][1]["attributes"]["example.com/" + std::string(33, 'a')] = {{"int", 1}};
  s["spec"]["devices"][1]["attributes"]["resource.kubernetes.io/pcieRoot"] = {{"string", "p"}};
  s["spec"]["devices"][1]["capacity"] = {{"shares!", {{"value", "1"}}}};
  auto p = ValidateResourceSlice(s);
  const std::string kLabel =
      ": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
      "start and end with one, at most 63 characters";
  const std::string kIdentifier = ": the name must be a C identifier of at most 32 characters";
  EXPECT_EQ(p, (Problems{
                   "spec.driver: Invalid value: \"rdma_x.hcashare.io\": " + kDriver,
                   "spec.pool.name: Invalid value: \"node_a\": DNS subdomains joined by '/' (at "
                   "most 253)",
                   "spec.devices[0].name: Invalid value: \"pci-0000:3b:00.0\"" + kLabel,
                   "spec.devices[1].attributes: Invalid value: \"bad name\"" + kIdentifier,
                   "spec.devices[1].attributes: Invalid value: \"example.com/" +
                       std::string(33, 'a') + "\"" + kIdentifier,
                   "spec.devices[1].capacity: Invalid value: \"shares!\"" + kIdentifier,
                   "spec.devices[2].name: Duplicate value: \"x\"",
               }))
      << Joined(p);
}

// As kube-apiserver v1.34.9 does: upper case passes, the name is checked lower-cased.
TEST(DraSliceRulesTest, TheDriverNameIsCheckedLowerCased) {
  json s = SliceOf({Device("d0")});
  s["spec"]["driver"] = "RDMA.hcashare.io";
  EXPECT_EQ(Joined(ValidateResourceSlice(s)), "");
  s["spec"]["driver"] = std::string(60, 'a') + ".io";  // 63: the most
  EXPECT_EQ(Joined(ValidateResourceSlice(s)), "");
  s["spec"]["driver"] = std::string(61, 'a') + ".io";
  EXPECT_EQ(ValidateResourceSlice(s),
            Problems{"spec.driver: Invalid value: \"" + s["spec"]["driver"].get<std::string>() +
                     "\": " + kDriver});
}

TEST(DraSliceRulesTest, AttributesHoldExactlyOneWellFormedValue) {
  json d = Device("d0", 0);
  d["attributes"] = {{"two", {{"int", 1}, {"string", "x"}}},
                     {"none", json::object()},
                     {"long", {{"string", std::string(65, 'x')}}},
                     {"fw", {{"version", "28.39"}}},
                     {"fw2", {{"version", "1.2.3-rc.1+build.5"}}}};
  d["capacity"] = {{"shares", {{"value", "1.5.0"}}}, {"mem", {{"value", "1.5Gi"}}}};
  for (ApiVersion v : {ApiVersion::kV1, ApiVersion::kV1beta1}) {
    const std::string at = v == ApiVersion::kV1beta1 ? "spec.devices[0].basic" : "spec.devices[0]";
    auto p = ValidateResourceSlice(SliceOf({d}, v));
    EXPECT_EQ(p, (Problems{
                     at + ".attributes[fw].version: Invalid value: \"28.39\": must be a "
                          "semantic version",
                     at + ".attributes[long].string: Too long: may not be more than 64 bytes",
                     at + ".attributes[none]: Invalid value: exactly one value must be specified",
                     at + ".attributes[two]: Invalid value: exactly one value must be specified",
                     at + ".capacity[shares].value: Invalid value: \"1.5.0\": must be a quantity",
                 }))
        << Joined(p);
  }
}

TEST(DraSliceRulesTest, DeviceAndAttributeLimits) {
  std::vector<json> devices;
  for (int i = 0; i < 129; ++i) devices.push_back(Device("d" + std::to_string(i)));
  EXPECT_EQ(ValidateResourceSlice(SliceOf(devices)),
            Problems{"spec.devices: Too many: 129: must have at most 128 items"});
  devices.resize(128);
  EXPECT_EQ(Joined(ValidateResourceSlice(SliceOf(devices))), "");
  // Taints (or counters, or list attributes) halve it.
  devices.resize(65);
  devices[64]["taints"] = {{{"key", "example.com/broken"}, {"effect", "NoSchedule"}}};
  EXPECT_EQ(ValidateResourceSlice(SliceOf(devices)),
            Problems{"spec.devices: Too many: 65: must have at most 64 items"});
  devices.resize(64);
  devices[63]["attributes"]["numa"] = {{"ints", {0, 1}}};
  EXPECT_EQ(Joined(ValidateResourceSlice(SliceOf(devices), SliceSchemaExtension::kListAttributes)),
            "");

  json full = Device("d0", 31);
  full["capacity"] = {{"shares", {{"value", "4"}}}};
  EXPECT_EQ(Joined(ValidateResourceSlice(SliceOf({full}))), "");
  full["attributes"]["oneMore"] = {{"int", 1}};
  EXPECT_EQ(ValidateResourceSlice(SliceOf({full})),
            Problems{"spec.devices[0]: Too many: 33: must have at most 32 attributes and "
                     "capacities combined"});
}

TEST(DraSliceRulesTest, PlacementPoolAndOwner) {
  json s = SliceOf({Device("d0")});
  s["spec"].erase("nodeName");
  s["spec"]["pool"]["resourceSliceCount"] = 0;
  s["metadata"]["ownerReferences"][0]["uid"] = "";
  EXPECT_EQ(ValidateResourceSlice(s),
            (Problems{"spec.pool.resourceSliceCount: Invalid value: 0: must be greater than zero",
                      kOnePlacement, "metadata.ownerReferences[0].uid: Required value"}));
  s = SliceOf({Device("d0")});
  s["spec"]["allNodes"] = true;
  EXPECT_EQ(ValidateResourceSlice(s), Problems{kOnePlacement});
  s["spec"].erase("nodeName");
  s["metadata"].erase("ownerReferences");
  EXPECT_EQ(Joined(ValidateResourceSlice(s)), "");
}

// The rules run only on a slice of the right shape: a schema problem is reported alone.
TEST(DraSliceRulesTest, SchemaProblemsComeFirst) {
  json s = SliceOf({Device("Not_A_Label")});
  s["spec"]["pool"]["generation"] = "1";
  EXPECT_EQ(ValidateResourceSlice(s),
            Problems{"spec.pool.generation: expected integer, got string \"1\""});
  s["spec"]["pool"]["generation"] = 1;
  EXPECT_EQ(ValidateResourceSlice(s),
            Problems{"spec.devices[0].name: Invalid value: \"Not_A_Label\": a lowercase RFC "
                     "1123 label must consist of lower case alphanumeric characters or '-', "
                     "start and end with one, at most 63 characters"});
}

}  // namespace
}  // namespace hcashare::testing
