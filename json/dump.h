// The one way hcashare writes JSON text. Strings it writes may hold bytes that are not
// UTF-8: names read from the host (a netdev a pod renamed), or echoed input. nlohmann's
// dump() throws on those, which ended the daemon and the CLI; here they become U+FFFD.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace hcashare {

// `value` (an nlohmann::json or ordered_json, whose key order is kept) as JSON text:
// compact for `indent` -1, else pretty-printed with that indent. Bytes that are not UTF-8
// in strings are written as U+FFFD. Never throws.
template <typename Json>
std::string DumpJson(const Json& value, int indent = -1) {
  return value.dump(indent, ' ', /*ensure_ascii=*/false, Json::error_handler_t::replace);
}

}  // namespace hcashare
