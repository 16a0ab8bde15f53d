#include "testing/resource_slice_schema.h"

#include <array>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "testing/openapi_lite.h"
#include "testing/resource_slice_rules.h"

#ifndef HCASHARE_OPENAPI_DIR
#error "HCASHARE_OPENAPI_DIR (tests/data/openapi) must be defined by the build"
#endif

namespace hcashare::testing {
namespace {

using json = nlohmann::json;

constexpr std::array<const char*, 3> kVersions = {"v1", "v1beta2", "v1beta1"};
constexpr const char* kGroup = "resource.k8s.io";

std::string RootName(const std::string& version) {
  return "io.k8s.api.resource." + version + ".ResourceSlice";
}

json Load(const std::string& version) {
  const std::string path =
      std::string(HCASHARE_OPENAPI_DIR) + "/" + kGroup + "_" + version + "_resourceslice.json";
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read the vendored schema " + path);
  std::stringstream text;
  text << in.rdbuf();
  json doc = json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.contains("components")) {
    throw std::runtime_error("the vendored schema " + path + " is not an OpenAPI document");
  }
  return doc;
}

// KEP-5491's `ints` on the v1 DeviceAttribute (1.36 alpha), absent from v1.34.9.
json WithListAttributes(json doc) {
  json& props = doc.at("components")
                    .at("schemas")
                    .at("io.k8s.api.resource.v1.DeviceAttribute")
                    .at("properties");  // throws when a refresh renamed it
  if (props.contains("ints")) {
    // The vendored schema was regenerated from a server that has it: drop the extension.
    throw std::runtime_error("the vendored v1 DeviceAttribute already has \"ints\"");
  }
  props["ints"] = {{"type", "array"},
                   {"items", {{"type", "integer"}, {"format", "int64"}}},
                   {"x-kubernetes-list-type", "atomic"}};
  return doc;
}

struct Schemas {
  Schemas() {
    for (size_t i = 0; i < kVersions.size(); ++i) plain[i] = Load(kVersions[i]);
    lists = WithListAttributes(plain[0]);
  }
  std::array<json, 3> plain;
  json lists;  // v1 with the list attributes
};

const Schemas& All() {
  static const Schemas schemas;  // thread-safe initialisation; retried after a throw
  return schemas;
}

}  // namespace

const json& ResourceSliceSchema(const std::string& version, SliceSchemaExtension extension) {
  for (size_t i = 0; i < kVersions.size(); ++i) {
    if (version != kVersions[i]) continue;
    if (i == 0 && extension == SliceSchemaExtension::kListAttributes) return All().lists;
    return All().plain[i];
  }
  throw std::invalid_argument("no ResourceSlice schema for version \"" + version + "\"");
}

std::vector<std::string> ValidateResourceSlice(const json& slice, SliceSchemaExtension extension) {
  if (!slice.is_object())
    return {"(root): a ResourceSlice must be an object, got " + std::string(slice.type_name())};
  const std::string prefix = std::string(kGroup) + "/";
  const json api_version = slice.value("apiVersion", json());
  std::string version;
  if (api_version.is_string() && api_version.get<std::string>().rfind(prefix, 0) == 0) {
    version = api_version.get<std::string>().substr(prefix.size());
  }
  bool known = false;
  for (const char* v : kVersions) known = known || version == v;
  if (!known) {
    return {"apiVersion: " + api_version.dump() +
            " is not resource.k8s.io/v1, resource.k8s.io/v1beta2 or resource.k8s.io/v1beta1"};
  }
  const json& doc = ResourceSliceSchema(version, extension);
  std::vector<std::string> problems = ValidateOpenApi(doc, RootName(version), slice);
  // The kind the schema is for, from its x-kubernetes-group-version-kind.
  const json& gvk = doc.at("components")
                        .at("schemas")
                        .at(RootName(version))
                        .at("x-kubernetes-group-version-kind")
                        .at(0);
  if (slice.value("kind", json()) != gvk["kind"]) {
    problems.insert(problems.begin(), "kind: " + slice.value("kind", json()).dump() + " is not " +
                                          gvk["kind"].dump());
  }
  // The server's own rules, on a slice of the right shape.
  if (problems.empty()) problems = ResourceSliceRuleProblems(slice);
  return problems;
}

}  // namespace hcashare::testing
