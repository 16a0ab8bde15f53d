// The kubelet's rule for extended resource names ("<prefix>/<name>"): the one rule of the
// tree, used for the device plugin's resourceName and resourcePrefix and for the CNI's
// resourceName (cni/syntax.h).
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

// Every reason `name` is not a valid resourceName of the device plugin's configuration
// (empty when it is valid): the name part of an extended resource name (see
// ExtendedResourceNameProblem) restricted, as in the Mellanox plugin's schema, to
// [A-Za-z0-9_]: non-empty, at most 63 characters, alphanumeric at both ends.
std::vector<std::string> ResourceNameProblems(const std::string& name);

// Why `full` is not a Kubernetes extended resource name, or "" when it is: "<prefix>/<name>"
// with the prefix as ResourcePrefixProblem checks it and the name 1..63 characters of
// [A-Za-z0-9_.-], alphanumeric at both ends (e.g. "rdma/hca_vfs",
// "nvidia.com/mlnx-sriov.rdma_1").
std::string ExtendedResourceNameProblem(std::string_view full);

// Why `prefix` is not a usable resourcePrefix, or "" when it is: a DNS-1123 subdomain,
// not in the kubernetes.io domain, not starting with "requests.", at most 244 characters.
std::string ResourcePrefixProblem(const std::string& prefix);

// The longest DRA driver name (a ResourceSlice's spec.driver).
inline constexpr size_t kMaxDraDriverLength = 63;

// Why `label` is not a DNS-1123 label (1..63 of [a-z0-9-], alphanumeric at both ends), or
// "" when it is; phrased to follow "it " ("must be lower case").
std::string DnsLabelProblem(const std::string& label);

// Why `name` is not a usable DRA driver name (`draDriver`), or "" when it is: a lower-case
// DNS-1123 subdomain of at most 63 characters, as the API server checks spec.driver.
std::string DraDriverProblem(const std::string& name);

// Why `kind` is not a valid CDI kind, or "" when it is: "VENDOR/CLASS", where VENDOR is
// [A-Za-z0-9._-] and CLASS [A-Za-z0-9_-], each non-empty and alphanumeric at both ends
// (the CDI specification's rule).
std::string CdiKindProblem(const std::string& kind);

// The longest Linux interface name (IFNAMSIZ - 1).
inline constexpr size_t kMaxIfNameLength = 15;

// Why `name` cannot name a Linux network interface, or "" when it can: 1..15 bytes, not "."
// or "..", no '/', ':', whitespace or control character, UTF-8; phrased to follow "it "
// ("is empty"). The CNI's CNI_IFNAME and `master`, and a DRA claim's interface name.
std::string IfNameProblem(std::string_view name);

}  // namespace hcashare::config
