#include "tests/json_schema_lite.h"

#include <cmath>
#include <regex>
#include <set>
#include <stdexcept>

#include "testing/schema_keywords.h"

namespace hcashare::deploy {
namespace {

using json = nlohmann::json;

[[noreturn]] void BadSchema(const std::string& where, const std::string& what) {
  throw std::invalid_argument("schema at " + where + ": " + what);
}

const std::set<std::string> kAnnotations = {"$schema",     "$id",     "$comment", "title",
                                            "description", "default", "examples", "definitions"};
const std::set<std::string> kAssertions = {
    "type",    "enum",     "const",    "properties", "required",  "additionalProperties",
    "items",   "minItems", "maxItems", "minLength",  "maxLength", "pattern",
    "minimum", "maximum",  "$ref"};
const std::set<std::string> kTypes = {"object", "array",   "string", "integer",
                                      "number", "boolean", "null"};

bool HasType(const json& v, const std::string& type) {
  if (type == "object") return v.is_object();
  if (type == "array") return v.is_array();
  if (type == "string") return v.is_string();
  if (type == "boolean") return v.is_boolean();
  if (type == "null") return v.is_null();
  if (type == "number") return v.is_number();
  // Draft-07: any number without a fractional part is an integer (1.0 included).
  if (v.is_number_integer()) return true;
  if (v.is_number_float()) {
    const double d = v.get<double>();
    return std::isfinite(d) && d == std::floor(d);
  }
  return false;
}

std::string Child(const std::string& path, const std::string& key) {
  return path.empty() ? key : path + "." + key;
}

std::string Shown(const json& v) {
  std::string s = v.dump();
  return s.size() > 60 ? s.substr(0, 57) + "..." : s;
}

// Rejects a schema that uses anything this validator does not implement, in every
// subschema (also those that a given instance never reaches).
void Lint(const json& schema, const json& root, const std::string& at) {
  if (schema.is_boolean()) return;
  if (!schema.is_object()) BadSchema(at, "a schema must be an object or a boolean");
  for (const auto& [k, unused] : schema.items()) {
    if (!kAnnotations.count(k) && !kAssertions.count(k)) {
      BadSchema(at, "keyword \"" + k + "\" is not supported by this validator");
    }
    if (schema.contains("$ref") && kAssertions.count(k) && k != "$ref") {
      BadSchema(at, "draft-07 ignores \"" + k + "\" beside $ref");
    }
  }
  if (schema.contains("$ref")) {
    static const std::string kPrefix = "#/definitions/";
    const json& ref = schema["$ref"];
    if (!ref.is_string() || ref.get<std::string>().compare(0, kPrefix.size(), kPrefix) != 0) {
      BadSchema(at, "only \"#/definitions/NAME\" references are supported: " + ref.dump());
    }
    const json defs = root.value("definitions", json::object());
    if (!defs.contains(ref.get<std::string>().substr(kPrefix.size()))) {
      BadSchema(at, "unresolved $ref " + ref.dump());
    }
  }
  if (schema.contains("type")) {
    const json& t = schema["type"];
    for (const auto& name : t.is_array() ? t : json::array({t})) {
      if (!name.is_string() || !kTypes.count(name.get<std::string>())) {
        BadSchema(at, "unknown type " + name.dump());
      }
    }
  }
  hcashare::testing::CheckSharedKeywords(schema,
                                         [&](const std::string& what) { BadSchema(at, what); });
  for (const auto& r : schema.value("required", json::array())) {
    if (!r.is_string()) BadSchema(at, "required must list strings");
  }
  for (const char* k : {"properties", "definitions"}) {
    if (!schema.contains(k)) continue;
    if (!schema[k].is_object()) BadSchema(at, std::string(k) + " must be an object");
    for (const auto& [name, sub] : schema[k].items()) {
      Lint(sub, root, at + "/" + k + "/" + name);
    }
  }
  if (schema.contains("additionalProperties")) {
    Lint(schema["additionalProperties"], root, at + "/additionalProperties");
  }
  if (schema.contains("items")) {
    if (schema["items"].is_array()) BadSchema(at, "tuple items are not supported");
    Lint(schema["items"], root, at + "/items");
  }
}

// Validation proper, on a schema that Lint accepted.
class Validator {
 public:
  explicit Validator(const json& root) : root_(root) {}

  void Check(const json& schema, const json& v, const std::string& path) {
    if (schema.is_boolean()) {
      if (!schema.get<bool>()) Error(path, "no value is allowed here");
      return;
    }
    if (schema.contains("$ref")) {
      const std::string name = schema["$ref"].get<std::string>().substr(14);  // #/definitions/
      Check(root_["definitions"][name], v, path);
      return;
    }
    if (schema.contains("type")) {
      const json& t = schema["type"];
      bool ok = false;
      for (const auto& name : t.is_array() ? t : json::array({t})) {
        ok = ok || HasType(v, name.get<std::string>());
      }
      if (!ok) {
        Error(path, "expected " + (t.is_array() ? "one of " + t.dump() : t.get<std::string>()) +
                        ", got " + TypeName(v) + " " + Shown(v));
        return;  // the other keywords would only repeat it
      }
    }
    if (schema.contains("enum")) {
      bool found = false;
      for (const auto& x : schema["enum"]) found = found || x == v;
      if (!found) Error(path, Shown(v) + " is not one of " + schema["enum"].dump());
    }
    if (schema.contains("const") && schema["const"] != v) {
      Error(path, Shown(v) + " is not " + schema["const"].dump());
    }
    if (v.is_object()) CheckObject(schema, v, path);
    if (v.is_array()) CheckArray(schema, v, path);
    if (v.is_string()) CheckString(schema, v.get<std::string>(), path);
    if (v.is_number()) {
      const double d = v.get<double>();
      if (schema.contains("minimum") && d < schema["minimum"].get<double>()) {
        Error(path, Shown(v) + " is less than " + schema["minimum"].dump());
      }
      if (schema.contains("maximum") && d > schema["maximum"].get<double>()) {
        Error(path, Shown(v) + " is more than " + schema["maximum"].dump());
      }
    }
  }

  std::vector<std::string> errors;

 private:
  void Error(const std::string& path, const std::string& what) {
    errors.push_back((path.empty() ? "(root)" : path) + ": " + what);
  }

  static std::string TypeName(const json& v) {
    if (v.is_number_integer()) return "integer";
    if (v.is_number()) return "number";
    return v.type_name();
  }

  static std::string KeyList(const json& props) {
    std::string out;
    for (const auto& [k, unused] : props.items()) out += (out.empty() ? "" : ", ") + k;
    return out.empty() ? "none" : out;
  }

  void CheckObject(const json& schema, const json& v, const std::string& path) {
    const json props = schema.value("properties", json::object());
    for (const auto& r : schema.value("required", json::array())) {
      if (!v.contains(r.get<std::string>())) {
        Error(path, "required key \"" + r.get<std::string>() + "\" is missing");
      }
    }
    for (const auto& [k, value] : v.items()) {
      if (props.contains(k)) {
        Check(props[k], value, Child(path, k));
      } else if (schema.contains("additionalProperties")) {
        const json& extra = schema["additionalProperties"];
        if (extra.is_boolean() && !extra.get<bool>()) {
          Error(Child(path, k), "unknown key (allowed: " + KeyList(props) + ")");
        } else {
          Check(extra, value, Child(path, k));
        }
      }
    }
  }

  void CheckArray(const json& schema, const json& v, const std::string& path) {
    if (schema.contains("minItems") && v.size() < schema["minItems"].get<size_t>()) {
      Error(path, "fewer than " + schema["minItems"].dump() + " items");
    }
    if (schema.contains("maxItems") && v.size() > schema["maxItems"].get<size_t>()) {
      Error(path, "more than " + schema["maxItems"].dump() + " items");
    }
    if (!schema.contains("items")) return;
    for (size_t i = 0; i < v.size(); ++i) {
      Check(schema["items"], v[i], path + "[" + std::to_string(i) + "]");
    }
  }

  void CheckString(const json& schema, const std::string& s, const std::string& path) {
    // Lengths count code points, not bytes.
    size_t length = 0;
    for (unsigned char c : s) length += (c & 0xC0) != 0x80;
    if (schema.contains("minLength") && length < schema["minLength"].get<size_t>()) {
      Error(path, "\"" + s + "\" is shorter than " + schema["minLength"].dump());
    }
    if (schema.contains("maxLength") && length > schema["maxLength"].get<size_t>()) {
      Error(path, "\"" + s + "\" is longer than " + schema["maxLength"].dump());
    }
    if (schema.contains("pattern")) {
      const std::string pattern = schema["pattern"].get<std::string>();
      if (!std::regex_search(s, std::regex(pattern, std::regex::ECMAScript))) {
        Error(path, "\"" + s + "\" does not match " + pattern);
      }
    }
  }

  const json& root_;
};

}  // namespace

std::vector<std::string> ValidateJsonSchema(const json& schema, const json& instance) {
  Lint(schema, schema, "#");
  Validator v(schema);
  v.Check(schema, instance, "");
  return v.errors;
}

}  // namespace hcashare::deploy
