// The path-aware JSON field reader, the one reader of JSON input: the device plugin's
// configuration (config/), hcashare-cni's network configuration, results and error objects
// (cni/) and a host snapshot's JSON form (hostfacts/). Decoding text with a nesting limit,
// JSON paths, and FieldReader, which reads typed members of an object and records every
// problem with its JSON path so that all of them can be reported at once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/status.h"

namespace hcashare::jsonin {

// One problem in a JSON input. `path` is a JSON path such as "$.configList[1].rdmaHcaMax"
// (or a JSON Pointer, "/pci/0/numa_node", for a reader of PathSyntax::kJsonPointer).
struct Issue {
  std::string path;
  std::string message;
  // "<path>: <message>"
  std::string ToString() const { return path + ": " + message; }
};

// Deepest nesting of arrays and objects DecodeJson accepts.
inline constexpr int kMaxJsonDepth = 64;
// Most values DecodeJson accepts: a CNI configuration with its prevResult has a few hundred;
// a parsed value costs tens of bytes whatever its text (1 MiB of "{}," is 350,000 objects,
// ~25 MiB once parsed).
inline constexpr size_t kMaxJsonValues = 100000;

// Parses `text` as JSON. A syntax error, nesting deeper than kMaxJsonDepth or more than
// kMaxJsonValues values -> InvalidArgument with message "cannot decode <what>" and the
// parser's message as details.
Result<nlohmann::json> DecodeJson(std::string_view text, std::string_view what);

// `what` of a nlohmann::json exception without its "[json.exception.parse_error.101] " prefix.
std::string WithoutJsonExceptionId(const std::string& what);

// `s` as a JSON string literal for messages; long values are shortened with "...".
std::string Quote(const std::string& s);

// The path of member `key` of the value at `parent`: "parent.key", or `parent["key"]` when
// the key is not identifier-like; a top-level key of a relative path (empty `parent`) is the
// key itself ("cni.dev/valid-attachments").
std::string JoinKey(std::string_view parent, std::string_view key);
// `parent` + "[index]".
std::string JoinIndex(std::string_view parent, size_t index);

// A short description of a value for messages: `string "5"`, `number 5.5`, `boolean
// true`, `null`, `object`, `array`.
std::string DescribeValue(const nlohmann::json& value);

// Problems in the order found, for one report. Past `max_listed` they are only counted: a
// config of a megabyte can hold an error per value, and listing (or holding) each one would
// bury the first, write a hundred megabytes to the daemon's log, and take ~250 bytes apiece
// (a list of 350,000 `{}` entries held 450 MB of them).
class IssueList {
 public:
  explicit IssueList(size_t max_listed = SIZE_MAX) : max_listed_(max_listed) {}

  // Records `issue`: listed while fewer than max_listed are, else only counted.
  void push_back(Issue issue);
  // Records `other`'s issues after these, as if pushed one by one (its count included).
  void Append(IssueList other);
  // Every issue recorded, listed or not.
  size_t size() const { return listed_.size() + unlisted_; }
  bool empty() const { return size() == 0; }
  // The first max_listed issues.
  const std::vector<Issue>& listed() const { return listed_; }
  // The listed issues and, when some were not, one at "$" that counts them: "N more <what>
  // not listed (the first <max_listed> are)".
  std::vector<Issue> Take(const std::string& what) &&;

 private:
  size_t max_listed_;
  std::vector<Issue> listed_;
  size_t unlisted_ = 0;
};

// "<path>: <message>" of each listed issue, joined by "; ".
std::string JoinIssues(const IssueList& issues);

// Whether a member must be present. A null member counts as absent (as in Go's decoder),
// unless the reader's style says otherwise.
enum class Need { kOptional, kRequired };

// How a reader words a value of the wrong type: `got` in "must be <expected>, got <got>".
using DescribeMismatch = std::string (*)(const nlohmann::json& value, std::string_view expected);

// How paths are written: JSONPath ("$.a[0].b", JoinKey/JoinIndex) or JSON Pointer ("/a/0/b",
// keys unescaped; the root is "").
enum class PathSyntax { kJsonPath, kJsonPointer };

// How a reader names paths, words mismatches and treats null.
struct ReaderStyle {
  DescribeMismatch describe = nullptr;  // nullptr: DescribeValue
  PathSyntax syntax = PathSyntax::kJsonPath;
  bool null_is_absent = true;  // false: a null member is a value of the wrong type
};

// Reads members of one JSON object at `path`. Problems go to `issues` with their paths:
// "required", "must be <expected>, got <description>" (worded by `describe`, DescribeValue by
// default), or what the caller reports with Fail. `object` and `issues` must outlive the
// reader. A non-object `object` reads as empty.
class FieldReader {
 public:
  FieldReader(const nlohmann::json& object, std::string path, IssueList* issues,
              DescribeMismatch describe = nullptr);
  // A reader in `style`.
  FieldReader(const nlohmann::json& object, std::string path, IssueList* issues, ReaderStyle style);

  // A reader of `object` at `path` that reports like this one.
  FieldReader At(const nlohmann::json& object, std::string path) const;

  // The object read and its path.
  const nlohmann::json& object() const { return object_; }
  const std::string& path() const { return path_; }
  // Where problems go.
  IssueList* issues() const { return issues_; }

  // The member `key`, or nullptr when it is absent (or null, when null is absent).
  const nlohmann::json* Find(std::string_view key) const;
  // The JSON path of member `key`.
  std::string PathOf(std::string_view key) const;
  // The JSON path of element `index` of the array at `array_path`.
  std::string PathOfElement(std::string_view array_path, size_t index) const;
  // Records "<path of key>: <problem>".
  void Fail(std::string_view key, std::string problem);

  // A string member.
  std::optional<std::string> String(std::string_view key, Need need = Need::kOptional);
  // An integer member; one beyond int64 reads as INT64_MAX. Floats are type errors.
  std::optional<int64_t> Integer(std::string_view key, Need need = Need::kOptional);
  // An integer member in [min, max] ("must be min..max, got <value>" otherwise).
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

  // The same checks for a value at any `path` (an array element): records
  // "<path>: must be <expected>, got <description>".
  void Mismatch(const nlohmann::json& value, const std::string& path, std::string_view expected);
  // `value` as a string, or std::nullopt after recording a mismatch.
  std::optional<std::string> StringAt(const nlohmann::json& value, const std::string& path);
  // `value` as an integer (beyond int64 -> INT64_MAX), or std::nullopt after recording a
  // mismatch.
  std::optional<int64_t> IntegerAt(const nlohmann::json& value, const std::string& path);

 private:
  // The member when present and `check` accepts it; records a mismatch otherwise.
  const nlohmann::json* Typed(std::string_view key, Need need, bool (*check)(const nlohmann::json&),
                              std::string_view expected);

  const nlohmann::json& object_;
  std::string path_;
  IssueList* issues_;
  ReaderStyle style_;
};

// Calls fn(item_reader) for each element of the array member `key` of `reader`; elements
// that are not objects are reported instead.
template <typename Fn>
void ForEachObject(FieldReader& reader, std::string_view key, Need need, Fn fn) {
  const nlohmann::json* list = reader.Array(key, need);
  if (!list) return;
  for (size_t i = 0; i < list->size(); ++i) {
    const nlohmann::json& element = (*list)[i];
    const std::string path = reader.PathOfElement(reader.PathOf(key), i);
    if (!element.is_object()) {
      reader.Mismatch(element, path, "an object");
      continue;
    }
    FieldReader item = reader.At(element, path);
    fn(item);
  }
}

}  // namespace hcashare::jsonin
