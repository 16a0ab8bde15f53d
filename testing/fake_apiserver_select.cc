// FakeApiServer's reading of requests: paths into collections and names, query parameters,
// and the label and field selectors of LIST and WATCH.
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "testing/fake_apiserver_impl.h"

namespace hcashare::fake {
namespace {

using json = nlohmann::json;

int FromHex(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string PercentDecode(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size() && FromHex(s[i + 1]) >= 0 && FromHex(s[i + 2]) >= 0) {
      out += static_cast<char>(FromHex(s[i + 1]) * 16 + FromHex(s[i + 2]));
      i += 2;
    } else {
      out += s[i] == '+' ? ' ' : s[i];
    }
  }
  return out;
}

// "k=v,k2==v2" into pairs; false on anything else (set-based selectors are not served).
bool ParseEqualities(const std::string& text,
                     std::vector<std::pair<std::string, std::string>>* out) {
  if (text.empty()) return true;
  for (const std::string& term : SplitOn(text, ',')) {
    const size_t eq = term.find('=');
    if (eq == std::string::npos || eq == 0 || term.find('!') != std::string::npos) return false;
    const size_t value = term.compare(eq, 2, "==") == 0 ? eq + 2 : eq + 1;
    out->emplace_back(term.substr(0, eq), term.substr(value));
  }
  return true;
}

}  // namespace

std::optional<Target> ParseTarget(const std::string& path) {
  if (path.empty() || path[0] != '/') return std::nullopt;
  std::vector<std::string> seg = SplitOn(path.substr(1), '/');
  size_t prefix = 0;
  if (seg.size() >= 2 && seg[0] == "api") prefix = 2;
  if (seg.size() >= 3 && seg[0] == "apis") prefix = 3;
  if (prefix == 0 || seg.size() <= prefix) return std::nullopt;
  for (const std::string& s : seg) {
    if (s.empty()) return std::nullopt;
  }
  std::vector<std::string> rest(seg.begin() + static_cast<long>(prefix), seg.end());
  std::string base;
  for (size_t i = 0; i < prefix; ++i) base += "/" + seg[i];
  Target t;
  size_t res = 0;
  if (rest[0] == "namespaces" && rest.size() >= 3) {
    t.ns = rest[1];
    res = 2;
  }
  // Of subresources, only <object>/status is served.
  if (rest.size() == res + 3 && rest[res + 2] == "status") {
    t.subresource = "status";
    rest.pop_back();
  }
  if (rest.size() > res + 2) return std::nullopt;
  for (size_t i = 0; i <= res; ++i) t.collection += "/" + rest[i];
  t.collection = base + t.collection;
  t.kind_key = base + "/" + rest[res];
  if (rest.size() == res + 2) t.name = rest[res + 1];
  return t;
}

std::string QueryParam(const std::string& query, const std::string& key) {
  for (const std::string& kv : SplitOn(query, '&')) {
    if (kv.compare(0, key.size() + 1, key + "=") == 0)
      return PercentDecode(kv.substr(key.size() + 1));
  }
  return "";
}

bool IsResourceSlices(const Target& t) {
  return t.kind_key.rfind("/apis/resource.k8s.io/", 0) == 0 && t.kind_key.size() > 15 &&
         t.kind_key.compare(t.kind_key.size() - 15, 15, "/resourceslices") == 0;
}

std::string Selection::Parse(const Target& t, const std::string& query) {
  return ParseSelectors(t, QueryParam(query, "labelSelector"), QueryParam(query, "fieldSelector"));
}

std::string Selection::ParseSelectors(const Target& t, const std::string& label_selector,
                                      const std::string& field_selector) {
  kind_key = t.kind_key;
  ns = t.ns;
  if (!ParseEqualities(label_selector, &labels)) {
    return "labelSelector: only k=v terms are served";
  }
  if (!ParseEqualities(field_selector, &fields)) {
    return "fieldSelector: only k=v terms are served";
  }
  // The field labels the API server converts: every kind's two, and ResourceSlice's own.
  const bool slices = IsResourceSlices(t);
  for (const auto& [k, v] : fields) {
    if (k == "metadata.name" || k == "metadata.namespace") continue;
    if (slices && (k == "spec.nodeName" || k == "spec.driver")) continue;
    return "fieldSelector: field label not supported: " + k;
  }
  return "";
}

bool Selection::Matches(const std::string& collection, const json& object) const {
  std::optional<Target> t = ParseTarget(collection);
  if (!t || t->kind_key != kind_key || (!ns.empty() && t->ns != ns)) return false;
  const json& meta = object["metadata"];
  for (const auto& [k, v] : labels) {
    const auto l = meta.find("labels");
    if (l == meta.end() || !l->is_object() || l->value(k, std::string("\x01")) != v) return false;
  }
  for (const auto& [k, v] : fields) {
    std::string have;
    if (k == "metadata.name") {
      have = meta.value("name", "");
    } else if (k == "metadata.namespace") {
      have = t->ns;
    } else {  // spec.nodeName, spec.driver
      const auto spec = object.find("spec");
      if (spec != object.end() && spec->is_object()) {
        const auto f = spec->find(k.substr(5));
        if (f != spec->end() && f->is_string()) have = f->get<std::string>();
      }
    }
    if (have != v) return false;
  }
  return true;
}

}  // namespace hcashare::fake
