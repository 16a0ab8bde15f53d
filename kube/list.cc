#include "kube/list.h"

#include <cctype>
#include <utility>

#include "kube/list_stream.h"
#include "kube/status_error.h"

namespace hcashare::kube {
namespace {

using json = nlohmann::json;

constexpr int kMaxLimit = 10000;
// No byte of a page for this long: the page fails (the list's caller retries).
constexpr std::chrono::seconds kPageIdleTimeout{30};

// `s` with the characters a query value must not hold raw percent-encoded.
std::string QueryEscape(const std::string& s) {
  static const char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~' || c == '=' || c == ',' ||
        c == '!' || c == '(' || c == ')') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

// One page: its items go to `on_item` as they arrive, each parsed on its own (a page is
// never held whole: kube/list_stream.h); returns the continue token ("" at the end).
Result<std::string> Page(RestClient& client, const std::string& page_path, std::string* rv,
                         size_t* count, const ListOptions& options,
                         const std::function<Status(json)>& on_item) {
  Request request;
  request.path = page_path;
  request.cancel = options.cancel;
  const std::string what = "GET " + page_path;
  ListSplitter splitter(options.max_item_bytes, [&](std::string_view raw) -> Status {
    json item = json::parse(raw, nullptr, /*allow_exceptions=*/false);
    if (!item.is_object()) return Status::InvalidArgument(what + ": a list item is not JSON");
    if (++*count > options.max_items) {
      return Status::FailedPrecondition(what + ": the list holds more than " +
                                        std::to_string(options.max_items) + " items (max_items)");
    }
    return on_item(std::move(item));
  });
  StreamOptions stream;
  stream.raw_pieces = true;
  stream.idle_timeout = kPageIdleTimeout;
  Status split;
  Status st = client.Stream(request, stream, [&](std::string_view bytes) {
    split = splitter.Feed(bytes);
    return split.ok();
  });
  if (!split.ok()) {
    const bool theirs = split.message().rfind("GET ", 0) == 0;  // on_item's, already named
    return theirs ? split : Status(split.code(), what + ": " + split.message());
  }
  RETURN_IF_ERROR(st);
  Result<json> body = splitter.Finish();
  if (!body.ok() || !body->contains("items") ||
      !((*body)["items"].is_array() || (*body)["items"].is_null())) {
    return Status::InvalidArgument(what + ": the answer is not a list");
  }
  std::string next;
  if (const auto meta = body->find("metadata"); meta != body->end() && meta->is_object()) {
    if (auto v = meta->find("resourceVersion"); v != meta->end() && v->is_string()) *rv = *v;
    if (auto c = meta->find("continue"); c != meta->end() && c->is_string()) next = *c;
  }
  return next;
}

}  // namespace

std::string AppendQuery(const std::string& path, const std::string& key, const std::string& value) {
  return path + (path.find('?') == std::string::npos ? "?" : "&") + key + "=" + QueryEscape(value);
}

std::string ListPagePath(const std::string& path, const ListOptions& options,
                         const std::string& continue_token) {
  std::string out = AppendQuery(path, "limit", std::to_string(options.limit));
  if (!options.label_selector.empty()) {
    out = AppendQuery(out, "labelSelector", options.label_selector);
  }
  if (!options.field_selector.empty()) {
    out = AppendQuery(out, "fieldSelector", options.field_selector);
  }
  if (!continue_token.empty()) out = AppendQuery(out, "continue", continue_token);
  return out;
}

Result<std::string> ListEach(RestClient& client, const std::string& path,
                             const ListOptions& options, const std::function<Status(json)>& on_item,
                             const std::function<void()>& on_restart) {
  if (options.limit < 1 || options.limit > kMaxLimit) {
    return Status::InvalidArgument("LIST " + path + ": limit " + std::to_string(options.limit) +
                                   " is outside 1.." + std::to_string(kMaxLimit));
  }
  // A server that keeps answering empty pages with a continue token is cut off too.
  const size_t max_pages = options.max_items / static_cast<size_t>(options.limit) + 2;
  bool restarted = false;
  std::string rv;
  std::string token;
  size_t count = 0;
  size_t pages = 0;
  while (true) {
    if (++pages > max_pages) {
      return Status::FailedPrecondition("LIST " + path + ": more than " +
                                        std::to_string(max_pages) + " pages (max_items " +
                                        std::to_string(options.max_items) + ")");
    }
    Result<std::string> next =
        Page(client, ListPagePath(path, options, token), &rv, &count, options, on_item);
    if (!next.ok() && IsGone(next.status()) && !token.empty() && !restarted) {
      // The continue token expired: the snapshot is gone; start over from a fresh one.
      restarted = true;
      token.clear();
      count = 0;
      pages = 0;
      if (on_restart) on_restart();
      continue;
    }
    if (!next.ok()) return next.status();
    if (next->empty()) return rv;
    token = std::move(*next);
  }
}

Result<ListResult> ListAll(RestClient& client, const std::string& path,
                           const ListOptions& options) {
  ListResult out;
  ASSIGN_OR_RETURN(out.resource_version, ListEach(
                                             client, path, options,
                                             [&](json item) {
                                               out.items.push_back(std::move(item));
                                               return Status::Ok();
                                             },
                                             [&] { out.items.clear(); }));
  return out;
}

}  // namespace hcashare::kube
