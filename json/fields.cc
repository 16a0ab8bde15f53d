#include "json/fields.h"

#include <cctype>
#include <exception>
#include <utility>

#include "common/strings.h"
#include "json/dump.h"
#include "json/parse.h"

namespace hcashare::jsonin {

using nlohmann::json;

namespace {

constexpr size_t kMaxQuotedLength = 80;

bool IsIdentifier(std::string_view key) {
  if (key.empty() || std::isdigit(static_cast<unsigned char>(key[0]))) return false;
  for (char c : key) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  }
  return true;
}

// "a", "b" or "c".
std::string OneOfList(const std::vector<std::string>& allowed) {
  std::string out;
  for (size_t i = 0; i < allowed.size(); ++i) {
    if (i > 0) out += i + 1 == allowed.size() ? " or " : ", ";
    out += Quote(allowed[i]);
  }
  return out;
}

// Beyond int64, an unsigned JSON integer reads as INT64_MAX.
int64_t ClampedInteger(const json& value) {
  if (value.is_number_unsigned() && value.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) {
    return INT64_MAX;
  }
  return value.get<int64_t>();
}

}  // namespace

std::string WithoutJsonExceptionId(const std::string& what) {
  const size_t end = what.rfind("[json.exception.", 0) == 0 ? what.find("] ") : std::string::npos;
  return end == std::string::npos ? what : what.substr(end + 2);
}

Result<json> DecodeJson(std::string_view text, std::string_view what) {
  Result<json> value =
      ParseJson(text, {/*max_depth=*/kMaxJsonDepth, /*duplicate_keys=*/nullptr, kMaxJsonValues});
  if (value.ok()) return value;
  return Status::InvalidArgument("cannot decode " + std::string(what))
      .WithDetails(value.status().message());
}

std::string Quote(const std::string& s) {
  const bool long_value = s.size() > kMaxQuotedLength;
  json value = long_value ? s.substr(0, kMaxQuotedLength) : s;
  std::string out = DumpJson(value);
  if (long_value) out.insert(out.size() - 1, "...");
  return out;
}

std::string JoinKey(std::string_view parent, std::string_view key) {
  if (parent.empty()) return std::string(key);
  if (IsIdentifier(key)) return std::string(parent) + "." + std::string(key);
  return std::string(parent) + "[" + DumpJson(json(std::string(key))) + "]";
}

std::string JoinIndex(std::string_view parent, size_t index) {
  return std::string(parent) + "[" + std::to_string(index) + "]";
}

std::string DescribeValue(const json& value) {
  if (value.is_object() || value.is_array() || value.is_null()) return value.type_name();
  if (value.is_string()) return "string " + Quote(value.get<std::string>());
  return std::string(value.type_name()) + " " + DumpJson(value);
}

std::string JoinIssues(const IssueList& issues) {
  std::vector<std::string> lines;
  lines.reserve(issues.listed().size());
  for (const Issue& issue : issues.listed()) lines.push_back(issue.ToString());
  return Join(lines, "; ");
}

void IssueList::push_back(Issue issue) {
  if (listed_.size() < max_listed_) {
    listed_.push_back(std::move(issue));
  } else {
    ++unlisted_;
  }
}

void IssueList::Append(IssueList other) {
  for (Issue& issue : other.listed_) push_back(std::move(issue));
  unlisted_ += other.unlisted_;
}

std::vector<Issue> IssueList::Take(const std::string& what) && {
  if (unlisted_ > 0) {
    listed_.push_back({"$", std::to_string(unlisted_) + " more " + what +
                                " not listed (the first " + std::to_string(max_listed_) + " are)"});
  }
  return std::move(listed_);
}

FieldReader::FieldReader(const json& object, std::string path, IssueList* issues,
                         DescribeMismatch describe)
    : FieldReader(object, std::move(path), issues, ReaderStyle{describe}) {}

FieldReader::FieldReader(const json& object, std::string path, IssueList* issues, ReaderStyle style)
    : object_(object), path_(std::move(path)), issues_(issues), style_(style) {}

FieldReader FieldReader::At(const json& object, std::string path) const {
  return FieldReader(object, std::move(path), issues_, style_);
}

const json* FieldReader::Find(std::string_view key) const {
  if (!object_.is_object()) return nullptr;
  const auto it = object_.find(key);
  if (it == object_.end() || (style_.null_is_absent && it->is_null())) return nullptr;
  return &*it;
}

std::string FieldReader::PathOf(std::string_view key) const {
  if (style_.syntax == PathSyntax::kJsonPointer) return path_ + "/" + std::string(key);
  return JoinKey(path_, key);
}

std::string FieldReader::PathOfElement(std::string_view array_path, size_t index) const {
  if (style_.syntax == PathSyntax::kJsonPointer) {
    return std::string(array_path) + "/" + std::to_string(index);
  }
  return JoinIndex(array_path, index);
}

void FieldReader::Fail(std::string_view key, std::string problem) {
  issues_->push_back({PathOf(key), std::move(problem)});
}

void FieldReader::Mismatch(const json& value, const std::string& path, std::string_view expected) {
  const std::string got = style_.describe ? style_.describe(value, expected) : DescribeValue(value);
  issues_->push_back({path, "must be " + std::string(expected) + ", got " + got});
}

std::optional<std::string> FieldReader::StringAt(const json& value, const std::string& path) {
  if (value.is_string()) return value.get<std::string>();
  Mismatch(value, path, "a string");
  return std::nullopt;
}

std::optional<int64_t> FieldReader::IntegerAt(const json& value, const std::string& path) {
  if (value.is_number_integer()) return ClampedInteger(value);
  Mismatch(value, path, "an integer");
  return std::nullopt;
}

const json* FieldReader::Typed(std::string_view key, Need need, bool (*check)(const json&),
                               std::string_view expected) {
  const json* value = Find(key);
  if (!value) {
    if (need == Need::kRequired) Fail(key, "required");
    return nullptr;
  }
  if (!check(*value)) {
    Mismatch(*value, PathOf(key), expected);
    return nullptr;
  }
  return value;
}

std::optional<std::string> FieldReader::String(std::string_view key, Need need) {
  const json* value = Typed(
      key, need, [](const json& v) { return v.is_string(); }, "a string");
  if (!value) return std::nullopt;
  return value->get<std::string>();
}

std::optional<int64_t> FieldReader::Integer(std::string_view key, Need need) {
  const json* value = Typed(
      key, need, [](const json& v) { return v.is_number_integer(); }, "an integer");
  if (!value) return std::nullopt;
  return ClampedInteger(*value);
}

std::optional<int64_t> FieldReader::Integer(std::string_view key, int64_t min, int64_t max,
                                            Need need) {
  const std::optional<int64_t> n = Integer(key, need);
  if (!n) return std::nullopt;
  if (*n < min || *n > max) {
    Fail(key, "must be " + std::to_string(min) + ".." + std::to_string(max) + ", got " +
                  Find(key)->dump());
    return std::nullopt;
  }
  return n;
}

std::optional<bool> FieldReader::Bool(std::string_view key, Need need) {
  const json* value = Typed(
      key, need, [](const json& v) { return v.is_boolean(); }, "a boolean");
  if (!value) return std::nullopt;
  return value->get<bool>();
}

const json* FieldReader::Object(std::string_view key, Need need) {
  return Typed(
      key, need, [](const json& v) { return v.is_object(); }, "an object");
}

const json* FieldReader::Array(std::string_view key, Need need) {
  return Typed(
      key, need, [](const json& v) { return v.is_array(); }, "an array");
}

std::optional<std::vector<std::string>> FieldReader::Strings(std::string_view key, Need need) {
  const json* array = Array(key, need);
  if (!array) return std::nullopt;
  std::vector<std::string> out;
  bool ok = true;
  for (size_t i = 0; i < array->size(); ++i) {
    std::optional<std::string> item = StringAt((*array)[i], PathOfElement(PathOf(key), i));
    if (!item) {
      ok = false;
      continue;
    }
    out.push_back(std::move(*item));
  }
  if (!ok) return std::nullopt;
  return out;
}

std::optional<size_t> FieldReader::Choice(std::string_view key,
                                          const std::vector<std::string>& allowed, Need need) {
  const std::optional<std::string> value = String(key, need);
  if (!value) return std::nullopt;
  const std::string lower = ToLowerAscii(*value);
  for (size_t i = 0; i < allowed.size(); ++i) {
    if (lower == ToLowerAscii(allowed[i])) return i;
  }
  Fail(key, "must be " + OneOfList(allowed) + ", got " + Quote(*value));
  return std::nullopt;
}

}  // namespace hcashare::jsonin
