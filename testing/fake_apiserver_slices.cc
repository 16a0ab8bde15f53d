// FakeApiServer's admission of ResourceSlices: the validation the API server applies to a
// slice (testing/resource_slice_rules.h; shared reference "kube-api-and-dra.md" §3.3, §3.4,
// §13), the fields it keeps immutable, and the fields a server without consumable capacity
// or device taints drops. Errors are 422 Invalid Status objects naming each field, as the API
// server words them.
#include <ctime>
#include <string>
#include <vector>

#include "testing/fake_apiserver_impl.h"
#include "testing/resource_slice_rules.h"

namespace hcashare::fake {
namespace {

using json = nlohmann::json;
using hcashare::testing::SliceProblem;

// The 422 answer for `problems` of the slice `name`.
Reply Invalid(const std::string& name, const std::vector<SliceProblem>& problems) {
  std::string list;
  json causes = json::array();
  for (const auto& p : problems) {
    if (!list.empty()) list += ", ";
    list += p.field + ": " + p.what;
    causes.push_back({{"reason", "FieldValueInvalid"}, {"message", p.what}, {"field", p.field}});
  }
  const std::string message = "ResourceSlice.resource.k8s.io \"" + name +
                              "\" is invalid: " + (problems.size() > 1 ? "[" + list + "]" : list);
  Reply r = ErrorReply(422, "Invalid", message);
  r.body["details"] = {{"name", name},
                       {"group", "resource.k8s.io"},
                       {"kind", "ResourceSlice"},
                       {"causes", std::move(causes)}};
  return r;
}

// The device bodies of a slice's spec (v1beta1: each device's `basic`).
std::vector<json*> DeviceBodies(json& spec, bool v1beta1) {
  std::vector<json*> out;
  auto devices = spec.find("devices");
  if (devices == spec.end() || !devices->is_array()) return out;
  for (json& d : *devices) {
    json* body = v1beta1 ? (d.contains("basic") ? &d["basic"] : nullptr) : &d;
    if (body != nullptr && body->is_object()) out.push_back(body);
  }
  return out;
}

// Drops what a server without consumable capacity does not know from each device.
void DropConsumableCapacity(json& spec, bool v1beta1) {
  for (json* body : DeviceBodies(spec, v1beta1)) {
    body->erase("allowMultipleAllocations");
    auto capacity = body->find("capacity");
    if (capacity == body->end() || !capacity->is_object()) continue;
    for (auto& [name, value] : capacity->items()) {
      (void)name;
      if (value.is_object()) value.erase("requestPolicy");
    }
  }
}

// Whether any device of `spec` has taints.
bool HasTaints(json spec, bool v1beta1) {
  for (json* body : DeviceBodies(spec, v1beta1)) {
    if (body->contains("taints")) return true;
  }
  return false;
}

// What the API server does with device taints: dropped while the gate is off (unless the
// stored slice has some already), else a missing timeAdded set to the time of the write.
void AdmitTaints(json& spec, const json* old_spec, bool served, bool v1beta1) {
  const bool in_use = old_spec != nullptr && HasTaints(*old_spec, v1beta1);
  const std::time_t now = std::time(nullptr);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  for (json* body : DeviceBodies(spec, v1beta1)) {
    auto taints = body->find("taints");
    if (taints == body->end()) continue;
    if (!served && !in_use) {
      body->erase(taints);
      continue;
    }
    if (!taints->is_array()) continue;
    for (json& t : *taints) {
      if (t.is_object() && !t.contains("timeAdded")) t["timeAdded"] = stamp;
    }
  }
}

}  // namespace

std::optional<Reply> FakeApiServer::Impl::Admit(const Target& t, json& object, const json* old) {
  if (!IsResourceSlices(t)) return std::nullopt;
  const std::string version = SplitOn(t.kind_key, '/')[3];  // "", "apis", group, version
  const std::string want = "resource.k8s.io/" + version;
  const json api_version = object.value("apiVersion", json(want));
  if (api_version != want) {
    return ErrorReply(400, "BadRequest",
                      "the API version in the data (" + api_version.dump() +
                          ") does not match the expected API version (" + want + ")");
  }
  const json kind = object.value("kind", json("ResourceSlice"));
  if (kind != "ResourceSlice") {
    return ErrorReply(400, "BadRequest",
                      "the kind in the data (" + kind.dump() + ") is not ResourceSlice");
  }
  const std::string name = object["metadata"].value("name", "");
  std::vector<SliceProblem> problems =
      hcashare::testing::ResourceSliceProblems(object, version == "v1beta1");
  const json spec = object.value("spec", json());
  if (old != nullptr && spec.is_object()) {
    const json old_spec = old->value("spec", json::object());
    for (const auto& [field, pointer] :
         {std::pair<const char*, const char*>{"spec.driver", "/driver"},
          {"spec.pool.name", "/pool/name"},
          {"spec.nodeName", "/nodeName"}}) {
      const json::json_pointer p(pointer);
      const json before = old_spec.contains(p) ? old_spec[p] : json();
      const json after = spec.contains(p) ? spec[p] : json();
      if (before != after) {
        problems.push_back({field, "Invalid value: " + after.dump() + ": field is immutable"});
      }
    }
  }
  if (!problems.empty()) return Invalid(name, problems);
  if (!consumable_capacity_) DropConsumableCapacity(object["spec"], version == "v1beta1");
  const json old_spec = old != nullptr ? old->value("spec", json::object()) : json();
  AdmitTaints(object["spec"], old != nullptr ? &old_spec : nullptr, device_taints_,
              version == "v1beta1");
  return std::nullopt;
}

}  // namespace hcashare::fake
