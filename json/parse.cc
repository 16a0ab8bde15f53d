#include "json/parse.h"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <utility>

#include "json/fields.h"

namespace hcashare::jsonin {
namespace {

using nlohmann::json;

// Builds the tree from SAX events. Only the innermost open container is ever changed, so
// the pointers held for the enclosing ones stay valid (as in nlohmann's own DOM builder).
class TreeBuilder : public nlohmann::json_sax<json> {
 public:
  explicit TreeBuilder(const JsonParseOptions& options) : options_(options) {}

  bool null() override { return Put(nullptr) != nullptr; }
  bool boolean(bool v) override { return Put(v) != nullptr; }
  bool number_integer(number_integer_t v) override { return Put(v) != nullptr; }
  bool number_unsigned(number_unsigned_t v) override { return Put(v) != nullptr; }
  bool number_float(number_float_t v, const string_t&) override { return Put(v) != nullptr; }
  bool string(string_t& v) override { return Put(std::move(v)) != nullptr; }
  bool binary(binary_t& v) override { return Put(json::binary(std::move(v))) != nullptr; }

  bool start_object(std::size_t) override { return Open(json::object()); }
  bool start_array(std::size_t) override { return Open(json::array()); }
  bool end_object() override { return Close(); }
  bool end_array() override { return Close(); }

  bool key(string_t& k) override {
    Frame& top = open_.back();
    const bool repeated = top.value->contains(k);
    top.key = std::move(k);
    if (repeated && options_.duplicate_keys != nullptr) {
      options_.duplicate_keys->push_back(
          {PathOfCurrent(), "duplicate key " + Quote(top.key) + " in the same object"});
    }
    return true;
  }

  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) override {
    error_ = WithoutJsonExceptionId(e.what());
    return false;
  }

  json TakeRoot() { return std::move(root_); }
  // The syntax error or the depth error; nullopt after a successful parse.
  const std::optional<std::string>& error() const { return error_; }

 private:
  struct Frame {
    json* value;      // the open container
    std::string key;  // objects: the member being read
  };

  // Stores `v` as the next element of the innermost container (or as the root).
  json* Put(json v) {
    if (options_.max_values > 0 && ++values_ > options_.max_values) {
      error_ = "more than " + std::to_string(options_.max_values) + " values";
      return nullptr;
    }
    if (open_.empty()) {
      root_ = std::move(v);
      return &root_;
    }
    Frame& top = open_.back();
    if (top.value->is_array()) {
      top.value->push_back(std::move(v));
      return &top.value->back();
    }
    json& slot = (*top.value)[top.key];
    slot = std::move(v);
    return &slot;
  }

  bool Open(json container) {
    if (options_.max_depth > 0 && open_.size() >= static_cast<size_t>(options_.max_depth)) {
      error_ = "nested deeper than " + std::to_string(options_.max_depth) + " levels";
      return false;
    }
    json* slot = Put(std::move(container));
    if (slot == nullptr) return false;
    open_.push_back({slot, {}});
    return true;
  }

  bool Close() {
    open_.pop_back();
    return true;
  }

  // "$.a[3].b": the path of the member being read. Built only for a report. An enclosing
  // array's open element is its last.
  std::string PathOfCurrent() const {
    std::string path = "$";
    for (const Frame& f : open_) {
      path = f.value->is_array() ? JoinIndex(path, f.value->size() - 1) : JoinKey(path, f.key);
    }
    return path;
  }

  const JsonParseOptions& options_;
  json root_;
  std::vector<Frame> open_;
  size_t values_ = 0;  // stored so far
  std::optional<std::string> error_;
};

}  // namespace

Result<json> ParseJson(std::string_view text, const JsonParseOptions& options) {
  TreeBuilder builder(options);
  const bool ok = json::sax_parse(text.data(), text.data() + text.size(), &builder);
  if (!ok || builder.error()) {
    return Status::InvalidArgument(builder.error().value_or("not a JSON value"));
  }
  return builder.TakeRoot();
}

}  // namespace hcashare::jsonin
