// One JSON text parser for every input a party other than hcashare writes (the device
// plugin's configuration, hcashare-cni's network configuration and its prevResult): time
// linear in the text, an optional nesting limit, and duplicate keys reported with their
// JSON paths.
//
// nlohmann's own callback parser is not used: after each object it closes, it walks every
// element of the enclosing array or object, so `[{},{},...]` takes time quadratic in the
// number of elements (900 KB of `{}` held hcashare-cni for 37 s, and the daemon's start-up
// for 25 s). This parser builds the tree from nlohmann's SAX events itself.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/status.h"

namespace hcashare::jsonin {

class IssueList;

// Limits and reports of ParseJson.
struct JsonParseOptions {
  // Deepest nesting of arrays and objects accepted; 0: no limit.
  int max_depth = 0;
  // When set, each key that occurs twice in one object is added here as an issue at the
  // key's path ("$.a[0].b"); the last value is kept, as nlohmann does.
  IssueList* duplicate_keys = nullptr;
  // Most values (scalars, arrays and objects, the root included) accepted; 0: no limit. A
  // parsed value costs tens of bytes however short its text ("{}" is 2 bytes, its object
  // ~64), so this, not the text's size, bounds the tree's memory.
  size_t max_values = 0;
};

// Parses `text` as one JSON value. Errors (InvalidArgument): the parser's message for a
// syntax error, "nested deeper than N levels" or "more than N values". Never throws.
Result<nlohmann::json> ParseJson(std::string_view text, const JsonParseOptions& options = {});

}  // namespace hcashare::jsonin
