// JsonIn: reading the fields of a JSON object into typed values, remembering the first
// problem with its JSON path. Internal to hostfacts/ (snapshot_json.cc).
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace hcashare::hostfacts {

// Reads fields out of a JSON object, remembering the first problem with its JSON path.
class JsonIn {
 public:
  JsonIn(const nlohmann::json& j, std::string path, std::string* error)
      : j_(j), path_(std::move(path)), error_(error) {
    if (!j_.is_object()) Fail(path_, "expected an object");
  }

  // Field `key` into `out` when it is present (absent leaves `out` as it is); a value of
  // another type, or an integer out of `N`'s range, is the problem.
  void Str(const char* key, std::string* out) { Get(key, out, &nlohmann::json::is_string); }
  void Bool(const char* key, bool* out) { Get(key, out, &nlohmann::json::is_boolean); }
  template <typename N>
  void Int(const char* key, N* out) {
    const nlohmann::json* v = Field(key);
    if (v == nullptr) return;
    if (!v->is_number_integer() ||
        (v->is_number_unsigned() && v->get<uint64_t>() > uint64_t{INT64_MAX}) ||
        v->get<int64_t>() < std::numeric_limits<N>::min() ||
        v->get<int64_t>() > std::numeric_limits<N>::max()) {
      Fail(Path(key), "expected an integer in range");
      return;
    }
    *out = static_cast<N>(v->get<int64_t>());
  }
  // Array of strings `key`, appended to `out`.
  void Strings(const char* key, std::vector<std::string>* out) {
    const nlohmann::json* v = Field(key);
    if (v == nullptr) return;
    if (!v->is_array()) return Fail(Path(key), "expected an array of strings");
    for (size_t i = 0; i < v->size(); ++i) {
      if (!(*v)[i].is_string())
        return Fail(Path(key) + "/" + std::to_string(i), "expected a string");
      out->push_back((*v)[i].get<std::string>());
    }
  }
  // Each element of array `key` through `read(element, path)`.
  template <typename T, typename F>
  void Objects(const char* key, std::vector<T>* out, F read) {
    const nlohmann::json* v = Field(key);
    if (v == nullptr) return;
    if (!v->is_array()) return Fail(Path(key), "expected an array");
    for (size_t i = 0; i < v->size() && error_->empty(); ++i) {
      T t;
      read((*v)[i], Path(key) + "/" + std::to_string(i), &t);
      out->push_back(std::move(t));
    }
  }
  // Object `key` whose values are strings, keyed by `K` (std::string, or int for numerals).
  template <typename K>
  void StringMap(const char* key, std::map<K, std::string>* out) {
    const nlohmann::json* v = Field(key);
    if (v == nullptr) return;
    if (!v->is_object()) return Fail(Path(key), "expected an object");
    for (const auto& [k, val] : v->items()) {
      if (!val.is_string()) return Fail(Path(key) + "/" + k, "expected a string");
      if constexpr (std::is_same_v<K, int>) {
        size_t used = 0;
        int n = -1;
        try {
          n = std::stoi(k, &used);
        } catch (const std::exception&) {
        }
        if (n < 0 || used != k.size()) return Fail(Path(key) + "/" + k, "expected a numeral key");
        (*out)[n] = val.template get<std::string>();
      } else {
        (*out)[k] = val.template get<std::string>();
      }
    }
  }

 private:
  std::string Path(const char* key) const { return path_ + "/" + key; }
  const nlohmann::json* Field(const char* key) const {
    if (!error_->empty() || !j_.is_object()) return nullptr;
    auto it = j_.find(key);
    return it == j_.end() ? nullptr : &*it;
  }
  template <typename T>
  void Get(const char* key, T* out, bool (nlohmann::json::*is)() const noexcept) {
    const nlohmann::json* v = Field(key);
    if (v == nullptr) return;
    if (!(v->*is)()) return Fail(Path(key), "wrong type");
    *out = v->get<T>();
  }
  void Fail(const std::string& path, const std::string& what) {
    if (error_->empty()) *error_ = (path.empty() ? "/" : path) + ": " + what;
  }

  const nlohmann::json& j_;
  const std::string path_;
  std::string* error_;
};

}  // namespace hcashare::hostfacts
