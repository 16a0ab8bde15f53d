#include "kube/watch.h"

#include <utility>

#include "kube/list.h"
#include "kube/status_error.h"

namespace hcashare::kube {
namespace {

using json = nlohmann::json;

constexpr int kMaxTimeoutSeconds = 3600;

}  // namespace

const char* WatchEventTypeName(WatchEventType type) {
  switch (type) {
    case WatchEventType::kAdded:
      return "ADDED";
    case WatchEventType::kModified:
      return "MODIFIED";
    case WatchEventType::kDeleted:
      return "DELETED";
    case WatchEventType::kBookmark:
      return "BOOKMARK";
    case WatchEventType::kError:
      return "ERROR";
  }
  return "ADDED";
}

std::string WatchPath(const std::string& path, const WatchOptions& options) {
  std::string out = AppendQuery(path, "watch", "1");
  if (!options.resource_version.empty()) {
    out = AppendQuery(out, "resourceVersion", options.resource_version);
  }
  if (options.allow_bookmarks) out = AppendQuery(out, "allowWatchBookmarks", "true");
  if (!options.label_selector.empty()) {
    out = AppendQuery(out, "labelSelector", options.label_selector);
  }
  if (!options.field_selector.empty()) {
    out = AppendQuery(out, "fieldSelector", options.field_selector);
  }
  return AppendQuery(out, "timeoutSeconds", std::to_string(options.timeout_seconds));
}

Result<WatchEvent> ParseWatchEvent(std::string_view line) {
  json j = json::parse(line.begin(), line.end(), nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return Status::InvalidArgument("a watch event that is not a JSON object");
  auto type = j.find("type");
  if (type == j.end() || !type->is_string()) {
    return Status::InvalidArgument("a watch event without a type");
  }
  WatchEvent e;
  const std::string& t = type->get_ref<const std::string&>();
  if (t == "ADDED") {
    e.type = WatchEventType::kAdded;
  } else if (t == "MODIFIED") {
    e.type = WatchEventType::kModified;
  } else if (t == "DELETED") {
    e.type = WatchEventType::kDeleted;
  } else if (t == "BOOKMARK") {
    e.type = WatchEventType::kBookmark;
  } else if (t == "ERROR") {
    e.type = WatchEventType::kError;
  } else {
    return Status::InvalidArgument("a watch event of unknown type \"" + t.substr(0, 64) + "\"");
  }
  auto object = j.find("object");
  if (object == j.end() || !object->is_object()) {
    return Status::InvalidArgument(std::string("a ") + WatchEventTypeName(e.type) +
                                   " watch event without an object");
  }
  e.object = std::move(*object);
  if (auto meta = e.object.find("metadata"); meta != e.object.end() && meta->is_object()) {
    if (auto rv = meta->find("resourceVersion"); rv != meta->end() && rv->is_string()) {
      e.resource_version = *rv;
    }
  }
  return e;
}

Status Watch(RestClient& client, const std::string& path, const WatchOptions& options,
             const std::function<bool(const WatchEvent&)>& on_event) {
  if (options.timeout_seconds < 1 || options.timeout_seconds > kMaxTimeoutSeconds) {
    return Status::InvalidArgument("WATCH " + path + ": timeoutSeconds " +
                                   std::to_string(options.timeout_seconds) + " is outside 1.." +
                                   std::to_string(kMaxTimeoutSeconds));
  }
  Request request;
  request.path = WatchPath(path, options);
  request.timeout = options.connect_timeout;
  request.cancel = options.cancel;
  StreamOptions stream;
  stream.idle_timeout = options.idle_timeout;
  stream.max_line_bytes = options.max_event_bytes;
  Status failure;
  Status st = client.Stream(request, stream, [&](std::string_view line) {
    Result<WatchEvent> e = ParseWatchEvent(line);
    if (!e.ok()) {
      failure = e.status().WithContext("WATCH " + path);
      return false;
    }
    if (e->type == WatchEventType::kError) {
      failure = ApiErrorFromStatusObject(e->object).ToStatus("WATCH " + path + ": ERROR event");
      return false;
    }
    return on_event(*e);
  });
  if (!failure.ok()) return failure;
  return st;
}

}  // namespace hcashare::kube
