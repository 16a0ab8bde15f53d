// FakeApiServer's API groups: discovery of a group (`GET /apis/<group>` -> APIGroup), 404
// for a version the group does not serve, and DELETE on a collection by selectors (the
// kubelet's wipe of its node's ResourceSlices), with their test hooks.
#include <string>
#include <utility>
#include <vector>

#include "testing/fake_apiserver_impl.h"

namespace hcashare::fake {
namespace {

using json = nlohmann::json;

// The group and version of "/apis/<group>[/<version>[/...]]"; false for other paths.
bool GroupOf(const std::string& path, std::string* group, std::string* version) {
  const std::string prefix = "/apis/";
  if (path.compare(0, prefix.size(), prefix) != 0) return false;
  std::vector<std::string> seg = SplitOn(path.substr(prefix.size()), '/');
  if (seg.empty() || seg[0].empty()) return false;
  *group = seg[0];
  *version = seg.size() > 1 ? seg[1] : "";
  return true;
}

}  // namespace

std::optional<Reply> FakeApiServer::Impl::Groups(const std::string& method,
                                                 const std::string& path) {
  std::string group;
  std::string version;
  if (!GroupOf(path, &group, &version)) return std::nullopt;
  auto served = served_.find(group);
  if (served == served_.end()) return std::nullopt;  // not gated
  const std::vector<std::string>& versions = served->second;
  const std::string not_found = "the server could not find the requested resource";
  if (version.empty()) {  // discovery of the group
    if (method != "GET") return ErrorReply(405, "MethodNotAllowed", method + " on " + path);
    if (versions.empty()) return ErrorReply(404, "NotFound", not_found);
    json list = json::array();
    for (const std::string& v : versions) {
      list.push_back({{"groupVersion", group + "/" + v}, {"version", v}});
    }
    return Reply(200, {{"kind", "APIGroup"},
                       {"apiVersion", "v1"},
                       {"name", group},
                       {"versions", list},
                       {"preferredVersion", list.front()}});
  }
  for (const std::string& v : versions) {
    if (v == version) return std::nullopt;
  }
  return ErrorReply(404, "NotFound", not_found);
}

json FakeApiServer::Impl::RemoveSelected(const Selection& sel) {
  json gone_items = json::array();
  std::vector<std::pair<std::string, std::string>> doomed;
  for (const auto& [collection, objects] : store_) {
    for (const auto& [name, obj] : objects) {
      if (sel.Matches(collection, obj)) doomed.emplace_back(collection, name);
    }
  }
  for (const auto& [collection, name] : doomed) {
    json gone;
    if (Remove(collection, name, &gone)) gone_items.push_back(std::move(gone));
  }
  return gone_items;
}

Reply FakeApiServer::Impl::DeleteCollection(const Target& t, const std::string& query) {
  Selection sel;
  if (std::string bad = sel.Parse(t, query); !bad.empty()) {
    return ErrorReply(400, "BadRequest", bad);
  }
  json items = RemoveSelected(sel);
  return Reply(200, {{"kind", "List"},
                     {"apiVersion", "v1"},
                     {"metadata", {{"resourceVersion", std::to_string(resource_version_)}}},
                     {"items", std::move(items)}});
}

Result<size_t> FakeApiServer::DeleteCollection(const std::string& collection,
                                               const std::string& field_selector) {
  std::optional<Target> t = ParseTarget(collection);
  if (!t || !t->name.empty()) {
    return Status::InvalidArgument("DeleteCollection: \"" + collection + "\" is no collection");
  }
  std::lock_guard<std::mutex> lock(impl_->mu_);
  Selection sel;
  if (std::string bad = sel.ParseSelectors(*t, "", field_selector); !bad.empty()) {
    return Status::InvalidArgument("DeleteCollection: " + bad);
  }
  return impl_->RemoveSelected(sel).size();
}

void FakeApiServer::SetServedVersions(const std::string& group, std::vector<std::string> versions) {
  std::lock_guard<std::mutex> lock(impl_->mu_);
  impl_->served_[group] = std::move(versions);
}

void FakeApiServer::SetConsumableCapacity(bool served) {
  std::lock_guard<std::mutex> lock(impl_->mu_);
  impl_->consumable_capacity_ = served;
}

void FakeApiServer::SetDeviceTaints(bool served) {
  std::lock_guard<std::mutex> lock(impl_->mu_);
  impl_->device_taints_ = served;
}

}  // namespace hcashare::fake
