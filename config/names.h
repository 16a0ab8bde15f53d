// The kubelet's rules for extended resource names ("<prefix>/<name>"), as they apply to
// resourceName and resourcePrefix. Internal to the config module.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace hcashare::config {

// Longest resourceName (the name part of a Kubernetes qualified name).
inline constexpr size_t kMaxResourceNameLength = 63;
// Longest DNS-1123 subdomain, and longest label in one.
inline constexpr size_t kMaxDnsSubdomainLength = 253;
inline constexpr size_t kMaxDnsLabelLength = 63;
// The kubelet also validates "requests.<prefix>/<name>" as a qualified name, so the
// prefix loses the length of "requests.".
inline constexpr std::string_view kQuotaRequestsPrefix = "requests.";
inline constexpr size_t kMaxResourcePrefixLength =
    kMaxDnsSubdomainLength - kQuotaRequestsPrefix.size();

// Every reason `name` is not a valid resourceName (empty when it is valid): it must be
// non-empty, at most 63 characters of [A-Za-z0-9_], alphanumeric at both ends.
std::vector<std::string> ResourceNameProblems(const std::string& name);

// Why `prefix` is not a usable resourcePrefix, or "" when it is: a DNS-1123 subdomain,
// not in the kubernetes.io domain, not starting with "requests.", at most 244 characters.
std::string ResourcePrefixProblem(const std::string& prefix);

// Why `kind` is not a valid CDI kind, or "" when it is: "VENDOR/CLASS", where VENDOR is
// [A-Za-z0-9._-] and CLASS [A-Za-z0-9_-], each non-empty and alphanumeric at both ends
// (the CDI specification's rule).
std::string CdiKindProblem(const std::string& kind);

}  // namespace hcashare::config
