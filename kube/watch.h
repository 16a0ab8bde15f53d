// Watch: one WATCH request on a collection (`?watch=1&resourceVersion=RV&
// allowWatchBookmarks=true&timeoutSeconds=N`), its newline-delimited JSON events handed over
// one by one as they arrive, over RestClient::Stream() (one TLS connection a watch).
//
// ADDED, MODIFIED, DELETED and BOOKMARK events go to the callback; an ERROR event ends the
// watch with its Status as an error (code 410 Expired/Gone: IsGone(), relist), as does a 410
// answer to the request itself. A stream cut inside an event is an error (Unavailable) and
// the part event is never delivered. The server ending the watch (its timeout) is OK:
// watch again from the last resourceVersion seen.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "common/status.h"
#include "kube/rest.h"

namespace hcashare::kube {

// The kinds of watch event.
enum class WatchEventType { kAdded, kModified, kDeleted, kBookmark, kError };

// "ADDED", "MODIFIED", ...
const char* WatchEventTypeName(WatchEventType type);

// One event.
struct WatchEvent {
  WatchEventType type = WatchEventType::kAdded;
  nlohmann::json object;         // the object (its last state for DELETED); a Status for ERROR
  std::string resource_version;  // object.metadata.resourceVersion, "" when absent
};

// How to watch.
struct WatchOptions {
  std::string resource_version;  // start after this version; "" = from now, with ADDED for all
  std::string label_selector;    // as in ListOptions
  std::string field_selector;
  bool allow_bookmarks = true;
  int timeout_seconds = 300;  // the server ends the watch after this (1..3600)
  // No byte for this long: an error. Should exceed the server's bookmark interval (about a
  // minute) or timeout_seconds, whichever comes first.
  std::chrono::milliseconds idle_timeout{330000};
  std::chrono::milliseconds connect_timeout{30000};  // up to the answer's head
  size_t max_event_bytes = size_t{4} << 20;          // a longer event line: an error
  StreamCancel* cancel = nullptr;                    // stops the watch from another thread
};

// The request path for a watch of `path` (a collection).
std::string WatchPath(const std::string& path, const WatchOptions& options);

// Parses one event line. InvalidArgument naming what is wrong (not JSON, unknown type, no
// object).
Result<WatchEvent> ParseWatchEvent(std::string_view line);

// Watches `path` until the server ends the watch (OK), `on_event` returns false (OK), or an
// error: as RestClient::Stream(), an ERROR event's Status (ApiErrorFromStatusObject), or
// InvalidArgument for a line that is no event.
Status Watch(RestClient& client, const std::string& path, const WatchOptions& options,
             const std::function<bool(const WatchEvent&)>& on_event);

}  // namespace hcashare::kube
