#include "testing/openapi_lite.h"

#include <cstdint>
#include <limits>
#include <regex>
#include <set>
#include <stdexcept>

#include "testing/schema_keywords.h"

namespace hcashare::testing {
namespace {

using json = nlohmann::json;

const char kRefPrefix[] = "#/components/schemas/";

[[noreturn]] void BadSchema(const std::string& where, const std::string& what) {
  throw std::invalid_argument("OpenAPI schema at " + where + ": " + what);
}

// clang-format off
const std::set<std::string> kAnnotations = {
    "description", "title", "default", "example", "deprecated", "x-kubernetes-map-type",
    "x-kubernetes-patch-merge-key", "x-kubernetes-patch-strategy",
    "x-kubernetes-group-version-kind", "x-kubernetes-list-map-keys"};
const std::set<std::string> kAssertions = {
    "type", "format", "enum", "properties", "required", "additionalProperties", "items",
    "allOf", "oneOf", "nullable", "minItems", "maxItems", "minLength", "maxLength", "pattern",
    "minimum", "maximum", "$ref", "x-kubernetes-list-type",
    "x-kubernetes-preserve-unknown-fields", "x-kubernetes-int-or-string"};
// clang-format on
const std::set<std::string> kTypes = {"object", "array", "string", "integer", "number", "boolean"};
// The formats checked, by the type they apply to.
const std::set<std::string> kIntegerFormats = {"int32", "int64"};
const std::set<std::string> kStringFormats = {"byte", "date-time", "int-or-string"};

std::string RefName(const json& ref, const std::string& at) {
  if (!ref.is_string()) BadSchema(at, "$ref must be a string");
  const std::string s = ref.get<std::string>();
  if (s.compare(0, sizeof(kRefPrefix) - 1, kRefPrefix) != 0) {
    BadSchema(at, "only \"#/components/schemas/NAME\" references are supported: " + s);
  }
  return s.substr(sizeof(kRefPrefix) - 1);
}

// Checks every schema reachable from `root` once: keywords, their values and references.
class Linter {
 public:
  explicit Linter(const json& schemas) : schemas_(schemas) {}

  void Named(const std::string& name, const std::string& at) {
    if (!schemas_.contains(name)) BadSchema(at, "unresolved $ref to " + name);
    if (!done_.insert(name).second) return;
    Lint(schemas_[name], "#/components/schemas/" + name);
  }

 private:
  void Lint(const json& schema, const std::string& at) {
    if (!schema.is_object()) BadSchema(at, "a schema must be an object");
    for (const auto& [k, unused] : schema.items()) {
      if (!kAnnotations.count(k) && !kAssertions.count(k)) {
        BadSchema(at, "keyword \"" + k + "\" is not supported by this validator");
      }
      if (schema.contains("$ref") && kAssertions.count(k) && k != "$ref") {
        BadSchema(at, "OpenAPI 3.0 ignores \"" + k + "\" beside $ref");
      }
    }
    if (schema.contains("$ref")) Named(RefName(schema["$ref"], at), at);
    std::string type;
    if (schema.contains("type")) {
      if (!schema["type"].is_string() || !kTypes.count(schema["type"].get<std::string>())) {
        BadSchema(at, "type must be one of object, array, string, integer, number, boolean: " +
                          schema["type"].dump());
      }
      type = schema["type"].get<std::string>();
    }
    if (schema.contains("format")) {
      const json& f = schema["format"];
      const auto& known = type == "integer" ? kIntegerFormats : kStringFormats;
      if (!f.is_string() || (type != "integer" && type != "string") ||
          !known.count(f.get<std::string>())) {
        BadSchema(at, "format " + f.dump() + " on type \"" + type + "\" is not supported");
      }
    }
    for (const char* k : {"nullable", "x-kubernetes-preserve-unknown-fields",
                          "x-kubernetes-int-or-string", "deprecated"}) {
      if (schema.contains(k) && !schema[k].is_boolean())
        BadSchema(at, std::string(k) + " must be a boolean");
    }
    CheckSharedKeywords(schema, [&](const std::string& what) { BadSchema(at, what); });
    if (schema.contains("required")) {
      if (!schema["required"].is_array()) BadSchema(at, "required must be an array");
      for (const auto& r : schema["required"]) {
        if (!r.is_string()) BadSchema(at, "required must list strings");
      }
    }
    LintListType(schema, type, at);
    if (schema.contains("properties")) {
      if (!schema["properties"].is_object()) BadSchema(at, "properties must be an object");
      for (const auto& [name, sub] : schema["properties"].items()) {
        Lint(sub, at + "/properties/" + name);
      }
    }
    if (schema.contains("additionalProperties") && !schema["additionalProperties"].is_boolean()) {
      Lint(schema["additionalProperties"], at + "/additionalProperties");
    }
    if (schema.contains("items")) Lint(schema["items"], at + "/items");
    for (const char* k : {"allOf", "oneOf"}) {
      if (!schema.contains(k)) continue;
      if (!schema[k].is_array() || schema[k].empty()) {
        BadSchema(at, std::string(k) + " must be a non-empty array");
      }
      for (size_t i = 0; i < schema[k].size(); ++i) {
        Lint(schema[k][i], at + "/" + k + "/" + std::to_string(i));
      }
    }
  }

  static void LintListType(const json& schema, const std::string& type, const std::string& at) {
    const bool has_keys = schema.contains("x-kubernetes-list-map-keys");
    if (!schema.contains("x-kubernetes-list-type")) {
      if (has_keys) BadSchema(at, "x-kubernetes-list-map-keys without list type map");
      return;
    }
    const json& lt = schema["x-kubernetes-list-type"];
    if (type != "array") BadSchema(at, "x-kubernetes-list-type on a non-array");
    if (lt != "atomic" && lt != "set" && lt != "map") {
      BadSchema(at, "x-kubernetes-list-type " + lt.dump() + " is not atomic, set or map");
    }
    if ((lt == "map") != has_keys) {
      BadSchema(at, "x-kubernetes-list-map-keys go with list type map, and only with it");
    }
    if (has_keys) {
      const json& keys = schema["x-kubernetes-list-map-keys"];
      if (!keys.is_array() || keys.empty()) BadSchema(at, "list-map keys must be a list");
      for (const auto& k : keys) {
        if (!k.is_string()) BadSchema(at, "list-map keys must be strings");
      }
    }
  }

  const json& schemas_;
  std::set<std::string> done_;
};

std::string Child(const std::string& path, const std::string& key) {
  return path.empty() ? key : path + "." + key;
}

std::string Shown(const json& v) {
  std::string s = v.dump();
  return s.size() > 60 ? s.substr(0, 57) + "..." : s;
}

std::string TypeName(const json& v) {
  if (v.is_number_integer()) return "integer";
  if (v.is_number()) return "number";
  return v.type_name();
}

bool HasType(const json& v, const std::string& type) {
  if (type == "object") return v.is_object();
  if (type == "array") return v.is_array();
  if (type == "string") return v.is_string();
  if (type == "boolean") return v.is_boolean();
  if (type == "number") return v.is_number();
  return v.is_number_integer();  // "integer"
}

bool IsRfc3339(const std::string& s) {
  static const std::regex re(
      R"(^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])[Tt]([01]\d|2[0-3]):[0-5]\d:([0-5]\d|60))"
      R"((\.\d+)?([Zz]|[+-]([01]\d|2[0-3]):[0-5]\d)$)");
  return std::regex_match(s, re);
}

bool IsBase64(const std::string& s) {
  static const std::regex re(R"(^([A-Za-z0-9+/]{4})*([A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$)");
  return std::regex_match(s, re);
}

// Validation proper, on schemas the Linter accepted.
class Validator {
 public:
  explicit Validator(const json& schemas) : schemas_(schemas) {}

  void Check(const json& schema, const json& v, const std::string& path,
             std::vector<std::string>& errors) const {
    if (schema.contains("$ref")) {
      Check(schemas_[RefName(schema["$ref"], path)], v, path, errors);
      return;
    }
    if (v.is_null() && schema.value("nullable", false)) return;
    if (schema.contains("type") && !CheckType(schema, v, path, errors)) return;
    if (schema.contains("enum")) {
      bool found = false;
      for (const auto& x : schema["enum"]) found = found || x == v;
      if (!found) Error(errors, path, Shown(v) + " is not one of " + schema["enum"].dump());
    }
    if (v.is_object()) CheckObject(schema, v, path, errors);
    if (v.is_array()) CheckArray(schema, v, path, errors);
    if (v.is_string()) CheckString(schema, v.get<std::string>(), path, errors);
    if (v.is_number()) CheckNumber(schema, v, path, errors);
    if (schema.contains("allOf")) {
      for (const auto& sub : schema["allOf"]) Check(sub, v, path, errors);
    }
    if (schema.contains("oneOf")) CheckOneOf(schema["oneOf"], v, path, errors);
  }

 private:
  static void Error(std::vector<std::string>& errors, const std::string& path,
                    const std::string& what) {
    errors.push_back((path.empty() ? "(root)" : path) + ": " + what);
  }

  // The type (and x-kubernetes-int-or-string); false when it fails, so that the other
  // keywords do not repeat the error.
  bool CheckType(const json& schema, const json& v, const std::string& path,
                 std::vector<std::string>& errors) const {
    const std::string type = schema["type"].get<std::string>();
    const bool int_or_string = schema.value("x-kubernetes-int-or-string", false) ||
                               schema.value("format", "") == "int-or-string";
    if (HasType(v, type) || (int_or_string && (v.is_string() || v.is_number_integer()))) {
      return true;
    }
    if (v.is_null()) {
      Error(errors, path, "null is not allowed (the schema is not nullable)");
    } else {
      Error(errors, path, "expected " + type + ", got " + TypeName(v) + " " + Shown(v));
    }
    return false;
  }

  void CheckObject(const json& schema, const json& v, const std::string& path,
                   std::vector<std::string>& errors) const {
    const json props = schema.value("properties", json::object());
    for (const auto& r : schema.value("required", json::array())) {
      if (!v.contains(r.get<std::string>())) {
        Error(errors, path, "required field \"" + r.get<std::string>() + "\" is missing");
      }
    }
    const bool preserve = schema.value("x-kubernetes-preserve-unknown-fields", false);
    for (const auto& [k, value] : v.items()) {
      if (props.contains(k)) {
        Check(props[k], value, Child(path, k), errors);
      } else if (schema.contains("additionalProperties")) {
        const json& extra = schema["additionalProperties"];
        if (extra.is_boolean()) {
          if (!extra.get<bool>()) Error(errors, Child(path, k), "unknown field");
        } else {
          Check(extra, value, Child(path, k), errors);
        }
      } else if (schema.contains("properties") && !preserve) {
        Error(errors, Child(path, k), "unknown field");  // fieldValidation=Strict
      }
    }
  }

  void CheckArray(const json& schema, const json& v, const std::string& path,
                  std::vector<std::string>& errors) const {
    if (schema.contains("minItems") && v.size() < schema["minItems"].get<size_t>()) {
      Error(errors, path, "fewer than " + schema["minItems"].dump() + " items");
    }
    if (schema.contains("maxItems") && v.size() > schema["maxItems"].get<size_t>()) {
      Error(errors, path, "more than " + schema["maxItems"].dump() + " items");
    }
    if (schema.contains("items")) {
      for (size_t i = 0; i < v.size(); ++i) {
        Check(schema["items"], v[i], path + "[" + std::to_string(i) + "]", errors);
      }
    }
    const std::string list_type = schema.value("x-kubernetes-list-type", "atomic");
    if (list_type == "atomic") return;
    // set: the items are unique; map: the items' list-map keys are (a missing key counts
    // as null).
    std::set<std::string> seen;
    for (size_t i = 0; i < v.size(); ++i) {
      json key = v[i];
      if (list_type == "map") {
        key = json::array();
        for (const auto& name : schema["x-kubernetes-list-map-keys"]) {
          const std::string n = name.get<std::string>();
          key.push_back(v[i].is_object() && v[i].contains(n) ? v[i][n] : json());
        }
      }
      if (!seen.insert(key.dump()).second) {
        Error(errors, path + "[" + std::to_string(i) + "]",
              "duplicate entry " + Shown(key) + " in a list of type " + list_type);
      }
    }
  }

  static void CheckString(const json& schema, const std::string& s, const std::string& path,
                          std::vector<std::string>& errors) {
    size_t length = 0;  // code points, not bytes
    for (unsigned char c : s) length += (c & 0xC0) != 0x80;
    if (schema.contains("minLength") && length < schema["minLength"].get<size_t>()) {
      Error(errors, path, "\"" + s + "\" is shorter than " + schema["minLength"].dump());
    }
    if (schema.contains("maxLength") && length > schema["maxLength"].get<size_t>()) {
      Error(errors, path, "\"" + s + "\" is longer than " + schema["maxLength"].dump());
    }
    if (schema.contains("pattern")) {
      const std::string pattern = schema["pattern"].get<std::string>();
      if (!std::regex_search(s, std::regex(pattern, std::regex::ECMAScript))) {
        Error(errors, path, "\"" + s + "\" does not match " + pattern);
      }
    }
    const std::string format = schema.value("format", "");
    if (format == "date-time" && !IsRfc3339(s)) {
      Error(errors, path, "\"" + s + "\" is not an RFC 3339 date-time");
    } else if (format == "byte" && !IsBase64(s)) {
      Error(errors, path, "\"" + s + "\" is not base64 (format byte)");
    }
  }

  static void CheckNumber(const json& schema, const json& v, const std::string& path,
                          std::vector<std::string>& errors) {
    const std::string format = schema.value("format", "");
    if (format == "int32" || format == "int64") {
      const int64_t lo = format == "int32" ? std::numeric_limits<int32_t>::min()
                                           : std::numeric_limits<int64_t>::min();
      const int64_t hi = format == "int32" ? std::numeric_limits<int32_t>::max()
                                           : std::numeric_limits<int64_t>::max();
      const bool fits = v.is_number_unsigned() ? v.get<uint64_t>() <= static_cast<uint64_t>(hi)
                                               : v.get<int64_t>() >= lo && v.get<int64_t>() <= hi;
      if (!fits) Error(errors, path, Shown(v) + " does not fit format " + format);
    }
    const double d = v.get<double>();
    if (schema.contains("minimum") && d < schema["minimum"].get<double>()) {
      Error(errors, path, Shown(v) + " is less than " + schema["minimum"].dump());
    }
    if (schema.contains("maximum") && d > schema["maximum"].get<double>()) {
      Error(errors, path, Shown(v) + " is more than " + schema["maximum"].dump());
    }
  }

  void CheckOneOf(const json& branches, const json& v, const std::string& path,
                  std::vector<std::string>& errors) const {
    size_t matched = 0;
    std::string why;
    for (const auto& sub : branches) {
      std::vector<std::string> sub_errors;
      Check(sub, v, path, sub_errors);
      if (sub_errors.empty()) {
        ++matched;
      } else if (why.empty()) {
        why = sub_errors.front();
      }
    }
    if (matched == 0) {
      Error(errors, path,
            "matches none of the " + std::to_string(branches.size()) +
                " oneOf schemas (first: " + why + ")");
    } else if (matched > 1) {
      Error(errors, path, "matches " + std::to_string(matched) + " oneOf schemas, not one");
    }
  }

  const json& schemas_;
};

}  // namespace

std::vector<std::string> ValidateOpenApi(const json& document, const std::string& root,
                                         const json& instance) {
  if (!document.is_object() || !document.contains("components") ||
      !document["components"].is_object() || !document["components"].contains("schemas") ||
      !document["components"]["schemas"].is_object()) {
    throw std::invalid_argument("OpenAPI document without components.schemas");
  }
  const json& schemas = document["components"]["schemas"];
  Linter(schemas).Named(root, "(root)");
  std::vector<std::string> errors;
  Validator(schemas).Check(schemas[root], instance, "", errors);
  return errors;
}

}  // namespace hcashare::testing
