// The fake API server's <object>/status subresource: GET of any object's, and server-side
// apply (PATCH, application/apply-patch+yaml, fieldManager required, force honoured) of a
// ResourceClaim's status.devices, as a DRA driver writes its devices' status. Validated as
// the API server validates it (driver, pool and device required and allocated in the claim,
// an entry once, networkData's bounds and CIDR addresses: 422 Invalid naming the field in
// the merged list, in the real server's words: tests/by-hand/dra-claim-status.sh) and
// merged as a list-map keyed by driver/pool/device/shareID: an apply keeps other managers'
// entries, sets its own, and drops the ones this manager owned and left out.
#include <set>
#include <string>

#include "common/ip_text.h"
#include "testing/fake_apiserver_impl.h"

namespace hcashare::fake {
namespace {

using json = nlohmann::json;

std::string Str(const json& o, const char* key) {
  auto it = o.find(key);
  return it != o.end() && it->is_string() ? it->get<std::string>() : "";
}

// The list-map key of a status.devices entry.
std::string DeviceKey(const json& d) {
  return Str(d, "driver") + "/" + Str(d, "pool") + "/" + Str(d, "device") + "/" + Str(d, "shareID");
}

// "" when `devices` (the applied status.devices) is valid for `claim`, else the message.
std::string Validate(const json& devices, const json& claim) {
  if (!devices.is_array()) return "status.devices: Invalid value: must be a list";
  std::set<std::string> allocated;
  const json results = claim.value("status", json::object())
                           .value("allocation", json::object())
                           .value("devices", json::object())
                           .value("results", json::array());
  for (const auto& r : results) {
    if (r.is_object()) allocated.insert(DeviceKey(r));
  }
  std::set<std::string> seen;
  for (size_t i = 0; i < devices.size(); ++i) {
    const json& d = devices[i];
    const std::string at = "status.devices[" + std::to_string(i) + "]";
    if (!d.is_object()) return at + ": Invalid value: must be an object";
    for (const char* key : {"driver", "pool", "device"}) {
      if (Str(d, key).empty()) return at + "." + key + ": Required value";
    }
    if (!seen.insert(DeviceKey(d)).second) return at + ": Duplicate value";
    if (allocated.count(DeviceKey(d)) == 0) {
      return at + ": Invalid value: must be an allocated device in the claim";
    }
    const json net = d.value("networkData", json::object());
    if (!net.is_object()) return at + ".networkData: Invalid value: must be an object";
    if (Str(net, "interfaceName").size() > 256) {
      return at + ".networkData.interfaceName: Too long: may not be more than 256 bytes";
    }
    if (Str(net, "hardwareAddress").size() > 128) {
      return at + ".networkData.hardwareAddress: Too long: may not be more than 128 bytes";
    }
    const json ips = net.value("ips", json::array());
    if (!ips.is_array() || ips.size() > 16) {
      return at + ".networkData.ips: Too many: must have at most 16 items";
    }
    for (size_t j = 0; j < ips.size(); ++j) {
      if (!ips[j].is_string() || !CidrFamily(ips[j].get<std::string>())) {
        return at + ".networkData.ips[" + std::to_string(j) + "]: Invalid value: \"" +
               (ips[j].is_string() ? ips[j].get<std::string>() : "") +
               "\": must be a valid address in CIDR form, (e.g. 10.9.8.7/24 or 2001:db8::1/64)";
      }
    }
  }
  return "";
}

bool IsResourceClaims(const Target& t) {
  const std::string suffix = "/resourceclaims";
  return t.kind_key.rfind("/apis/resource.k8s.io/", 0) == 0 && t.kind_key.size() > suffix.size() &&
         t.kind_key.compare(t.kind_key.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

Reply FakeApiServer::Impl::Subresource(const Target& t, const SeenRequest& req,
                                       const std::string& query) {
  auto& objects = store_[t.collection];
  auto it = objects.find(t.name);
  if (it == objects.end()) return ErrorReply(404, "NotFound", "\"" + t.name + "\" not found");
  if (req.method == "GET") return {200, it->second, std::nullopt};
  if (req.method != "PATCH" || !IsResourceClaims(t)) {
    return ErrorReply(405, "MethodNotAllowed", req.method + " on " + t.name + "/status");
  }
  if (req.content_type != "application/apply-patch+yaml") {
    return ErrorReply(415, "UnsupportedMediaType", "this fake serves only server-side apply here");
  }
  const std::string manager = QueryParam(query, "fieldManager");
  if (manager.empty()) return ErrorReply(400, "BadRequest", "fieldManager is required");
  const json body = json::parse(req.body, nullptr, false);
  if (!body.is_object()) return ErrorReply(400, "BadRequest", "the body is not a JSON object");
  const json applied = body.value("status", json::object()).value("devices", json::array());
  if (!applied.is_array()) {
    return ErrorReply(422, "Invalid", "status.devices: Invalid value: must be a list");
  }
  auto& owners = status_owners_[t.collection + "/" + t.name];
  std::set<std::string> mine;
  for (const auto& d : applied) mine.insert(DeviceKey(d));
  const bool force = QueryParam(query, "force") == "true";
  for (const auto& [other, keys] : owners) {
    if (other == manager) continue;
    for (const std::string& k : mine) {
      if (keys.count(k) != 0 && !force) {
        return ErrorReply(409, "Conflict", "Apply failed with 1 conflict: " + k);
      }
    }
  }
  json devices = json::array();
  const json current = it->second.value("status", json::object()).value("devices", json::array());
  for (const auto& d : current) {
    const std::string k = DeviceKey(d);
    if (mine.count(k) == 0 && owners[manager].count(k) == 0) devices.push_back(d);
  }
  for (const auto& d : applied) devices.push_back(d);
  // The API server validates the merged list (its indexes are the merged list's).
  if (std::string bad = Validate(devices, it->second); !bad.empty()) {
    return ErrorReply(422, "Invalid",
                      "ResourceClaim.resource.k8s.io \"" + t.name + "\" is invalid: " + bad);
  }
  for (auto& [other, keys] : owners) {
    if (other == manager) continue;
    for (const std::string& k : mine) keys.erase(k);  // taken over (force)
  }
  owners[manager] = mine;
  json updated = it->second;
  updated["status"]["devices"] = devices;
  if (devices.empty()) updated["status"].erase("devices");
  return {200, Store(t.collection, std::move(updated)), std::nullopt};
}

}  // namespace hcashare::fake
