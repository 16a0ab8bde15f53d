// A list answer ({"kind": ..., "metadata": {...}, "items": [{...}, ...]}) split into its
// items as its bytes arrive: each item's bytes are handed over the moment the item is
// complete, so a page of large objects is never held whole: memory holds the list's own
// members and one item (issue 34: 60 NADs of 1 MiB in one page).
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "common/status.h"

namespace hcashare::kube {

class ListSplitter {
 public:
  // `on_item` gets each element of the top-level "items" array (an object's JSON text; an
  // element that is not an object is an error); an error from it stops the split and is
  // returned by Feed(). An item over `max_item_bytes` is an error (FailedPrecondition).
  ListSplitter(size_t max_item_bytes, std::function<Status(std::string_view item)> on_item);

  // Takes the next bytes of the answer. An error is final.
  Status Feed(std::string_view bytes);
  // After the last byte: the list without its items ("items" is [] or null as sent), or
  // InvalidArgument when the answer was not a JSON object or ended early.
  Result<nlohmann::json> Finish();

  // Bounds the list's own members (metadata, kind, apiVersion) together.
  static constexpr size_t kMaxSkeletonBytes = size_t{1} << 20;

 private:
  Status Step(char c);
  // Advances the string state over `c`; true when `c` is inside a string (its closing
  // quote included).
  bool InString(char c);

  const size_t max_item_bytes_;
  const std::function<Status(std::string_view)> on_item_;
  std::string skeleton_;  // the answer without the items' bytes
  std::string item_;      // the item being read
  int depth_ = 0;         // nesting of the answer at the current byte
  bool in_string_ = false;
  bool escape_ = false;
  bool in_items_ = false;  // inside the top-level "items" array
  bool in_item_ = false;   // inside one of its elements
  std::string string_;     // a top-level string being read (a key), up to 16 bytes
  std::string last_string_, key_;
  Status error_;
};

}  // namespace hcashare::kube
