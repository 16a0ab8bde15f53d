// JSON plumbing shared by the configuration and result parsers: decoding text with a
// nesting limit, and FieldReader, which reads typed members of an object and records
// every problem as "path: problem" so that all of them can be reported at once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/status.h"

namespace hcashare::cni {

// Deepest nesting of arrays and objects accepted in any JSON input.
inline constexpr int kMaxJsonDepth = 64;

// Parses `text` as JSON. A syntax error or nesting deeper than kMaxJsonDepth -> code 6
// with msg "cannot decode <what>" and the parser's message as details.
Result<nlohmann::json> DecodeJson(std::string_view text, std::string_view what);

// "parent.key", or "key" when `parent` is empty.
std::string JoinPath(std::string_view parent, std::string_view key);
// "parent[index]".
std::string IndexPath(std::string_view parent, size_t index);

// A short description of a value for messages: `string "5"`, `number 5.5`, `boolean
// true`, `null`, `object`, `array`.
std::string DescribeValue(const nlohmann::json& value);

// Whether a member must be present. A null member counts as absent (as in Go's decoder).
enum class Need { kOptional, kRequired };

// Reads members of one JSON object. Problems go to `errors` as "<path>.<key>: <problem>".
// `object` and `errors` must outlive the reader. A non-object `object` reads as empty.
class FieldReader {
 public:
  FieldReader(const nlohmann::json& object, std::string path, std::vector<std::string>* errors);

  // The member `key`, or nullptr when it is absent or null.
  const nlohmann::json* Find(std::string_view key) const;
  // The JSON path of member `key`.
  std::string PathOf(std::string_view key) const;
  // Records "<path of key>: <problem>".
  void Fail(std::string_view key, const std::string& problem);
  // Where problems go.
  std::vector<std::string>* errors() const { return errors_; }

  // A string member.
  std::optional<std::string> String(std::string_view key, Need need = Need::kOptional);
  // An integer member in [min, max].
  std::optional<int64_t> Integer(std::string_view key, int64_t min, int64_t max,
                                 Need need = Need::kOptional);
  // A boolean member.
  std::optional<bool> Bool(std::string_view key, Need need = Need::kOptional);
  // An object member, or nullptr.
  const nlohmann::json* Object(std::string_view key, Need need = Need::kOptional);
  // An array member, or nullptr.
  const nlohmann::json* Array(std::string_view key, Need need = Need::kOptional);
  // An array of strings.
  std::optional<std::vector<std::string>> Strings(std::string_view key,
                                                  Need need = Need::kOptional);
  // A string member that must equal one of `allowed` (ASCII case-insensitively); returns
  // the index of the match.
  std::optional<size_t> Choice(std::string_view key, const std::vector<std::string>& allowed,
                               Need need = Need::kOptional);

 private:
  // The member when present and `check` accepts it; records "must be <expected>" otherwise.
  const nlohmann::json* Typed(std::string_view key, Need need, bool (*check)(const nlohmann::json&),
                              const char* expected);

  const nlohmann::json& object_;
  std::string path_;
  std::vector<std::string>* errors_;
};

// Calls fn(item_reader) for each element of the array member `key` of `reader`; elements
// that are not objects are reported instead.
template <typename Fn>
void ForEachObject(FieldReader& reader, std::string_view key, Need need, Fn fn) {
  const nlohmann::json* list = reader.Array(key, need);
  if (!list) return;
  for (size_t i = 0; i < list->size(); ++i) {
    const nlohmann::json& element = (*list)[i];
    const std::string path = IndexPath(reader.PathOf(key), i);
    if (!element.is_object()) {
      reader.errors()->push_back(path + ": must be an object, got " + DescribeValue(element));
      continue;
    }
    FieldReader item(element, path, reader.errors());
    fn(item);
  }
}

}  // namespace hcashare::cni
