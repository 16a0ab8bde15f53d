#include "json/document.h"

#include <cctype>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <limits>
#include <string_view>
#include <utility>

#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/yaml.h>

#include "common/strings.h"
#include "json/fields.h"
#include "json/parse.h"
#include "json/prescan.h"

namespace hcashare::jsonin {
namespace {

using nlohmann::json;

// Longest value quoted verbatim in a message.
// A document not parsed, for `why`: a syntax error or the pre-scan's refusal.
Document Unparsed(Issue why) {
  Document doc;
  doc.errors.push_back(std::move(why));
  return doc;
}

Document SyntaxError(std::string message) { return Unparsed({"$", std::move(message)}); }

// --- YAML --------------------------------------------------------------------------

bool IsDigits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

std::string_view StripSign(std::string_view s) {
  if (!s.empty() && (s[0] == '+' || s[0] == '-')) s.remove_prefix(1);
  return s;
}

// YAML 1.2 core schema float: [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?
bool IsYamlFloat(std::string_view s) {
  s = StripSign(s);
  const size_t e = s.find_first_of("eE");
  std::string_view mantissa = s.substr(0, e);
  if (e != std::string_view::npos && !IsDigits(StripSign(s.substr(e + 1)))) return false;
  const size_t dot = mantissa.find('.');
  if (dot == std::string_view::npos) return IsDigits(mantissa);
  std::string_view int_part = mantissa.substr(0, dot);
  std::string_view frac_part = mantissa.substr(dot + 1);
  if (int_part.empty()) return IsDigits(frac_part);
  return IsDigits(int_part) && (frac_part.empty() || IsDigits(frac_part));
}

// Resolves an untagged plain scalar the way the YAML 1.2 core schema does.
json ResolvePlainScalar(const std::string& s) {
  if (s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL") return nullptr;
  if (s == "true" || s == "True" || s == "TRUE") return true;
  if (s == "false" || s == "False" || s == "FALSE") return false;
  std::string_view body = StripSign(s);
  if (body == ".inf" || body == ".Inf" || body == ".INF") {
    return s[0] == '-' ? -std::numeric_limits<double>::infinity()
                       : std::numeric_limits<double>::infinity();
  }
  if (s == ".nan" || s == ".NaN" || s == ".NAN") return std::numeric_limits<double>::quiet_NaN();
  // from_chars rejects a leading '+'.
  std::string_view digits = s[0] == '+' ? std::string_view(s).substr(1) : std::string_view(s);
  if (IsDigits(body)) {
    std::int64_t value = 0;
    auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
    if (ec == std::errc() && ptr == digits.data() + digits.size()) return value;
    // Out of int64 range: fall through to a float, as JSON parsers do.
  }
  if (IsYamlFloat(s)) {
    double value = 0;
    auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
    if (ec == std::errc() && ptr == digits.data() + digits.size()) return value;
    if (ec == std::errc::result_out_of_range) {
      return s[0] == '-' ? -std::numeric_limits<double>::infinity()
                         : std::numeric_limits<double>::infinity();
    }
  }
  return s;
}

// Converts a yaml-cpp node tree into JSON, reporting what JSON cannot express.
class YamlConverter {
 public:
  explicit YamlConverter(IssueList* errors) : errors_(errors) {}

  // Converts `node` (at JSON path `path`, nesting `depth`) and everything below it. The
  // pre-scan bounded the expanded size and the nesting of the text, but an alias can still
  // put a deep collection below another: then the part past kMaxDocumentDepth is dropped.
  json Convert(const YAML::Node& node, const std::string& path, int depth) {
    switch (node.Type()) {
      case YAML::NodeType::Scalar:
        return ConvertScalar(node);
      case YAML::NodeType::Sequence:
      case YAML::NodeType::Map: {
        // Reported once each: a cycle or a deep tree would otherwise give one error per
        // leaf, tens of thousands for a few lines of YAML.
        if (IsAncestor(node)) {
          if (!cycle_reported_) {
            errors_->push_back({path,
                                "an alias refers to a mapping or sequence that contains "
                                "it (the document would be infinite)"});
            cycle_reported_ = true;
          }
          return nullptr;
        }
        if (depth >= kMaxDocumentDepth) {
          if (!too_deep_reported_) {
            errors_->push_back(
                {path, "nested more than " + std::to_string(kMaxDocumentDepth) + " levels deep"});
            too_deep_reported_ = true;
          }
          return nullptr;
        }
        ancestors_.push_back(node);
        json out =
            node.IsMap() ? ConvertMap(node, path, depth) : ConvertSequence(node, path, depth);
        ancestors_.pop_back();
        return out;
      }
      case YAML::NodeType::Null:
      case YAML::NodeType::Undefined:
        break;
    }
    return nullptr;
  }

 private:
  static json ConvertScalar(const YAML::Node& node) {
    const std::string& tag = node.Tag();
    if (tag == "!" || tag == "tag:yaml.org,2002:str") return node.Scalar();
    return ResolvePlainScalar(node.Scalar());
  }

  json ConvertSequence(const YAML::Node& node, const std::string& path, int depth) {
    json out = json::array();
    size_t index = 0;
    for (const YAML::Node& child : node) {
      out.push_back(Convert(child, JoinIndex(path, index++), depth + 1));
    }
    return out;
  }

  json ConvertMap(const YAML::Node& node, const std::string& path, int depth) {
    json out = json::object();
    for (const auto& pair : node) {
      // Copies: yaml-cpp's iterator hands out pairs of temporaries.
      const YAML::Node key_node = pair.first;
      const YAML::Node value_node = pair.second;
      if (!key_node.IsScalar()) {
        errors_->push_back({path, "mapping keys must be strings"});
        continue;
      }
      const std::string& key = key_node.Scalar();
      const std::string child_path = JoinKey(path, key);
      if (out.contains(key)) {
        errors_->push_back({child_path, "duplicate key " + Quote(key) + " in the same mapping"});
      }
      out[key] = Convert(value_node, child_path, depth + 1);
    }
    return out;
  }

  // True when `node` is one of the collections being converted above it (an alias cycle).
  bool IsAncestor(const YAML::Node& node) const {
    for (const YAML::Node& a : ancestors_) {
      if (a.is(node)) return true;
    }
    return false;
  }

  IssueList* errors_;
  std::vector<YAML::Node> ancestors_;  // the collections on the path being converted
  bool too_deep_reported_ = false;
  bool cycle_reported_ = false;
};

// "invalid YAML at line L, column C: msg" from a yaml-cpp exception (1-based position).
std::string DescribeYamlError(const YAML::Exception& e) {
  std::string out = "invalid YAML";
  if (!e.mark.is_null()) {
    out += " at line " + std::to_string(e.mark.line + 1) + ", column " +
           std::to_string(e.mark.column + 1);
  }
  return out + ": " + e.msg;
}

// "invalid YAML at line L, column C: not UTF-8 (byte 0xXX)" for the byte at `offset`; the
// column counts characters (the text before it on its line is UTF-8).
std::string DescribeNonUtf8(const std::string& text, size_t offset) {
  size_t line = 1, column = 1;
  for (size_t i = 0; i < offset; ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) {
      ++column;
    }
  }
  char byte[8];
  std::snprintf(byte, sizeof byte, "0x%02X", static_cast<unsigned char>(text[offset]));
  return "invalid YAML at line " + std::to_string(line) + ", column " + std::to_string(column) +
         ": not UTF-8 (byte " + byte + ")";
}

}  // namespace

Document ParseJsonText(const std::string& text) {
  Document doc;
  if (Prescan scan = PrescanJson(text); scan.refusal) return Unparsed(std::move(*scan.refusal));
  Result<json> root = ParseJson(text, {/*max_depth=*/0, /*duplicate_keys=*/&doc.errors});
  if (!root.ok()) return SyntaxError("invalid JSON: " + root.status().message());
  doc.root = std::move(*root);
  doc.parsed = true;
  return doc;
}

Document ParseYamlText(const std::string& text) {
  Document doc;
  // YAML is Unicode text; yaml-cpp passes other bytes through into names that then cannot
  // be printed as JSON. (JSON text is checked by its parser.)
  if (const size_t bad = FirstNonUtf8Byte(text); bad != std::string_view::npos) {
    return SyntaxError(DescribeNonUtf8(text, bad));
  }
  try {
    // yaml-cpp's own tree takes ~450 bytes a node: it is built only for a text that passed.
    Prescan scan = PrescanYaml(text);
    if (scan.refusal) return Unparsed(std::move(*scan.refusal));
    if (scan.documents == 0) return SyntaxError("config is empty (no YAML document)");
    if (scan.documents > 1) {
      return SyntaxError("expected one YAML document, found " + std::to_string(scan.documents));
    }
    YamlConverter converter(&doc.errors);
    doc.root = converter.Convert(YAML::Load(text), "$", 0);
    doc.parsed = true;
    return doc;
  } catch (const YAML::DeepRecursion& e) {
    return SyntaxError("invalid YAML: nested too deeply (more than " + std::to_string(e.depth()) +
                       " levels)");
  } catch (const YAML::Exception& e) {
    return SyntaxError(DescribeYamlError(e));
  } catch (const std::exception& e) {
    return SyntaxError(std::string("cannot parse YAML: ") + e.what());
  }
}

}  // namespace hcashare::jsonin
