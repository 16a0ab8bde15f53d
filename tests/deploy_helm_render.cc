#include "tests/deploy_helm_render.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <regex>
#include <set>
#include <sstream>

#include "tests/json_schema_lite.h"

namespace hcashare::deploy {

[[noreturn]] static void Fail(const std::string& message) { throw std::runtime_error(message); }

// ---------------------------------------------------------------------------------------
// YAML

namespace {

json PlainScalar(const std::string& s) {
  static const std::set<std::string> kNull = {"", "~", "null", "Null", "NULL"};
  static const std::set<std::string> kTrue = {"true", "True", "TRUE", "yes", "Yes", "YES",
                                              "on",   "On",   "ON",   "y",   "Y"};
  static const std::set<std::string> kFalse = {"false", "False", "FALSE", "no", "No", "NO",
                                               "off",   "Off",   "OFF",   "n",  "N"};
  static const std::regex kDecimal("[-+]?(0|[1-9][0-9]*)");
  static const std::regex kOctal("[-+]?0[0-7]+");
  static const std::regex kHex("[-+]?0x[0-9a-fA-F]+");
  static const std::regex kFloat(
      "[-+]?(([0-9]+\\.[0-9]*|\\.[0-9]+)([eE][-+]?[0-9]+)?|[0-9]+[eE][-+]?[0-9]+)");
  if (kNull.count(s)) return nullptr;
  if (kTrue.count(s)) return true;
  if (kFalse.count(s)) return false;
  try {
    if (std::regex_match(s, kDecimal)) return std::stoll(s);
    if (std::regex_match(s, kOctal)) return std::stoll(s, nullptr, 8);
    if (std::regex_match(s, kHex)) return std::stoll(s, nullptr, 16);
    if (std::regex_match(s, kFloat)) return std::stod(s);
  } catch (const std::out_of_range&) {
    Fail("number out of range: " + s);
  }
  if (s == ".inf" || s == ".Inf" || s == "+.inf") return HUGE_VAL;
  if (s == "-.inf" || s == "-.Inf") return -HUGE_VAL;
  return s;
}

}  // namespace

json YamlToJson(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Undefined:
    case YAML::NodeType::Null:
      return nullptr;
    case YAML::NodeType::Scalar: {
      const std::string& tag = node.Tag();
      if (tag == "!" || tag == "tag:yaml.org,2002:str") return node.Scalar();
      if (tag == "?" || tag.empty()) return PlainScalar(node.Scalar());
      Fail("unsupported YAML tag " + tag + " on \"" + node.Scalar() + "\"");
    }
    case YAML::NodeType::Sequence: {
      json out = json::array();
      for (const auto& item : node) out.push_back(YamlToJson(item));
      return out;
    }
    case YAML::NodeType::Map: {
      json out = json::object();
      for (const auto& kv : node) {
        if (!kv.first.IsScalar()) Fail("a YAML map key that is not a scalar");
        const std::string key = kv.first.Scalar();
        if (out.contains(key)) Fail("duplicate YAML key \"" + key + "\"");
        out[key] = YamlToJson(kv.second);
      }
      return out;
    }
  }
  Fail("unknown YAML node type");
}

std::vector<json> ParseYamlDocuments(const std::string& text) {
  std::vector<json> out;
  for (const auto& doc : YAML::LoadAll(text)) {
    json j = YamlToJson(doc);
    if (!j.is_null()) out.push_back(std::move(j));
  }
  return out;
}

json MergeValues(json base, const json& overrides) {
  if (!base.is_object() || !overrides.is_object()) return overrides;
  for (const auto& [key, value] : overrides.items()) {
    if (value.is_null()) {
      base.erase(key);
    } else if (base.contains(key) && base[key].is_object() && value.is_object()) {
      base[key] = MergeValues(base[key], value);
    } else {
      base[key] = value;
    }
  }
  return base;
}

// ---------------------------------------------------------------------------------------
// Template syntax

namespace {

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

std::string TrimLeft(const std::string& s) {
  size_t i = 0;
  while (i < s.size() && IsSpace(s[i])) ++i;
  return s.substr(i);
}

std::string TrimRight(const std::string& s) {
  size_t n = s.size();
  while (n > 0 && IsSpace(s[n - 1])) --n;
  return s.substr(0, n);
}

std::string Trim(const std::string& s) { return TrimLeft(TrimRight(s)); }

// A run of text, or the inside of an action, with the line it starts on.
struct Piece {
  bool action = false;
  std::string text;
  int line = 0;
};

int CountLines(const std::string& s, size_t from, size_t to) {
  return static_cast<int>(std::count(s.begin() + from, s.begin() + to, '\n'));
}

std::vector<Piece> Lex(const std::string& file, const std::string& src) {
  std::vector<Piece> out;
  size_t i = 0;
  int line = 1;
  bool trim_next = false;
  while (i <= src.size()) {
    const size_t open = src.find("{{", i);
    std::string text = src.substr(i, open == std::string::npos ? std::string::npos : open - i);
    if (trim_next) text = TrimLeft(text);
    if (open == std::string::npos) {
      if (!text.empty()) out.push_back({false, text, line});
      break;
    }
    size_t p = open + 2;
    const bool trim_left = p + 1 < src.size() && src[p] == '-' && IsSpace(src[p + 1]);
    if (trim_left) {
      text = TrimRight(text);
      ++p;
    }
    if (!text.empty()) out.push_back({false, text, line});
    line += CountLines(src, i, open);
    const int action_line = line;

    // A comment: "/*" ... "*/", then optional " -", then "}}".
    size_t q = p;
    while (q < src.size() && IsSpace(src[q])) ++q;
    size_t close = std::string::npos;
    bool trim_right = false;
    if (src.compare(q, 2, "/*") == 0) {
      const size_t end = src.find("*/", q + 2);
      if (end == std::string::npos) Fail(file + ":" + std::to_string(line) + ": open comment");
      size_t r = end + 2;
      while (r < src.size() && IsSpace(src[r])) ++r;
      if (src.compare(r, 1, "-") == 0) {
        trim_right = true;
        ++r;
      }
      if (src.compare(r, 2, "}}") != 0) {
        Fail(file + ":" + std::to_string(line) + ": text after a comment in an action");
      }
      close = r;
    } else {
      char quote = 0;
      for (q = p; q + 1 < src.size(); ++q) {
        const char c = src[q];
        if (quote != 0) {
          if (c == '\\' && quote != '`') {
            ++q;
          } else if (c == quote) {
            quote = 0;
          }
          continue;
        }
        if (c == '"' || c == '`' || c == '\'') {
          quote = c;
        } else if (c == '}' && src[q + 1] == '}') {
          break;
        }
      }
      if (q + 1 >= src.size()) Fail(file + ":" + std::to_string(line) + ": unclosed action");
      std::string inside = src.substr(p, q - p);
      if (inside.size() >= 2 && inside.back() == '-' && IsSpace(inside[inside.size() - 2])) {
        trim_right = true;
        inside.pop_back();
      }
      out.push_back({true, inside, action_line});
      close = q;
    }
    line += CountLines(src, open, close + 2);
    i = close + 2;
    trim_next = trim_right;
  }
  return out;
}

// Tokens of an action.
enum class Tok {
  kField,
  kVar,
  kIdent,
  kString,
  kNumber,
  kPipe,
  kLParen,
  kRParen,
  kDeclare,
  kAssign,
  kComma
};

struct Token {
  Tok kind;
  std::string text;       // identifier, variable name, field chain, string value, number
  bool adjacent = false;  // directly after the previous token (".x" after ")")
};

std::vector<std::string> SplitFields(const std::string& chain) {
  // ".A.B" -> {"A", "B"}; "." -> {}.
  std::vector<std::string> out;
  size_t i = 0;
  while (i < chain.size()) {
    const size_t dot = chain.find('.', i + 1);
    const std::string f =
        chain.substr(i + 1, dot == std::string::npos ? std::string::npos : dot - i - 1);
    if (!f.empty()) out.push_back(f);
    if (dot == std::string::npos) break;
    i = dot;
  }
  return out;
}

bool IsIdentChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

std::vector<Token> Tokenize(const std::string& s, const std::string& where) {
  std::vector<Token> out;
  size_t i = 0;
  bool prev_end = false;  // the previous token ended right before i
  while (i < s.size()) {
    const char c = s[i];
    if (IsSpace(c)) {
      ++i;
      prev_end = false;
      continue;
    }
    Token t{Tok::kIdent, "", prev_end};
    const size_t start = i;
    if (c == '|') {
      t.kind = Tok::kPipe;
      ++i;
    } else if (c == '(') {
      t.kind = Tok::kLParen;
      ++i;
    } else if (c == ')') {
      t.kind = Tok::kRParen;
      ++i;
    } else if (c == ',') {
      t.kind = Tok::kComma;
      ++i;
    } else if (c == ':' && i + 1 < s.size() && s[i + 1] == '=') {
      t.kind = Tok::kDeclare;
      i += 2;
    } else if (c == '=') {
      t.kind = Tok::kAssign;
      ++i;
    } else if (c == '"') {
      t.kind = Tok::kString;
      ++i;
      while (i < s.size() && s[i] != '"') {
        if (s[i] == '\\' && i + 1 < s.size()) {
          const char e = s[++i];
          switch (e) {
            case 'n':
              t.text += '\n';
              break;
            case 't':
              t.text += '\t';
              break;
            case 'r':
              t.text += '\r';
              break;
            case '\\':
              t.text += '\\';
              break;
            case '"':
              t.text += '"';
              break;
            default:
              Fail(where + ": unsupported escape \\" + std::string(1, e));
          }
        } else {
          t.text += s[i];
        }
        ++i;
      }
      if (i >= s.size()) Fail(where + ": unterminated string");
      ++i;
    } else if (c == '`') {
      t.kind = Tok::kString;
      const size_t end = s.find('`', i + 1);
      if (end == std::string::npos) Fail(where + ": unterminated raw string");
      t.text = s.substr(i + 1, end - i - 1);
      i = end + 1;
    } else if (c == '.' || c == '$') {
      t.kind = c == '.' ? Tok::kField : Tok::kVar;
      ++i;
      while (i < s.size() && (IsIdentChar(s[i]) || s[i] == '.')) ++i;
      t.text = s.substr(start, i - start);
    } else if (std::isdigit(static_cast<unsigned char>(c)) || c == '-' || c == '+') {
      t.kind = Tok::kNumber;
      ++i;
      while (i < s.size() && (std::isalnum(static_cast<unsigned char>(s[i])) || s[i] == '.')) {
        ++i;
      }
      t.text = s.substr(start, i - start);
    } else if (IsIdentChar(c)) {
      t.kind = Tok::kIdent;
      while (i < s.size() && IsIdentChar(s[i])) ++i;
      t.text = s.substr(start, i - start);
    } else {
      Fail(where + ": unexpected character '" + std::string(1, c) + "'");
    }
    out.push_back(std::move(t));
    prev_end = true;
  }
  return out;
}

}  // namespace

struct Pipeline;

// One argument of a command.
struct Operand {
  enum Kind { kField, kVar, kLiteral, kFunc, kSub } kind = kLiteral;
  std::string name;                 // variable ("$", "$x") or function name
  std::vector<std::string> fields;  // field chain applied to dot, the variable or kSub
  json literal;
  std::shared_ptr<Pipeline> sub;
};

struct Command {
  std::vector<Operand> args;
};

struct Pipeline {
  std::vector<std::string> vars;  // "$x" of "$x :=" (two for range "$i, $v :=")
  bool assign = false;            // "=" rather than ":="
  std::vector<Command> commands;
};

struct TemplateSet::Node {
  enum Kind { kText, kAction, kIf, kRange, kWith, kTemplate } kind = kText;
  std::string text;  // text, or the template name of kTemplate
  Pipeline pipe;
  std::vector<Node> body, else_body;
  std::string where;  // file:line
};

namespace {

using Node = TemplateSet::Node;

class PipelineParser {
 public:
  PipelineParser(std::vector<Token> tokens, std::string where)
      : toks_(std::move(tokens)), where_(std::move(where)) {}

  Pipeline ParseAll(bool allow_decl) {
    Pipeline p = Parse(allow_decl);
    if (pos_ != toks_.size()) Fail(where_ + ": unexpected token \"" + toks_[pos_].text + "\"");
    return p;
  }

 private:
  bool At(Tok k) const { return pos_ < toks_.size() && toks_[pos_].kind == k; }

  Pipeline Parse(bool allow_decl) {
    Pipeline p;
    if (allow_decl) {
      // "$x :=", "$x =", "$i, $v :="
      size_t save = pos_;
      std::vector<std::string> vars;
      while (At(Tok::kVar) && toks_[pos_].text.find('.') == std::string::npos) {
        vars.push_back(toks_[pos_++].text);
        if (!At(Tok::kComma)) break;
        ++pos_;
      }
      if (!vars.empty() && (At(Tok::kDeclare) || At(Tok::kAssign))) {
        p.assign = At(Tok::kAssign);
        ++pos_;
        p.vars = vars;
      } else {
        pos_ = save;
      }
    }
    for (;;) {
      Command cmd;
      while (pos_ < toks_.size() && !At(Tok::kPipe) && !At(Tok::kRParen)) {
        cmd.args.push_back(ParseOperand());
      }
      if (cmd.args.empty()) Fail(where_ + ": empty command");
      p.commands.push_back(std::move(cmd));
      if (!At(Tok::kPipe)) break;
      ++pos_;
    }
    return p;
  }

  Operand ParseOperand() {
    const Token t = toks_[pos_++];
    Operand o;
    switch (t.kind) {
      case Tok::kField:
        o.kind = Operand::kField;
        o.fields = SplitFields(t.text);
        return o;
      case Tok::kVar: {
        o.kind = Operand::kVar;
        const size_t dot = t.text.find('.');
        o.name = t.text.substr(0, dot);
        if (dot != std::string::npos) o.fields = SplitFields(t.text.substr(dot));
        return o;
      }
      case Tok::kString:
        o.literal = t.text;
        return o;
      case Tok::kNumber:
        try {
          if (t.text.find_first_of(".eE") != std::string::npos) {
            o.literal = std::stod(t.text);
          } else {
            o.literal = std::stoll(t.text, nullptr, 0);
          }
        } catch (const std::exception&) {
          Fail(where_ + ": bad number " + t.text);
        }
        return o;
      case Tok::kIdent:
        if (t.text == "true" || t.text == "false") {
          o.literal = t.text == "true";
        } else if (t.text == "nil") {
          o.literal = nullptr;
        } else {
          o.kind = Operand::kFunc;
          o.name = t.text;
        }
        return o;
      case Tok::kLParen: {
        o.kind = Operand::kSub;
        o.sub = std::make_shared<Pipeline>(Parse(false));
        if (!At(Tok::kRParen)) Fail(where_ + ": missing )");
        ++pos_;
        if (At(Tok::kField) && toks_[pos_].adjacent) o.fields = SplitFields(toks_[pos_++].text);
        return o;
      }
      default:
        Fail(where_ + ": unexpected \"" + t.text + "\"");
    }
  }

  std::vector<Token> toks_;
  std::string where_;
  size_t pos_ = 0;
};

// The first word of an action and the rest.
std::pair<std::string, std::string> Keyword(const std::string& action) {
  const std::string a = Trim(action);
  size_t n = 0;
  while (n < a.size() && IsIdentChar(a[n])) ++n;
  return {a.substr(0, n), Trim(a.substr(n))};
}

class TreeParser {
 public:
  TreeParser(std::string file, std::vector<Piece> pieces,
             std::map<std::string, std::vector<Node>>& defines)
      : file_(std::move(file)), pieces_(std::move(pieces)), defines_(defines) {}

  std::vector<Node> ParseFile() {
    std::string ending;
    std::vector<Node> nodes = ParseList(&ending);
    if (!ending.empty()) Fail(Where() + ": unexpected {{" + ending + "}}");
    return nodes;
  }

 private:
  std::string Where() const {
    const int line = pos_ > 0 ? pieces_[pos_ - 1].line : 1;
    return file_ + ":" + std::to_string(line);
  }

  Pipeline ParsePipe(const std::string& text, bool allow_decl) {
    return PipelineParser(Tokenize(text, Where()), Where()).ParseAll(allow_decl);
  }

  // Parses nodes until {{end}}, {{else ...}} or the end of the file; `ending` gets the
  // terminating action ("end", "else", "else if X", or "" at the end of the file).
  std::vector<Node> ParseList(std::string* ending) {
    std::vector<Node> nodes;
    while (pos_ < pieces_.size()) {
      const Piece& piece = pieces_[pos_++];
      if (!piece.action) {
        Node n;
        n.kind = Node::kText;
        n.text = piece.text;
        nodes.push_back(std::move(n));
        continue;
      }
      auto [word, rest] = Keyword(piece.text);
      if (word == "end" || word == "else") {
        *ending = Trim(piece.text);
        return nodes;
      }
      Node n;
      n.where = Where();
      if (word == "if") {
        nodes.push_back(ParseIf(rest));
      } else if (word == "range" || word == "with") {
        n.kind = word == "range" ? Node::kRange : Node::kWith;
        n.pipe = ParsePipe(rest, word == "range");
        std::string end;
        n.body = ParseList(&end);
        if (end == "else") {
          n.else_body = ParseList(&end);
        }
        if (end != "end") Fail(n.where + ": {{" + word + "}} without {{end}}");
        nodes.push_back(std::move(n));
      } else if (word == "define") {
        const auto toks = Tokenize(rest, n.where);
        if (toks.size() != 1 || toks[0].kind != Tok::kString) {
          Fail(n.where + ": define needs a name");
        }
        std::string end;
        std::vector<Node> body = ParseList(&end);
        if (end != "end") Fail(n.where + ": {{define}} without {{end}}");
        defines_[toks[0].text] = std::move(body);
      } else if (word == "template") {
        auto toks = Tokenize(rest, n.where);
        if (toks.empty() || toks[0].kind != Tok::kString) Fail(n.where + ": template name");
        n.kind = Node::kTemplate;
        n.text = toks[0].text;
        toks.erase(toks.begin());
        if (!toks.empty()) n.pipe = PipelineParser(toks, n.where).ParseAll(false);
        nodes.push_back(std::move(n));
      } else if (word == "block" || word == "break" || word == "continue") {
        Fail(n.where + ": {{" + word + "}} is not supported by this renderer");
      } else {
        n.kind = Node::kAction;
        n.pipe = ParsePipe(piece.text, true);
        nodes.push_back(std::move(n));
      }
    }
    *ending = "";
    return nodes;
  }

  // After "{{if X}}": the body, then "else if" chains, "else" and the shared "end".
  Node ParseIf(const std::string& condition) {
    Node n;
    n.kind = Node::kIf;
    n.where = Where();
    n.pipe = ParsePipe(condition, false);
    std::string end;
    n.body = ParseList(&end);
    if (end == "else") {
      n.else_body = ParseList(&end);
      if (end != "end") Fail(n.where + ": {{if}} without {{end}}");
    } else if (end.rfind("else", 0) == 0) {
      auto [word, rest] = Keyword(end.substr(4));
      if (word != "if") Fail(n.where + ": unsupported {{" + end + "}}");
      n.else_body.push_back(ParseIf(rest));
    } else if (end != "end") {
      Fail(n.where + ": {{if}} without {{end}}");
    }
    return n;
  }

  std::string file_;
  std::vector<Piece> pieces_;
  std::map<std::string, std::vector<Node>>& defines_;
  size_t pos_ = 0;
};

// ---------------------------------------------------------------------------------------
// Values and functions

bool Truth(const json& v) {
  switch (v.type()) {
    case json::value_t::null:
      return false;
    case json::value_t::boolean:
      return v.get<bool>();
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
    case json::value_t::number_float:
      return v.get<double>() != 0;
    case json::value_t::string:
      return !v.get_ref<const std::string&>().empty();
    case json::value_t::array:
    case json::value_t::object:
      return !v.empty();
    default:
      return false;
  }
}

// A number as Go's fmt prints Helm's float64 values; only integers below 1e6 (larger
// ones print as "1e+06").
std::string PrintNumber(const json& v, const std::string& where) {
  const double d = v.get<double>();
  if (std::floor(d) != d || std::fabs(d) >= 1e6) {
    Fail(where + ": the number " + v.dump() + " would print differently in Helm; quote it");
  }
  return std::to_string(static_cast<long long>(d));
}

// A value as an action prints it.
std::string Print(const json& v, const std::string& where) {
  switch (v.type()) {
    case json::value_t::string:
      return v.get<std::string>();
    case json::value_t::boolean:
      return v.get<bool>() ? "true" : "false";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
    case json::value_t::number_float:
      return PrintNumber(v, where);
    case json::value_t::null:
      Fail(where + ": a missing value is printed");
    default:
      Fail(where + ": a " + std::string(v.type_name()) + " is printed; use toYaml");
  }
}

// Go's strconv.Quote for the strings a chart holds.
std::string GoQuote(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\r':
        out += "\\r";
        break;
      default:
        if (c < 0x20 || c == 0x7f) {
          char buf[8];
          std::snprintf(buf, sizeof(buf), "\\x%02x", c);
          out += buf;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out + "\"";
}

// Helm numbers are float64: integral ones marshal as integers.
json GoJsonNumbers(const json& v) {
  if (v.is_number_float() && std::floor(v.get<double>()) == v.get<double>() &&
      std::fabs(v.get<double>()) < 1e15) {
    return static_cast<long long>(v.get<double>());
  }
  if (v.is_array() || v.is_object()) {
    json out = v;
    for (auto& item : out) item = GoJsonNumbers(item);
    return out;
  }
  return v;
}

// Go's encoding/json escapes <, > and & in strings.
std::string GoJsonEscape(std::string s) {
  std::string out;
  for (char c : s) {
    if (c == '<') {
      out += "\\u003c";
    } else if (c == '>') {
      out += "\\u003e";
    } else if (c == '&') {
      out += "\\u0026";
    } else {
      out += c;
    }
  }
  return out;
}

bool PlainSafe(const std::string& s) {
  if (s.empty() || IsSpace(s.front()) || IsSpace(s.back())) return false;
  if (std::string("-?:,[]{}#&*!|>'\"%@`").find(s.front()) != std::string::npos) return false;
  if (s.find(": ") != std::string::npos || s.find(" #") != std::string::npos) return false;
  if (s.back() == ':') return false;
  for (unsigned char c : s) {
    if (c < 0x20 || c == 0x7f) return false;
  }
  const json resolved = PlainScalar(s);
  return resolved.is_string();
}

std::string YamlScalar(const json& v) {
  if (v.is_string()) {
    const std::string& s = v.get_ref<const std::string&>();
    return PlainSafe(s) ? s : v.dump();
  }
  return GoJsonNumbers(v).dump();
}

// Block-style YAML at `indent`, every line ending in "\n".
void EmitYaml(const json& v, int indent, std::string& out) {
  const std::string pad(indent, ' ');
  if (v.is_object() && !v.empty()) {
    for (const auto& [key, value] : v.items()) {
      out += pad + YamlScalar(key) + ":";
      if (value.is_object() && !value.empty()) {
        out += "\n";
        EmitYaml(value, indent + 2, out);
      } else if (value.is_array() && !value.empty()) {
        out += "\n";
        EmitYaml(value, indent, out);
      } else {
        out += " ";
        EmitYaml(value, 0, out);
      }
    }
  } else if (v.is_array() && !v.empty()) {
    for (const auto& item : v) {
      std::string child;
      if ((item.is_object() || item.is_array()) && !item.empty()) {
        EmitYaml(item, indent + 2, child);
        child.replace(0, indent + 2, pad + "- ");
      } else {
        child = pad + "- ";
        EmitYaml(item, 0, child);
      }
      out += child;
    }
  } else if (v.is_object()) {
    out += pad + "{}\n";
  } else if (v.is_array()) {
    out += pad + "[]\n";
  } else {
    out += pad + YamlScalar(v) + "\n";
  }
}

std::string ToYaml(const json& v) {
  std::string out;
  EmitYaml(v, 0, out);
  if (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

std::string Indent(long long n, const std::string& s) {
  const std::string pad(static_cast<size_t>(std::max(0LL, n)), ' ');
  std::string out = pad;
  for (char c : s) {
    out += c;
    if (c == '\n') out += pad;
  }
  return out;
}

long long IntArg(const json& v, const std::string& where) {
  if (!v.is_number() || std::fabs(v.get<double>()) > 1e15) {
    Fail(where + ": expected a (small) number, got " + v.dump());
  }
  return static_cast<long long>(v.get<double>());
}

std::string StrArg(const json& v, const std::string& where) {
  if (!v.is_string()) Fail(where + ": expected a string, got " + v.dump());
  return v.get<std::string>();
}

// Go's printf with %s, %d, %v, %q and %%.
std::string Printf(const std::vector<json>& args, const std::string& where) {
  const std::string format = StrArg(args.at(0), where);
  std::string out;
  size_t next = 1;
  for (size_t i = 0; i < format.size(); ++i) {
    if (format[i] != '%') {
      out += format[i];
      continue;
    }
    if (++i >= format.size()) Fail(where + ": printf format ends in %");
    const char verb = format[i];
    if (verb == '%') {
      out += '%';
      continue;
    }
    if (next >= args.size()) Fail(where + ": printf: missing argument");
    const json& a = args[next++];
    switch (verb) {
      case 's':
      case 'v':
        out += Print(a, where);
        break;
      case 'd':
        out += std::to_string(IntArg(a, where));
        break;
      case 'q':
        out += GoQuote(Print(a, where));
        break;
      default:
        Fail(where + ": printf verb %" + std::string(1, verb) + " is not supported");
    }
  }
  if (next != args.size()) Fail(where + ": printf: too many arguments");
  return out;
}

}  // namespace

// ---------------------------------------------------------------------------------------
// Execution

struct TemplateSetImpl {
  std::map<std::string, std::vector<Node>> templates;
};

namespace {

using Vars = std::vector<std::pair<std::string, json>>;

class Executor {
 public:
  explicit Executor(const std::map<std::string, std::vector<Node>>& templates)
      : templates_(templates) {}

  std::string Run(const std::string& name, const json& dot) {
    auto it = templates_.find(name);
    if (it == templates_.end()) Fail("no template \"" + name + "\"");
    if (++depth_ > 100) Fail("template recursion too deep at \"" + name + "\"");
    Vars vars = {{"$", dot}};
    std::string out;
    RunList(it->second, dot, vars, out);
    --depth_;
    return out;
  }

 private:
  void RunList(const std::vector<Node>& nodes, const json& dot, Vars& vars, std::string& out) {
    for (const Node& n : nodes) RunNode(n, dot, vars, out);
  }

  void RunScoped(const std::vector<Node>& nodes, const json& dot, Vars& vars, std::string& out) {
    const size_t mark = vars.size();
    RunList(nodes, dot, vars, out);
    vars.resize(mark);
  }

  void RunNode(const Node& n, const json& dot, Vars& vars, std::string& out) {
    switch (n.kind) {
      case Node::kText:
        out += n.text;
        return;
      case Node::kAction: {
        json v = EvalPipe(n.pipe, dot, vars, n.where);
        if (n.pipe.vars.empty()) out += Print(v, n.where);
        return;
      }
      case Node::kIf:
        RunScoped(Truth(EvalPipe(n.pipe, dot, vars, n.where)) ? n.body : n.else_body, dot, vars,
                  out);
        return;
      case Node::kWith: {
        const json v = EvalPipe(n.pipe, dot, vars, n.where);
        if (Truth(v)) {
          RunScoped(n.body, v, vars, out);
        } else {
          RunScoped(n.else_body, dot, vars, out);
        }
        return;
      }
      case Node::kRange: {
        Pipeline p = n.pipe;
        const std::vector<std::string> names = p.vars;
        p.vars.clear();
        const json v = EvalPipe(p, dot, vars, n.where);
        if (!Truth(v)) {
          RunScoped(n.else_body, dot, vars, out);
          return;
        }
        if (!v.is_array() && !v.is_object()) Fail(n.where + ": range over " + v.dump());
        size_t index = 0;
        for (auto it = v.begin(); it != v.end(); ++it, ++index) {
          const size_t mark = vars.size();
          const json key = v.is_array() ? json(index) : json(it.key());
          if (names.size() == 1) vars.push_back({names[0], *it});
          if (names.size() == 2) {
            vars.push_back({names[0], key});
            vars.push_back({names[1], *it});
          }
          RunList(n.body, *it, vars, out);
          vars.resize(mark);
        }
        return;
      }
      case Node::kTemplate: {
        const json arg = n.pipe.commands.empty() ? json() : EvalPipe(n.pipe, dot, vars, n.where);
        out += Run(n.text, arg);
        return;
      }
    }
  }

  json EvalPipe(const Pipeline& p, const json& dot, Vars& vars, const std::string& where) {
    json v;
    bool have = false;
    for (const Command& c : p.commands) {
      v = EvalCommand(c, dot, vars, have ? &v : nullptr, where);
      have = true;
    }
    if (!p.vars.empty()) {
      if (p.vars.size() != 1) Fail(where + ": only range declares two variables");
      if (p.assign) {
        auto it = std::find_if(vars.rbegin(), vars.rend(),
                               [&](const auto& e) { return e.first == p.vars[0]; });
        if (it == vars.rend()) Fail(where + ": undefined variable " + p.vars[0]);
        it->second = v;
      } else {
        vars.push_back({p.vars[0], v});
      }
    }
    return v;
  }

  json Field(json v, const std::vector<std::string>& fields, const std::string& where) {
    for (const auto& f : fields) {
      if (v.is_object()) {
        auto it = v.find(f);
        v = it == v.end() ? json() : *it;
      } else if (v.is_null()) {
        Fail(where + ": nil pointer evaluating ." + f);
      } else {
        Fail(where + ": can't evaluate field " + f + " in a " + v.type_name());
      }
    }
    return v;
  }

  json EvalOperand(const Operand& o, const json& dot, Vars& vars, const std::string& where) {
    switch (o.kind) {
      case Operand::kField:
        return Field(dot, o.fields, where);
      case Operand::kVar: {
        auto it = std::find_if(vars.rbegin(), vars.rend(),
                               [&](const auto& e) { return e.first == o.name; });
        if (it == vars.rend()) Fail(where + ": undefined variable " + o.name);
        return Field(it->second, o.fields, where);
      }
      case Operand::kLiteral:
        return o.literal;
      case Operand::kSub:
        return Field(EvalPipe(*o.sub, dot, vars, where), o.fields, where);
      case Operand::kFunc:
        return Call(o.name, {}, where);
    }
    return json();
  }

  json EvalCommand(const Command& c, const json& dot, Vars& vars, const json* piped,
                   const std::string& where) {
    const Operand& head = c.args[0];
    if (head.kind != Operand::kFunc) {
      if (c.args.size() > 1 || piped != nullptr) {
        Fail(where + ": a value cannot take arguments");
      }
      return EvalOperand(head, dot, vars, where);
    }
    std::vector<json> args;
    for (size_t i = 1; i < c.args.size(); ++i) {
      args.push_back(EvalOperand(c.args[i], dot, vars, where));
    }
    if (piped != nullptr) args.push_back(*piped);
    return Call(head.name, args, where);
  }

  json Call(const std::string& fn, const std::vector<json>& a, const std::string& where) {
    const std::string at = where + ": " + fn;
    auto need = [&](size_t n) {
      if (a.size() != n) Fail(at + " takes " + std::to_string(n) + " arguments");
    };
    if (fn == "include") {
      need(2);
      return Run(StrArg(a[0], at), a[1]);
    }
    if (fn == "default") {
      if (a.empty() || a.size() > 2) Fail(at + " takes 1 or 2 arguments");
      return a.size() == 2 && Truth(a[1]) ? a[1] : a[0];
    }
    if (fn == "required") {
      need(2);
      if (!Truth(a[1])) Fail(at + ": " + StrArg(a[0], at));
      return a[1];
    }
    if (fn == "empty") {
      need(1);
      return !Truth(a[0]);
    }
    if (fn == "not") {
      need(1);
      return !Truth(a[0]);
    }
    if (fn == "and" || fn == "or") {
      if (a.empty()) Fail(at + " needs arguments");
      for (const json& v : a) {
        if (Truth(v) != (fn == "and")) return v;
      }
      return a.back();
    }
    if (fn == "eq" || fn == "ne") {
      need(2);
      if (a[0].type() != a[1].type() && !(a[0].is_number() && a[1].is_number())) {
        Fail(at + ": incompatible types for comparison");
      }
      return (a[0] == a[1]) == (fn == "eq");
    }
    if (fn == "quote" || fn == "squote") {
      std::string out;
      for (const json& v : a) {
        if (v.is_null()) continue;
        if (!out.empty()) out += " ";
        out += fn == "quote" ? GoQuote(Print(v, at)) : "'" + Print(v, at) + "'";
      }
      return out;
    }
    if (fn == "printf") {
      if (a.empty()) Fail(at + " needs a format");
      return Printf(a, at);
    }
    if (fn == "trunc") {
      need(2);
      const long long n = IntArg(a[0], at);
      const std::string s = StrArg(a[1], at);
      if (n < 0) return s.substr(s.size() > static_cast<size_t>(-n) ? s.size() + n : 0);
      return s.substr(0, static_cast<size_t>(n));
    }
    if (fn == "trimSuffix") {
      need(2);
      const std::string suffix = StrArg(a[0], at);
      std::string s = StrArg(a[1], at);
      if (s.size() >= suffix.size() &&
          s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0) {
        s.resize(s.size() - suffix.size());
      }
      return s;
    }
    if (fn == "replace") {
      need(3);
      const std::string from = StrArg(a[0], at), to = StrArg(a[1], at);
      std::string s = StrArg(a[2], at);
      if (from.empty()) Fail(at + ": empty pattern");
      for (size_t p = s.find(from); p != std::string::npos; p = s.find(from, p + to.size())) {
        s.replace(p, from.size(), to);
      }
      return s;
    }
    if (fn == "toYaml") {
      need(1);
      return ToYaml(a[0]);
    }
    if (fn == "toJson") {
      need(1);
      return GoJsonEscape(GoJsonNumbers(a[0]).dump());
    }
    if (fn == "toPrettyJson") {
      need(1);
      return GoJsonEscape(GoJsonNumbers(a[0]).dump(2));
    }
    if (fn == "indent" || fn == "nindent") {
      need(2);
      const std::string s = Indent(IntArg(a[0], at), StrArg(a[1], at));
      return fn == "nindent" ? "\n" + s : s;
    }
    if (fn == "list") return json(a);
    if (fn == "toString") {
      need(1);
      return Print(a[0], at);
    }
    Fail(at + ": function not supported by this renderer");
  }

  const std::map<std::string, std::vector<Node>>& templates_;
  int depth_ = 0;
};

std::string ReadFile(const std::filesystem::path& p) {
  std::ifstream in(p);
  if (!in) Fail("cannot read " + p.string());
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

TemplateSet::TemplateSet() : impl_(std::make_shared<TemplateSetImpl>()) {}

void TemplateSet::Add(const std::string& name, const std::string& text) {
  TreeParser parser(name, Lex(name, text), impl_->templates);
  impl_->templates[name] = parser.ParseFile();
}

std::string TemplateSet::Execute(const std::string& name, const json& dot) const {
  return Executor(impl_->templates).Run(name, dot);
}

std::map<std::string, std::string> RenderChart(const std::string& chart_dir,
                                               const RenderOptions& options) {
  namespace fs = std::filesystem;
  const fs::path dir(chart_dir);
  const std::vector<json> chart_docs = ParseYamlDocuments(ReadFile(dir / "Chart.yaml"));
  const std::vector<json> value_docs = ParseYamlDocuments(ReadFile(dir / "values.yaml"));
  if (chart_docs.size() != 1 || value_docs.size() != 1) {
    Fail(chart_dir + ": Chart.yaml and values.yaml must hold one document each");
  }
  const json& chart = chart_docs[0];
  json chart_object = json::object();
  for (const auto& [key, field] : std::map<std::string, std::string>{{"name", "Name"},
                                                                     {"version", "Version"},
                                                                     {"appVersion", "AppVersion"},
                                                                     {"description", "Description"},
                                                                     {"type", "Type"}}) {
    if (!chart.contains(key)) continue;
    if (!chart[key].is_string()) Fail("Chart.yaml: " + key + " must be a string");
    chart_object[field] = chart[key];
  }
  const json values = MergeValues(value_docs[0], options.value_overrides);
  if (fs::exists(dir / "values.schema.json")) {
    const json schema = json::parse(ReadFile(dir / "values.schema.json"));
    const std::vector<std::string> errors = ValidateJsonSchema(schema, values);
    if (!errors.empty()) {
      std::string message =
          "values don't meet the specifications of " + chart_dir + "/values.schema.json:";
      for (const auto& e : errors) message += "\n- " + e;
      Fail(message);
    }
  }
  const json root = {
      {"Values", values},
      {"Release",
       {{"Name", options.release_name},
        {"Namespace", options.release_namespace},
        {"Service", "Helm"},
        {"IsInstall", true},
        {"IsUpgrade", false},
        {"Revision", 1}}},
      {"Chart", chart_object},
  };

  TemplateSet set;
  std::vector<std::string> outputs;
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir / "templates")) files.push_back(e.path());
  std::sort(files.begin(), files.end());
  for (const auto& f : files) {
    const std::string name = f.filename().string();
    set.Add(name, ReadFile(f));
    if (name[0] != '_' && (name != "NOTES.txt" || options.notes)) outputs.push_back(name);
  }
  std::map<std::string, std::string> rendered;
  for (const auto& name : outputs) {
    json dot = root;
    dot["Template"] = {{"Name", "templates/" + name}, {"BasePath", "templates"}};
    rendered[name] = set.Execute(name, dot);
  }
  return rendered;
}

}  // namespace hcashare::deploy
