#include "config/names.h"

#include <algorithm>
#include <cctype>

#include "common/strings.h"
#include "config/json_fields.h"

namespace hcashare::config {
namespace {

bool IsAlnum(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

}  // namespace

std::string DnsLabelProblem(const std::string& label) {
  if (label.empty()) return "has an empty label (check for leading, trailing or double dots)";
  if (label.size() > kMaxDnsLabelLength) {
    return "has a label of " + std::to_string(label.size()) + " characters; at most " +
           std::to_string(kMaxDnsLabelLength) + " are allowed";
  }
  for (char c : label) {
    if (std::isupper(static_cast<unsigned char>(c))) return "must be lower case";
    if (!IsAlnum(c) && c != '-') return "may contain only lower-case letters, digits, '-' and '.'";
  }
  if (!IsAlnum(label.front()) || !IsAlnum(label.back())) {
    return "has label " + Quote(label) + ", which must start and end with a letter or digit";
  }
  return "";
}

namespace {

// Why `prefix` is not a DNS-1123 subdomain, or "" when it is.
std::string DnsSubdomainProblem(const std::string& prefix) {
  if (prefix.size() > kMaxDnsSubdomainLength) {
    return "is " + std::to_string(prefix.size()) +
           " characters long; a DNS subdomain has at most " +
           std::to_string(kMaxDnsSubdomainLength);
  }
  for (size_t start = 0;;) {
    const size_t dot = prefix.find('.', start);
    const std::string label =
        prefix.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    const std::string problem = DnsLabelProblem(label);
    if (!problem.empty()) return Quote(prefix) + " is not a DNS subdomain: it " + problem;
    if (dot == std::string::npos) return "";
    start = dot + 1;
  }
}

// Every reason `name` is not the name part of a qualified name whose inner characters are
// letters, digits and those in `inner` (the kubelet allows "-_."); `allowed` names them.
std::vector<std::string> NamePartProblems(const std::string& name, std::string_view inner,
                                          const char* allowed) {
  if (name.empty()) return {"must not be empty"};
  std::vector<std::string> problems;
  if (name.size() > kMaxResourceNameLength) {
    problems.push_back("is " + std::to_string(name.size()) +
                       " characters long; the kubelet allows at most " +
                       std::to_string(kMaxResourceNameLength));
  }
  const bool valid_chars = std::all_of(name.begin(), name.end(), [inner](char c) {
    return IsAlnum(c) || inner.find(c) != std::string_view::npos;
  });
  if (!valid_chars) {
    problems.push_back(Quote(name) + " may contain only " + allowed);
  } else if (!IsAlnum(name.front()) || !IsAlnum(name.back())) {
    problems.push_back(Quote(name) +
                       " must start and end with a letter or digit (the kubelet rejects "
                       "resource names that do not)");
  }
  return problems;
}

// Why the non-empty `prefix` is not usable for an extended resource, or "" when it is.
std::string PrefixProblem(const std::string& prefix) {
  std::string problem = DnsSubdomainProblem(prefix);
  if (!problem.empty()) return problem;
  // The kubelet treats any name containing "kubernetes.io/" as a native resource.
  if (EndsWith(prefix, "kubernetes.io")) {
    return Quote(prefix) +
           " is in the kubernetes.io domain, which is reserved for native resources; the "
           "kubelet refuses it for extended resources";
  }
  if (prefix.rfind(kQuotaRequestsPrefix, 0) == 0) {
    return Quote(prefix) +
           " starts with \"requests.\", which the kubelet refuses for extended resources";
  }
  if (prefix.size() > kMaxResourcePrefixLength) {
    return "is " + std::to_string(prefix.size()) + " characters long; at most " +
           std::to_string(kMaxResourcePrefixLength) +
           " are allowed because the kubelet also checks \"requests.<prefix>\" (253 at most)";
  }
  return "";
}

}  // namespace

std::vector<std::string> ResourceNameProblems(const std::string& name) {
  return NamePartProblems(name, "_", "letters, digits and '_'");
}

namespace {

// True when `part` is non-empty, alphanumeric at both ends, and every inner character is
// alphanumeric or in `extra`.
bool IsCdiKindPart(std::string_view part, std::string_view extra) {
  auto alnum = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; };
  if (part.empty() || !alnum(part.front()) || !alnum(part.back())) return false;
  return std::all_of(part.begin(), part.end(),
                     [&](char c) { return alnum(c) || extra.find(c) != std::string_view::npos; });
}

}  // namespace

std::string CdiKindProblem(const std::string& kind) {
  const size_t slash = kind.find('/');
  const std::string_view view = kind;
  if (slash == std::string::npos || !IsCdiKindPart(view.substr(0, slash), "._-") ||
      !IsCdiKindPart(view.substr(slash + 1), "_-")) {
    return Quote(kind) +
           " is not a CDI kind: expected \"VENDOR/CLASS\" (VENDOR of letters, digits, '.', '_', "
           "'-'; CLASS of letters, digits, '_', '-'; both alphanumeric at the ends), e.g. "
           "\"example.com/rdma\"";
  }
  return "";
}

std::string ResourcePrefixProblem(const std::string& prefix) {
  if (prefix.empty()) return "must not be empty (omit it to use the default \"rdma\")";
  return PrefixProblem(prefix);
}

std::string ExtendedResourceNameProblem(std::string_view full) {
  const size_t slash = full.find('/');
  if (slash == std::string_view::npos || full.find('/', slash + 1) != std::string_view::npos) {
    return "must be an extended resource name \"prefix/name\" (e.g. \"rdma/hca_vfs\")";
  }
  const std::string prefix(full.substr(0, slash));
  if (prefix.empty()) return "must have a prefix before the '/' (e.g. \"rdma/hca_vfs\")";
  if (std::string problem = PrefixProblem(prefix); !problem.empty()) {
    return "has an invalid prefix: " + problem;
  }
  const std::vector<std::string> problems = NamePartProblems(
      std::string(full.substr(slash + 1)), "-_.", "letters, digits, '-', '_' and '.'");
  std::string out;
  for (const std::string& problem : problems) {
    out += (out.empty() ? "has an invalid name: " : "; ") + problem;
  }
  return out;
}

std::string DraDriverProblem(const std::string& name) {
  if (name.empty()) return "must not be empty";
  if (name.size() > kMaxDraDriverLength) {
    return "is " + std::to_string(name.size()) +
           " characters long; a DRA driver name has at most " +
           std::to_string(kMaxDraDriverLength) + " (the API server refuses a longer spec.driver)";
  }
  return DnsSubdomainProblem(name);
}

std::string IfNameProblem(std::string_view name) {
  if (name.empty()) return "is empty";
  if (name.size() > kMaxIfNameLength) {
    return "is longer than " + std::to_string(kMaxIfNameLength) + " bytes";
  }
  if (name == "." || name == "..") return "must not be \".\" or \"..\"";
  for (char c : name) {
    if (c == '/' || c == ':') return std::string("must not contain '") + c + "'";
    const auto u = static_cast<unsigned char>(c);
    if (u <= 0x20 || u == 0x7f) return "must not contain whitespace or control characters";
  }
  if (FirstNonUtf8Byte(name) != std::string_view::npos) return "is not valid UTF-8";
  return "";
}

}  // namespace hcashare::config
