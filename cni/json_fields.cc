#include "cni/json_fields.h"

#include <exception>
#include <utility>

#include "cni/error.h"
#include "cni/syntax.h"
#include "config/document.h"

namespace hcashare::cni {

using nlohmann::json;

namespace {

// Thrown from the parser callback to stop at the nesting limit.
struct TooDeep {};

// Drops nlohmann's "[json.exception.parse_error.101] " prefix.
std::string WithoutExceptionId(const std::string& what) {
  const size_t end = what.rfind("[json.exception.", 0) == 0 ? what.find("] ") : std::string::npos;
  return end == std::string::npos ? what : what.substr(end + 2);
}

// "a", "b" or "c".
std::string OneOfList(const std::vector<std::string>& allowed) {
  std::string out;
  for (size_t i = 0; i < allowed.size(); ++i) {
    if (i > 0) out += i + 1 == allowed.size() ? " or " : ", ";
    out += config::Quote(allowed[i]);
  }
  return out;
}

}  // namespace

Result<json> DecodeJson(std::string_view text, std::string_view what) {
  const std::string msg = "cannot decode " + std::string(what);
  json::parser_callback_t limit_depth = [](int depth, json::parse_event_t event, json&) {
    const bool opens =
        event == json::parse_event_t::object_start || event == json::parse_event_t::array_start;
    if (opens && depth >= kMaxJsonDepth) throw TooDeep{};
    return true;
  };
  // Parse without exceptions first: in a static binary the first C++ throw of a process
  // sorts every unwind table (~2.5 ms here), so only malformed input pays for the message.
  try {
    json value = json::parse(text.begin(), text.end(), limit_depth, /*allow_exceptions=*/false);
    if (!value.is_discarded()) return value;
    return json::parse(text.begin(), text.end(), limit_depth);
  } catch (const TooDeep&) {
    return CniStatus(kErrDecode, msg,
                     "nested deeper than " + std::to_string(kMaxJsonDepth) + " levels");
  } catch (const json::exception& e) {
    return CniStatus(kErrDecode, msg, WithoutExceptionId(e.what()));
  }
}

std::string JoinPath(std::string_view parent, std::string_view key) {
  if (parent.empty()) return std::string(key);
  return std::string(parent) + "." + std::string(key);
}

std::string IndexPath(std::string_view parent, size_t index) {
  return std::string(parent) + "[" + std::to_string(index) + "]";
}

std::string DescribeValue(const json& value) {
  if (value.is_object() || value.is_array() || value.is_null()) return value.type_name();
  if (value.is_string()) return "string " + config::Quote(value.get<std::string>());
  return std::string(value.type_name()) + " " + value.dump();
}

FieldReader::FieldReader(const json& object, std::string path, std::vector<std::string>* errors)
    : object_(object), path_(std::move(path)), errors_(errors) {}

const json* FieldReader::Find(std::string_view key) const {
  if (!object_.is_object()) return nullptr;
  const auto it = object_.find(key);
  if (it == object_.end() || it->is_null()) return nullptr;
  return &*it;
}

std::string FieldReader::PathOf(std::string_view key) const { return JoinPath(path_, key); }

void FieldReader::Fail(std::string_view key, const std::string& problem) {
  errors_->push_back(PathOf(key) + ": " + problem);
}

const json* FieldReader::Typed(std::string_view key, Need need, bool (*check)(const json&),
                               const char* expected) {
  const json* value = Find(key);
  if (!value) {
    if (need == Need::kRequired) Fail(key, "required");
    return nullptr;
  }
  if (!check(*value)) {
    Fail(key, std::string("must be ") + expected + ", got " + DescribeValue(*value));
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

std::optional<int64_t> FieldReader::Integer(std::string_view key, int64_t min, int64_t max,
                                            Need need) {
  const json* value = Typed(
      key, need, [](const json& v) { return v.is_number_integer(); }, "an integer");
  if (!value) return std::nullopt;
  const bool too_big =
      value->is_number_unsigned() && value->get<uint64_t>() > static_cast<uint64_t>(INT64_MAX);
  const int64_t n = too_big ? INT64_MAX : value->get<int64_t>();
  if (too_big || n < min || n > max) {
    Fail(key,
         "must be " + std::to_string(min) + ".." + std::to_string(max) + ", got " + value->dump());
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
    const json& item = (*array)[i];
    if (!item.is_string()) {
      errors_->push_back(IndexPath(PathOf(key), i) + ": must be a string, got " +
                         DescribeValue(item));
      ok = false;
      continue;
    }
    out.push_back(item.get<std::string>());
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
  Fail(key, "must be " + OneOfList(allowed) + ", got " + config::Quote(*value));
  return std::nullopt;
}

}  // namespace hcashare::cni
