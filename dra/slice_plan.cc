#include "dra/slice_plan.h"

#include <algorithm>
#include <cstdlib>

namespace hcashare::dra {
namespace {

using json = nlohmann::json;

// A string field of `object` at `pointer`, "" when absent or no string.
std::string StringAt(const json& object, const char* pointer) {
  const json::json_pointer p(pointer);
  if (!object.contains(p)) return "";
  const json& v = object[p];
  return v.is_string() ? v.get<std::string>() : "";
}

std::string NameOf(const json& slice) { return StringAt(slice, "/metadata/name"); }

// The spec without the pool generation: what SameContent compares.
json ContentOf(const json& slice) {
  json spec = slice.contains("spec") ? slice["spec"] : json();
  if (spec.is_object() && spec.contains("pool") && spec["pool"].is_object()) {
    spec["pool"].erase("generation");
  }
  return spec;
}

// `wanted` as a PUT over `existing`: the server's metadata (name, uid, resourceVersion,
// labels ...) with our owner reference, and our spec.
json UpdateOf(const json& existing, const json& wanted) {
  json out = wanted;
  out["metadata"] = existing.contains("metadata") ? existing["metadata"] : json::object();
  out["metadata"].erase("managedFields");
  if (wanted["metadata"].contains("ownerReferences")) {
    out["metadata"]["ownerReferences"] = wanted["metadata"]["ownerReferences"];
  }
  return out;
}

// The device objects of a slice, unwrapped from v1beta1's `basic`, by name.
std::map<std::string, json> DevicesByName(const json& slice, ApiVersion version) {
  std::map<std::string, json> out;
  const json::json_pointer p("/spec/devices");
  if (!slice.contains(p) || !slice[p].is_array()) return out;
  for (const json& d : slice[p]) {
    if (!d.is_object() || !d.contains("name") || !d["name"].is_string()) continue;
    json body = version == ApiVersion::kV1beta1 ? d.value("basic", json::object()) : d;
    out[d["name"].get<std::string>()] = std::move(body);
  }
  return out;
}

}  // namespace

int64_t GenerationOf(const json& slice) {
  const json::json_pointer p("/spec/pool/generation");
  if (!slice.contains(p) || !slice[p].is_number_integer()) return 0;
  return slice[p].get<int64_t>();
}

bool SameContent(const json& existing, const json& wanted) {
  if (ContentOf(existing) != ContentOf(wanted)) return false;
  const json::json_pointer owners("/metadata/ownerReferences");
  if (!wanted.contains(owners)) return true;
  if (!existing.contains(owners) || !existing[owners].is_array()) return false;
  const std::string uid = StringAt(wanted, "/metadata/ownerReferences/0/uid");
  for (const json& o : existing[owners]) {
    if (o.is_object() && o.value("uid", json()) == uid && o.value("kind", json()) == "Node") {
      return true;
    }
  }
  return false;
}

SlicePlan PlanSlices(const std::vector<json>& existing, const PoolContent& pool,
                     const SliceHeader& header, int64_t last_generation) {
  // The pool's current generation: the highest among its slices.
  int64_t current = 0;
  bool any = false;
  for (const json& s : existing) {
    if (StringAt(s, "/spec/pool/name") != pool.pool_name) continue;
    current = any ? std::max(current, GenerationOf(s)) : GenerationOf(s);
    any = true;
  }
  SlicePlan plan;
  std::vector<json> live;  // the pool's slices at the current generation, by name
  for (const json& s : existing) {
    if (any && StringAt(s, "/spec/pool/name") == pool.pool_name && GenerationOf(s) == current) {
      live.push_back(s);
    } else {
      plan.deletes.push_back(s);  // another pool, or an older generation
    }
  }
  std::sort(live.begin(), live.end(),
            [](const json& a, const json& b) { return NameOf(a) < NameOf(b); });

  // In place: the wanted slices at the current generation, matched against the live ones.
  SliceHeader h = header;
  h.generation = current;
  std::vector<json> wanted = SliceObjects(pool, h);
  std::vector<bool> used(live.size(), false);
  std::vector<json> unmatched;
  for (json& w : wanted) {
    bool found = false;
    for (size_t i = 0; i < live.size() && !found; ++i) {
      if (!used[i] && SameContent(live[i], w)) used[i] = found = true;
    }
    if (!found) unmatched.push_back(std::move(w));
  }
  std::vector<json> spare;  // live slices no wanted one matched
  for (size_t i = 0; i < live.size(); ++i) {
    if (!used[i]) spare.push_back(live[i]);
  }
  if (any && unmatched.size() <= 1 && spare.size() == unmatched.size()) {
    plan.generation = current;
    if (!unmatched.empty()) plan.updates.push_back(UpdateOf(spare[0], unmatched[0]));
    return plan;
  }

  // A new generation: every slice rewritten, the live ones reused in name order.
  plan.generation = std::max(current, last_generation) + 1;
  plan.bumped = true;
  h.generation = plan.generation;
  wanted = SliceObjects(pool, h);
  for (size_t i = 0; i < live.size(); ++i) {
    if (i < wanted.size()) {
      plan.updates.push_back(UpdateOf(live[i], wanted[i]));
    } else {
      plan.deletes.push_back(live[i]);
    }
  }
  for (size_t i = live.size(); i < wanted.size(); ++i) plan.creates.push_back(wanted[i]);
  return plan;
}

bool VersionAtLeast(const std::string& a, const std::string& b) {
  if (a == b) return true;
  char* end_a = nullptr;
  char* end_b = nullptr;
  const unsigned long long x = std::strtoull(a.c_str(), &end_a, 10);
  const unsigned long long y = std::strtoull(b.c_str(), &end_b, 10);
  if (a.empty() || b.empty() || *end_a != '\0' || *end_b != '\0') return false;
  return x >= y;
}

void SliceView::Wrote(const json& object) {
  const std::string name = NameOf(object);
  if (name.empty()) return;
  deleted_.erase(name);
  written_[name] = object;
}

void SliceView::Deleted(const std::string& name) {
  written_.erase(name);
  deleted_.insert(name);
}

void SliceView::Clear() {
  written_.clear();
  deleted_.clear();
}

std::vector<json> SliceView::Merge(const std::vector<kube::CachedObject>& informed,
                                   const std::string& informer_version) {
  std::map<std::string, json> view;
  for (const kube::CachedObject& o : informed) {
    if (o) view[NameOf(*o)] = *o;
  }
  for (auto it = written_.begin(); it != written_.end();) {
    const std::string ours = StringAt(it->second, "/metadata/resourceVersion");
    auto seen = view.find(it->first);
    const bool caught_up =
        seen != view.end()
            ? VersionAtLeast(StringAt(seen->second, "/metadata/resourceVersion"), ours)
            : VersionAtLeast(informer_version, ours);  // gone since
    if (caught_up) {
      it = written_.erase(it);
    } else {
      view[it->first] = it->second;
      ++it;
    }
  }
  // Generated names are not used again: a name the informer still lists is the deleted
  // object, whose DELETED event has not come yet.
  for (auto it = deleted_.begin(); it != deleted_.end();) {
    auto seen = view.find(*it);
    if (seen == view.end()) {
      it = deleted_.erase(it);
    } else {
      view.erase(seen);
      ++it;
    }
  }
  std::vector<json> out;
  out.reserve(view.size());
  for (auto& [name, object] : view) out.push_back(std::move(object));
  return out;
}

bool IsSharedDevice(const json& device) {
  return device.is_object() && device.value("allowMultipleAllocations", json()) == true;
}

PoolContent WithoutSharedDevices(const PoolContent& pool) {
  PoolContent out = pool;
  out.devices.clear();
  for (const json& d : pool.devices) {
    if (!IsSharedDevice(d)) out.devices.push_back(d);
  }
  return out;
}

std::vector<std::string> DroppedSharedDevices(const json& sent, const json& returned,
                                              ApiVersion version) {
  std::map<std::string, json> back = DevicesByName(returned, version);
  std::vector<std::string> dropped;
  for (const auto& [name, device] : DevicesByName(sent, version)) {
    if (!IsSharedDevice(device)) continue;
    auto it = back.find(name);
    if (it == back.end() || !IsSharedDevice(it->second)) dropped.push_back(name);
  }
  return dropped;
}

PoolContent WithoutTaints(const PoolContent& pool) {
  PoolContent out = pool;
  for (json& d : out.devices) d.erase("taints");
  return out;
}

bool DroppedTaints(const json& sent, const json& returned, ApiVersion version) {
  std::map<std::string, json> back = DevicesByName(returned, version);
  for (const auto& [name, device] : DevicesByName(sent, version)) {
    if (!device.contains("taints")) continue;
    auto it = back.find(name);
    if (it != back.end() && !it->second.contains("taints")) return true;
  }
  return false;
}

}  // namespace hcashare::dra
