// The CNI result, version-neutral: parsed from any supported version (e.g. what an IPAM
// plugin prints) and emitted in exactly the shape of the requested version.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/status.h"

namespace hcashare::cni {

// interfaces[]. mtu, socketPath and pciID exist from spec 1.1.0 on.
struct ResultInterface {
  std::string name;
  std::string mac;      // "" = not reported
  std::string sandbox;  // netns path; "" for a host interface
  std::optional<int64_t> mtu;
  std::optional<std::string> socket_path;
  std::optional<std::string> pci_id;
  // hcashare's own: the GPU the device was chosen for ("gpuAffinity", cni/gpu_affinity.h).
  std::optional<nlohmann::json> gpu_affinity;
};

// ips[]. Before 1.0.0 each entry also carries "version": "4" or "6", which is derived
// from the address and therefore not stored.
struct ResultIp {
  std::string address;  // CIDR, e.g. "10.1.2.3/24"
  std::optional<std::string> gateway;
  std::optional<int> interface;  // index into interfaces
};

// routes[]. mtu, advmss, priority, table and scope exist from 1.1.0 on.
struct ResultRoute {
  std::string dst;  // CIDR
  std::optional<std::string> gw;
  std::optional<int64_t> mtu;
  std::optional<int64_t> advmss;
  std::optional<int64_t> priority;
  std::optional<int64_t> table;
  std::optional<int64_t> scope;
};

// dns.
struct ResultDns {
  std::vector<std::string> nameservers;
  std::string domain;
  std::vector<std::string> search;
  std::vector<std::string> options;
};

// A result. `cni_version` is the version it was parsed from ("" when built in code).
struct CniResult {
  std::string cni_version;
  std::vector<ResultInterface> interfaces;
  std::vector<ResultIp> ips;
  std::vector<ResultRoute> routes;
  ResultDns dns;
};

// Parses a result of any supported version. A cniVersion that is missing or not supported
// -> code 1 when present, code 6 when missing; any malformed member (a non-CIDR address,
// an ips[].interface outside interfaces, a "version" that contradicts the address, a
// wrong type) -> one code-6 error listing every problem with its path.
Result<CniResult> ParseResult(const nlohmann::json& j);

// DecodeJson + ParseResult, for a delegated plugin's stdout.
Result<CniResult> ParseResultText(std::string_view text);

// `result` in the shape of `cni_version` (which sets "cniVersion"): "ips[].version" only
// before 1.0.0; interface mtu/socketPath/pciID and route mtu/advmss/priority/table/scope
// only from 1.1.0; empty strings, lists and unset optionals are omitted; "dns" is always
// present (as in the Go library). An unsupported `cni_version` -> code 1.
Result<nlohmann::json> ToJson(const CniResult& result, std::string_view cni_version);

// Adds an IPAM result to ours: its ips (with interface = 0, our interface) and routes are
// appended, and its dns is used when ours has none. IPAM interfaces are dropped.
// REQUIRES: ours.interfaces[0] is the attachment's interface.
CniResult MergeIpamResult(CniResult ours, const CniResult& ipam);

// A chained invocation's result: `prev` (the prevResult of earlier plugins) with `ours`
// appended; our ips' interface indexes are shifted past prev's interfaces, and prev's dns
// is kept unless it is empty.
CniResult ChainResult(CniResult prev, const CniResult& ours);

}  // namespace hcashare::cni
