#include "json/prescan.h"

#include <sstream>
#include <utility>
#include <vector>

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>
#include <nlohmann/json.hpp>

#include "json/fields.h"

namespace hcashare::jsonin {
namespace {

using nlohmann::json;

// Counts the nodes of a document as the parser meets them, keeps the path of the open
// collections, and records the first limit passed.
class ShapeCounter {
 public:
  // A node at the current position: a key when the innermost collection is a mapping whose
  // next node is a key (`scalar` is then its text; nullptr for a non-scalar key), else a
  // value. Counts `weight` values (an expanded YAML alias: the anchored node's). False once
  // the count passes kMaxDocumentValues.
  bool Node(size_t weight, const std::string* scalar) {
    if (!open_.empty()) {
      Frame& top = open_.back();
      if (!top.mapping) {
        ++top.elements;
      } else {
        if (top.key_next) top.key = scalar != nullptr ? *scalar : "?";
        top.key_next = !top.key_next;
      }
    }
    count_ += weight;
    if (count_ <= kMaxDocumentValues) return true;
    return Refuse("document has more than " + std::to_string(kMaxDocumentValues) +
                  " values and keys (after expanding aliases)");
  }

  // The node just counted is a collection, which opens. False when it is nested more than
  // kMaxDocumentDepth deep.
  bool Open(bool mapping) {
    if (open_.size() >= static_cast<size_t>(kMaxDocumentDepth)) {
      return Refuse("nested more than " + std::to_string(kMaxDocumentDepth) + " levels deep");
    }
    open_.push_back({mapping, 0, true, {}});
    return true;
  }

  // The innermost collection closes.
  void Close() { open_.pop_back(); }

  // Values counted so far.
  size_t count() const { return count_; }
  std::optional<Issue> TakeRefusal() { return std::move(refusal_); }

 private:
  struct Frame {
    bool mapping;
    size_t elements;  // sequences: how many began
    bool key_next;    // mappings: the next node is a key
    std::string key;  // mappings: the last key
  };

  bool Refuse(std::string message) {
    std::string path = "$";
    for (const Frame& f : open_) {
      path = f.mapping ? JoinKey(path, f.key) : JoinIndex(path, f.elements - 1);
    }
    refusal_ = Issue{std::move(path), std::move(message)};
    return false;
  }

  std::vector<Frame> open_;
  size_t count_ = 0;
  std::optional<Issue> refusal_;
};

// nlohmann's SAX events into a ShapeCounter; returning false stops the parse.
class JsonScan final : public nlohmann::json_sax<json> {
 public:
  bool null() override { return shape.Node(1, nullptr); }
  bool boolean(bool) override { return shape.Node(1, nullptr); }
  bool number_integer(number_integer_t) override { return shape.Node(1, nullptr); }
  bool number_unsigned(number_unsigned_t) override { return shape.Node(1, nullptr); }
  bool number_float(number_float_t, const string_t&) override { return shape.Node(1, nullptr); }
  bool string(string_t&) override { return shape.Node(1, nullptr); }
  bool binary(binary_t&) override { return shape.Node(1, nullptr); }
  bool key(string_t& k) override { return shape.Node(1, &k); }
  bool start_object(std::size_t) override { return shape.Node(1, nullptr) && shape.Open(true); }
  bool start_array(std::size_t) override { return shape.Node(1, nullptr) && shape.Open(false); }
  bool end_object() override { return Close(); }
  bool end_array() override { return Close(); }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override {
    return false;
  }

  ShapeCounter shape;

 private:
  bool Close() {
    shape.Close();
    return true;
  }
};

// Thrown by YamlScan to stop yaml-cpp's parser at a refusal.
struct Refused {};

// yaml-cpp's events into a ShapeCounter, with each anchor's expanded size.
class YamlScan final : public YAML::EventHandler {
 public:
  // Throws YAML::ParserException when a document starts where the previous one did.
  void OnDocumentStart(const YAML::Mark& mark) override {
    if (documents_ > 0 && mark.pos == last_document_.pos) {
      throw YAML::ParserException(mark, "unexpected content (a ',' outside [...] or {...}?)");
    }
    last_document_ = mark;
    ++documents_;
  }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t anchor) override { Leaf(anchor, nullptr); }
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t anchor,
                const std::string& value) override {
    Leaf(anchor, &value);
  }
  // An alias of a collection still open (one that contains it) counts one: the converter
  // puts null there and reports the cycle.
  void OnAlias(const YAML::Mark&, YAML::anchor_t anchor) override {
    const size_t size = anchor < sizes_.size() && sizes_[anchor] > 0 ? sizes_[anchor] : 1;
    Check(shape_.Node(size, nullptr));
  }
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value) override {
    Open(anchor, /*mapping=*/false);
  }
  void OnSequenceEnd() override { Close(); }
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value) override {
    Open(anchor, /*mapping=*/true);
  }
  void OnMapEnd() override { Close(); }

  size_t documents() const { return documents_; }
  std::optional<Issue> TakeRefusal() { return shape_.TakeRefusal(); }

 private:
  static void Check(bool ok) {
    if (!ok) throw Refused{};
  }

  void Leaf(YAML::anchor_t anchor, const std::string* scalar) {
    Check(shape_.Node(1, scalar));
    Record(anchor, 1);
  }

  void Open(YAML::anchor_t anchor, bool mapping) {
    Check(shape_.Node(1, nullptr) && shape_.Open(mapping));
    open_.push_back({anchor, shape_.count() - 1});
  }

  void Close() {
    const auto [anchor, start] = open_.back();
    open_.pop_back();
    shape_.Close();
    Record(anchor, shape_.count() - start);
  }

  // yaml-cpp numbers a document's anchors from 1 (0: none).
  void Record(YAML::anchor_t anchor, size_t size) {
    if (anchor == YAML::NullAnchor) return;
    if (sizes_.size() <= anchor) sizes_.resize(anchor + 1, 0);
    sizes_[anchor] = size;
  }

  ShapeCounter shape_;
  std::vector<std::pair<YAML::anchor_t, size_t>> open_;  // anchor, count before the node
  std::vector<size_t> sizes_;  // by anchor: expanded size; 0 while the node is open
  size_t documents_ = 0;
  YAML::Mark last_document_;
};

}  // namespace

Prescan PrescanJson(std::string_view text) {
  JsonScan scan;
  json::sax_parse(text.data(), text.data() + text.size(), &scan);
  Prescan out;
  out.refusal = scan.shape.TakeRefusal();
  return out;
}

Prescan PrescanYaml(const std::string& text) {
  std::istringstream in(text);
  YAML::Parser parser(in);
  YamlScan scan;
  try {
    while (parser.HandleNextDocument(scan)) {
    }
  } catch (const Refused&) {
  }
  Prescan out;
  out.documents = scan.documents();
  out.refusal = scan.TakeRefusal();
  return out;
}

}  // namespace hcashare::jsonin
