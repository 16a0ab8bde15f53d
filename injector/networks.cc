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

// Checks the parts of one comma-form item, which Multus wants as DNS-1123 labels.
Status CheckCommaPart(std::string_view part, const char* what, const std::string& context) {
  if (IsDns1123Label(part)) return Status::Ok();
  return Status::InvalidArgument(context + ": " + what + " " + Quote(std::string(part)) +
                                 " is not " + kLabelRule);
}

Result<NetworkRef> ParseCommaItem(std::string_view item, size_t index) {
  const std::string context = ItemContext(index, std::string(item));
  if (item.empty()) {
    return Status::InvalidArgument(std::string(kNetworksAnnotation) + ": item " +
                                   std::to_string(index + 1) + " is empty: remove the extra ','");
  }
  NetworkRef ref;
  std::string_view rest = item;
  const size_t at = rest.find('@');
  if (at != std::string_view::npos) {
    if (rest.find('@', at + 1) != std::string_view::npos) {
      return Status::InvalidArgument(context +
                                     ": has more than one '@'; write [namespace/]name[@interface]");
    }
    ref.interface = std::string(rest.substr(at + 1));
    rest = rest.substr(0, at);
    RETURN_IF_ERROR(CheckCommaPart(ref.interface, "interface", context));
    if (ref.interface.size() > kMaxInterfaceNameBytes) {
      return Status::InvalidArgument(context + ": interface " + Quote(ref.interface) +
                                     " is longer than 15 characters (the kernel's limit)");
    }
  }
  const size_t slash = rest.find('/');
  if (slash != std::string_view::npos) {
    if (rest.find('/', slash + 1) != std::string_view::npos) {
      return Status::InvalidArgument(context +
                                     ": has more than one '/'; write [namespace/]name[@interface]");
    }
    ref.ns = std::string(rest.substr(0, slash));
    rest = rest.substr(slash + 1);
    RETURN_IF_ERROR(CheckCommaPart(ref.ns, "namespace", context));
  }
  ref.name = std::string(rest);
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

// Reads the optional string member `key` of element `index`.
Result<std::string> OptionalString(const json& element, const char* key, size_t index) {
  const auto it = element.find(key);
  if (it == element.end() || it->is_null()) return std::string();
  if (!it->is_string()) {
    return Status::InvalidArgument(std::string(kNetworksAnnotation) + ": element " +
                                   std::to_string(index + 1) + " member \"" + key + "\" is " +
                                   jsonin::DescribeValue(*it) + "; it must be a string");
  }
  return it->get<std::string>();
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
  std::vector<NetworkRef> refs;
  for (size_t i = 0; i < list.size(); ++i) {
    const json& element = list[i];
    const std::string where =
        std::string(kNetworksAnnotation) + ": element " + std::to_string(i + 1);
    if (!element.is_object()) {
      return Status::InvalidArgument(where + " is " + jsonin::DescribeValue(element) +
                                     "; each element must be an object with a \"name\"");
    }
    NetworkRef ref;
    ASSIGN_OR_RETURN(ref.name, OptionalString(element, "name", i));
    ASSIGN_OR_RETURN(ref.ns, OptionalString(element, "namespace", i));
    ASSIGN_OR_RETURN(ref.interface, OptionalString(element, "interface", i));
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
  Result<std::vector<NetworkRef>> refs =
      value.front() == '[' || value.front() == '{' ? ParseJsonForm(value) : ParseCommaForm(value);
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
