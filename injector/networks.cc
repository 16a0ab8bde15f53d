#include "injector/networks.h"

#include <cctype>
#include <utility>

#include <nlohmann/json.hpp>

#include "common/strings.h"
#include "json/fields.h"
#include "json/parse.h"

namespace hcashare::injector {

using jsonin::Quote;
using nlohmann::json;

namespace {

// Deepest nesting accepted in the JSON form (elements may carry cni-args objects).
constexpr int kMaxAnnotationDepth = 32;

constexpr char kLabelRule[] =
    "a DNS-1123 label: at most 63 lower-case letters, digits and '-', starting and ending "
    "with a letter or digit";
constexpr char kSubdomainRule[] =
    "a DNS-1123 subdomain: at most 253 lower-case letters, digits, '-' and '.', each "
    "dot-separated part starting and ending with a letter or digit";
constexpr char kInterfaceRule[] =
    "a Linux interface name: 1 to 15 characters without '/', ':' or spaces, not \".\" or "
    "\"..\"";

bool IsLower(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }

// [a-z0-9]([-a-z0-9]*[a-z0-9])? without a length limit.
bool IsLabelText(std::string_view s) {
  if (s.empty() || !IsLower(s.front()) || !IsLower(s.back())) return false;
  for (char c : s) {
    if (!IsLower(c) && c != '-') return false;
  }
  return true;
}

// "k8s.v1.cni.cncf.io/networks: item 2 ("ns/net")".
std::string ItemContext(size_t index, const std::string& item) {
  return std::string(kNetworksAnnotation) + ": item " + std::to_string(index + 1) + " (" +
         Quote(item) + ")";
}

// Checks a namespace or name of one comma-form item: Multus's pattern for them, a DNS-1123
// label's characters (with no length limit: a longer name simply names no object).
Status CheckCommaPart(std::string_view part, const char* what, const std::string& context) {
  if (IsLabelText(part)) return Status::Ok();
  return Status::InvalidArgument(context + ": " + what + " " + Quote(std::string(part)) +
                                 " is not " + kLabelRule);
}

// One comma-form item, split as Multus splits it: at most one '/' (namespace before it), at
// most one '@' after it (interface after it), each part trimmed of spaces. An empty
// namespace or interface is none; an empty name is refused (Multus would look up a
// NetworkAttachmentDefinition named "" and fail the pod).
Result<NetworkRef> ParseCommaItem(std::string_view item, size_t index) {
  const std::string context = ItemContext(index, std::string(item));
  if (item.empty()) {
    return Status::InvalidArgument(std::string(kNetworksAnnotation) + ": item " +
                                   std::to_string(index + 1) + " is empty: remove the extra ','");
  }
  NetworkRef ref;
  std::string_view rest = item;
  const size_t slash = rest.find('/');
  if (slash != std::string_view::npos) {
    if (rest.find('/', slash + 1) != std::string_view::npos) {
      return Status::InvalidArgument(context +
                                     ": has more than one '/'; write [namespace/]name[@interface]");
    }
    ref.ns = std::string(TrimSpace(rest.substr(0, slash)));
    rest = rest.substr(slash + 1);
    if (!ref.ns.empty()) RETURN_IF_ERROR(CheckCommaPart(ref.ns, "namespace", context));
  }
  const size_t at = rest.find('@');
  if (at != std::string_view::npos) {
    if (rest.find('@', at + 1) != std::string_view::npos) {
      return Status::InvalidArgument(context +
                                     ": has more than one '@'; write [namespace/]name[@interface]");
    }
    ref.interface = std::string(TrimSpace(rest.substr(at + 1)));
    rest = rest.substr(0, at);
    if (!ref.interface.empty() && !IsInterfaceName(ref.interface)) {
      return Status::InvalidArgument(context + ": interface " + Quote(ref.interface) + " is not " +
                                     kInterfaceRule);
    }
  }
  ref.name = std::string(TrimSpace(rest));
  if (ref.name.empty()) {
    return Status::InvalidArgument(context +
                                   ": names no network; write [namespace/]name[@interface]");
  }
  RETURN_IF_ERROR(CheckCommaPart(ref.name, "network name", context));
  return ref;
}

Result<std::vector<NetworkRef>> ParseCommaForm(std::string_view value) {
  std::vector<NetworkRef> refs;
  size_t index = 0;
  while (true) {
    const size_t comma = value.find(',');
    if (index >= kMaxNetworks) {
      return Status::InvalidArgument(std::string(kNetworksAnnotation) + ": names more than " +
                                     std::to_string(kMaxNetworks) + " networks; at most " +
                                     std::to_string(kMaxNetworks) + " are accepted");
    }
    ASSIGN_OR_RETURN(NetworkRef ref, ParseCommaItem(TrimSpace(value.substr(0, comma)), index));
    refs.push_back(std::move(ref));
    ++index;
    if (comma == std::string_view::npos) break;
    value.remove_prefix(comma + 1);
  }
  return refs;
}

// `key` folded as Go's encoding/json matches keys to field names: ASCII letters in lower
// case, and the two characters that fold to ASCII ones (U+017F long s, U+212A Kelvin sign).
std::string FoldKey(const std::string& key) {
  std::string out;
  for (size_t i = 0; i < key.size(); ++i) {
    if (key.compare(i, 2, "\xC5\xBF") == 0) {
      out += 's';
      ++i;
    } else if (key.compare(i, 3, "\xE2\x84\xAA") == 0) {
      out += 'k';
      i += 2;
    } else {
      out += static_cast<char>(std::tolower(static_cast<unsigned char>(key[i])));
    }
  }
  return out;
}

// One member of an element, in document order: its key and its value (a nested object or
// array as an empty one of its kind).
struct Member {
  std::string key;
  json value;
};

// The members of each element of a JSON array, in document order, duplicates kept: what
// Go's encoding/json walks (nlohmann::json's objects keep one value per key, sorted). The
// text has been parsed once already, so only its shape matters here.
class ElementReader : public nlohmann::json_sax<json> {
 public:
  std::vector<std::vector<Member>> elements;

  bool null() override { return Value(json()); }
  bool boolean(bool v) override { return Value(json(v)); }
  bool number_integer(number_integer_t v) override { return Value(json(v)); }
  bool number_unsigned(number_unsigned_t v) override { return Value(json(v)); }
  bool number_float(number_float_t v, const string_t&) override { return Value(json(v)); }
  bool string(string_t& v) override { return Value(json(v)); }
  bool binary(binary_t&) override { return Value(json()); }
  bool start_object(std::size_t) override {
    if (depth_ == 1) elements.emplace_back();
    if (depth_ == 2) Value(json::object());
    ++depth_;
    return true;
  }
  bool key(string_t& k) override {
    if (depth_ == 2) key_ = k;
    return true;
  }
  bool end_object() override {
    --depth_;
    return true;
  }
  bool start_array(std::size_t) override {
    if (depth_ == 2) Value(json::array());
    ++depth_;
    return true;
  }
  bool end_array() override {
    --depth_;
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override {
    return false;
  }

 private:
  bool Value(json v) {
    if (depth_ == 2 && !elements.empty()) elements.back().push_back({key_, std::move(v)});
    return true;
  }
  int depth_ = 0;
  std::string key_;
};

// The members Multus reads of element `index`, as Go's encoding/json decodes them into its
// NetworkSelectionElement: keys matched case-insensitively, the last of several keys for one
// field winning, null leaving the field as it was, any other non-string an error.
struct ElementFields {
  std::string name, ns, interface, interface_request;
};
Result<ElementFields> ReadElement(const std::vector<Member>& members, size_t index) {
  ElementFields f;
  for (const Member& m : members) {
    const std::string key = FoldKey(m.key);
    std::string* field = key == "name"               ? &f.name
                         : key == "namespace"        ? &f.ns
                         : key == "interface"        ? &f.interface
                         : key == "interfacerequest" ? &f.interface_request
                                                     : nullptr;
    if (field == nullptr || m.value.is_null()) continue;
    if (!m.value.is_string()) {
      return Status::InvalidArgument(
          std::string(kNetworksAnnotation) + ": element " + std::to_string(index + 1) + " member " +
          Quote(m.key) + " is " + jsonin::DescribeValue(m.value) + "; it must be a string");
    }
    *field = m.value.get<std::string>();
  }
  // Multus's pre-3.2 key, read when "interface" gives none.
  if (f.interface.empty()) f.interface = f.interface_request;
  return f;
}

Result<std::vector<NetworkRef>> ParseJsonForm(std::string_view value) {
  Result<json> parsed = jsonin::ParseJson(value, {/*max_depth=*/kMaxAnnotationDepth});
  if (!parsed.ok()) {
    return Status::InvalidArgument(std::string(kNetworksAnnotation) + " is not valid JSON (" +
                                   parsed.status().message() +
                                   "); write a JSON array of objects or a comma list");
  }
  const json& list = *parsed;
  if (!list.is_array()) {
    return Status::InvalidArgument(std::string(kNetworksAnnotation) + " is a JSON " +
                                   list.type_name() +
                                   "; write a JSON array of objects, e.g. [{\"name\": \"net-a\"}]");
  }
  if (list.size() > kMaxNetworks) {
    return Status::InvalidArgument(std::string(kNetworksAnnotation) + ": names " +
                                   std::to_string(list.size()) + " networks; at most " +
                                   std::to_string(kMaxNetworks) + " are accepted");
  }
  ElementReader reader;
  json::sax_parse(value.begin(), value.end(), &reader);
  std::vector<NetworkRef> refs;
  for (size_t i = 0; i < list.size(); ++i) {
    const json& element = list[i];
    const std::string where =
        std::string(kNetworksAnnotation) + ": element " + std::to_string(i + 1);
    if (!element.is_object()) {
      return Status::InvalidArgument(where + " is " + jsonin::DescribeValue(element) +
                                     "; each element must be an object with a \"name\"");
    }
    if (i >= reader.elements.size()) {
      return Status::Internal(where + ": not found again in the annotation's text");
    }
    ASSIGN_OR_RETURN(ElementFields f, ReadElement(reader.elements[i], i));
    NetworkRef ref{std::move(f.ns), std::move(f.name), std::move(f.interface)};
    if (ref.name.empty()) {
      return Status::InvalidArgument(where + " has no \"name\"; add the network's name");
    }
    if (!IsDns1123Subdomain(ref.name)) {
      return Status::InvalidArgument(where + ": name " + Quote(ref.name) + " is not " +
                                     kSubdomainRule);
    }
    if (!ref.ns.empty() && !IsDns1123Label(ref.ns)) {
      return Status::InvalidArgument(where + " (" + Quote(ref.name) + "): namespace " +
                                     Quote(ref.ns) + " is not " + kLabelRule);
    }
    if (!ref.interface.empty() && !IsInterfaceName(ref.interface)) {
      return Status::InvalidArgument(where + " (" + Quote(ref.name) + "): interface " +
                                     Quote(ref.interface) + " is not " + kInterfaceRule);
    }
    refs.push_back(std::move(ref));
  }
  return refs;
}

}  // namespace

bool IsDns1123Label(std::string_view s) { return s.size() <= 63 && IsLabelText(s); }

bool IsDns1123Subdomain(std::string_view s) {
  if (s.empty() || s.size() > 253) return false;
  while (true) {
    const size_t dot = s.find('.');
    if (!IsLabelText(s.substr(0, dot))) return false;
    if (dot == std::string_view::npos) return true;
    s.remove_prefix(dot + 1);
  }
}

bool IsInterfaceName(std::string_view s) {
  if (s.empty() || s.size() > kMaxInterfaceNameBytes || s == "." || s == "..") return false;
  for (char c : s) {
    if (c == '/' || c == ':' || std::isspace(static_cast<unsigned char>(c)) || c == '\0') {
      return false;
    }
  }
  return true;
}

Result<std::vector<NetworkRef>> ParseNetworks(std::string_view annotation,
                                              const std::string& pod_namespace) {
  if (annotation.size() > kMaxNetworksAnnotationBytes) {
    return Status::InvalidArgument(
        std::string(kNetworksAnnotation) + " is " + std::to_string(annotation.size()) +
        " bytes; at most " + std::to_string(kMaxNetworksAnnotationBytes) +
        " are accepted (Kubernetes' limit for all annotations): name fewer networks");
  }
  const std::string_view value = TrimSpace(annotation);
  if (value.empty()) return std::vector<NetworkRef>();
  // Multus reads the JSON form whenever the value holds any of '[', '{' or '"'.
  Result<std::vector<NetworkRef>> refs = value.find_first_of("[{\"") != std::string_view::npos
                                             ? ParseJsonForm(value)
                                             : ParseCommaForm(value);
  if (!refs.ok()) return refs;
  for (NetworkRef& ref : *refs) {
    if (!ref.ns.empty()) continue;
    if (pod_namespace.empty()) {
      return Status::InvalidArgument(std::string(kNetworksAnnotation) + ": network " +
                                     Quote(ref.name) +
                                     " names no namespace and the pod's namespace is unknown; "
                                     "write it as namespace/name");
    }
    ref.ns = pod_namespace;
  }
  return refs;
}

}  // namespace hcashare::injector
