// ListAll: a LIST of a collection in pages (`limit` and the returned `metadata.continue`),
// item by item or gathered, with the resourceVersion to watch from.
//
// All pages of one list come from the same snapshot; when the server forgets a continue
// token (410 Expired, after about 5 minutes) the list restarts from its first page, once:
// the callback form calls `on_restart` first, so the caller drops what it got (items seen
// before come again). A second 410 is returned. A list longer than `max_items` is refused.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/status.h"
#include "kube/rest.h"

namespace hcashare::kube {

// What to list and how much.
struct ListOptions {
  int limit = 500;             // items a page (1..10000)
  std::string label_selector;  // labelSelector ("app=x,tier!=y"; escaped here), "" for none
  std::string field_selector;  // fieldSelector, e.g. "metadata.name=x", "" for none
  size_t max_items = 100000;   // more items in the list: FailedPrecondition
  // One item larger than this: FailedPrecondition. Pages are parsed item by item as they
  // arrive (kube/list_stream.h): memory holds one item at a time, never a whole page, so
  // no page size is bounded (etcd keeps objects under 1.5 MiB by default).
  size_t max_item_bytes = size_t{16} << 20;
  StreamCancel* cancel = nullptr;  // stops the list from another thread (Unavailable)
};

// A whole list.
struct ListResult {
  std::vector<nlohmann::json> items;
  std::string resource_version;  // the list's metadata.resourceVersion
};

// `path` with `key`=`value` added to its query (the value percent-encoded where needed).
std::string AppendQuery(const std::string& path, const std::string& key, const std::string& value);

// The query for one page: `path` plus limit, selectors and `continue_token` when set.
std::string ListPagePath(const std::string& path, const ListOptions& options,
                         const std::string& continue_token);

// Lists `path` (a collection, may carry its own query) page by page, handing every item
// to `on_item` (an error from it stops the list and is returned). Returns the list's
// resourceVersion. Errors: the API's (kube/status_error.h); InvalidArgument for a bad
// limit or an answer that is not a list; FailedPrecondition past options.max_items.
Result<std::string> ListEach(RestClient& client, const std::string& path,
                             const ListOptions& options,
                             const std::function<Status(nlohmann::json item)>& on_item,
                             const std::function<void()>& on_restart = nullptr);

// The same, gathered.
Result<ListResult> ListAll(RestClient& client, const std::string& path,
                           const ListOptions& options = {});

}  // namespace hcashare::kube
