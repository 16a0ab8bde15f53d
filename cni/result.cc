#include "cni/result.h"

#include <cstdint>
#include <utility>

#include "cni/error.h"
#include "cni/syntax.h"
#include "cni/version.h"
#include "json/fields.h"

namespace hcashare::cni {

using jsonin::FieldReader;
using jsonin::Need;
using nlohmann::json;

namespace {

constexpr const char* kDecodeMsg = "cannot decode CNI result";
constexpr int64_t kMaxU32 = UINT32_MAX;
constexpr int64_t kMaxScope = 255;

// A string member that must be a CIDR.
std::optional<std::string> ReadCidr(FieldReader& reader, std::string_view key, Need need) {
  std::optional<std::string> value = reader.String(key, need);
  if (value && !CidrFamily(*value)) {
    reader.Fail(key, "must be an address with a prefix length, got " + jsonin::Quote(*value));
    return std::nullopt;
  }
  return value;
}

// A string member that must be a bare IP address.
std::optional<std::string> ReadIp(FieldReader& reader, std::string_view key) {
  std::optional<std::string> value = reader.String(key);
  if (value && !IsIpAddress(*value)) {
    reader.Fail(key, "must be an IP address, got " + jsonin::Quote(*value));
    return std::nullopt;
  }
  return value;
}

ResultInterface ReadInterface(FieldReader& r) {
  ResultInterface out;
  out.name = r.String("name", Need::kRequired).value_or("");
  out.mac = r.String("mac").value_or("");
  out.sandbox = r.String("sandbox").value_or("");
  out.mtu = r.Integer("mtu", 0, kMaxU32);
  out.socket_path = r.String("socketPath");
  out.pci_id = r.String("pciID");
  return out;
}

ResultIp ReadIpEntry(FieldReader& r, bool legacy) {
  ResultIp out;
  out.address = ReadCidr(r, "address", Need::kRequired).value_or("");
  out.gateway = ReadIp(r, "gateway");
  if (const auto index = r.Integer("interface", 0, INT32_MAX)) {
    out.interface = static_cast<int>(*index);
  }
  if (!legacy) return out;  // 1.0.0 dropped "version"; an old field is ignored.
  const auto version = r.Choice("version", {"4", "6"});
  const auto family = CidrFamily(out.address);
  if (version && family && (*version == 0 ? 4 : 6) != *family) {
    r.Fail("version", "\"" + std::to_string(*version == 0 ? 4 : 6) +
                          "\" does not match the address " + jsonin::Quote(out.address));
  }
  return out;
}

ResultRoute ReadRoute(FieldReader& r) {
  ResultRoute out;
  out.dst = ReadCidr(r, "dst", Need::kRequired).value_or("");
  out.gw = ReadIp(r, "gw");
  out.mtu = r.Integer("mtu", 0, kMaxU32);
  out.advmss = r.Integer("advmss", 0, kMaxU32);
  out.priority = r.Integer("priority", 0, kMaxU32);
  out.table = r.Integer("table", 0, kMaxU32);
  out.scope = r.Integer("scope", 0, kMaxScope);
  return out;
}

ResultDns ReadDns(FieldReader& top) {
  ResultDns out;
  const json* dns = top.Object("dns");
  if (!dns) return out;
  FieldReader r = top.At(*dns, top.PathOf("dns"));
  out.nameservers = r.Strings("nameservers").value_or(std::vector<std::string>{});
  out.domain = r.String("domain").value_or("");
  out.search = r.Strings("search").value_or(std::vector<std::string>{});
  out.options = r.Strings("options").value_or(std::vector<std::string>{});
  return out;
}

template <typename T>
void PutIfSet(json& out, const char* key, const std::optional<T>& value) {
  if (value) out[key] = *value;
}

template <typename T>
void PutIfNotEmpty(json& out, const char* key, const T& value) {
  if (!value.empty()) out[key] = value;
}

json InterfaceJson(const ResultInterface& in, bool v110) {
  json out = {{"name", in.name}};
  PutIfNotEmpty(out, "mac", in.mac);
  PutIfNotEmpty(out, "sandbox", in.sandbox);
  if (v110) {
    PutIfSet(out, "mtu", in.mtu);
    PutIfSet(out, "socketPath", in.socket_path);
    PutIfSet(out, "pciID", in.pci_id);
  }
  PutIfSet(out, "gpuAffinity", in.gpu_affinity);
  return out;
}

json IpJson(const ResultIp& ip, bool legacy) {
  json out = {{"address", ip.address}};
  if (legacy) out["version"] = ip.address.find(':') == std::string::npos ? "4" : "6";
  PutIfSet(out, "gateway", ip.gateway);
  PutIfSet(out, "interface", ip.interface);
  return out;
}

json RouteJson(const ResultRoute& route, bool v110) {
  json out = {{"dst", route.dst}};
  PutIfSet(out, "gw", route.gw);
  if (v110) {
    PutIfSet(out, "mtu", route.mtu);
    PutIfSet(out, "advmss", route.advmss);
    PutIfSet(out, "priority", route.priority);
    PutIfSet(out, "table", route.table);
    PutIfSet(out, "scope", route.scope);
  }
  return out;
}

json DnsJson(const ResultDns& dns) {
  json out = json::object();
  PutIfNotEmpty(out, "nameservers", dns.nameservers);
  PutIfNotEmpty(out, "domain", dns.domain);
  PutIfNotEmpty(out, "search", dns.search);
  PutIfNotEmpty(out, "options", dns.options);
  return out;
}

// Every list member of `items` mapped through `to_json`; std::nullopt for none.
template <typename T, typename Fn>
std::optional<json> ListJson(const std::vector<T>& items, Fn to_json) {
  if (items.empty()) return std::nullopt;
  json out = json::array();
  for (const T& item : items) out.push_back(to_json(item));
  return out;
}

bool IsEmpty(const ResultDns& dns) {
  return dns.nameservers.empty() && dns.domain.empty() && dns.search.empty() && dns.options.empty();
}

}  // namespace

Result<CniResult> ParseResult(const json& j) {
  if (!j.is_object()) {
    return CniStatus(kErrDecode, kDecodeMsg,
                     "must be a JSON object, got " + jsonin::DescribeValue(j));
  }
  jsonin::IssueList errors;
  FieldReader top(j, "", &errors);
  const std::optional<std::string> version = top.String("cniVersion", Need::kRequired);
  if (!version) return CniStatus(kErrDecode, kDecodeMsg, jsonin::JoinIssues(errors));
  RETURN_IF_ERROR(CheckConfigVersion(version, Verb::kAdd));

  CniResult result;
  result.cni_version = *version;
  const bool legacy = !VersionAtLeast(*version, "1.0.0");
  jsonin::ForEachObject(top, "interfaces", Need::kOptional, [&result](FieldReader& r) {
    result.interfaces.push_back(ReadInterface(r));
  });
  jsonin::ForEachObject(top, "ips", Need::kOptional, [&result, legacy](FieldReader& r) {
    result.ips.push_back(ReadIpEntry(r, legacy));
  });
  jsonin::ForEachObject(top, "routes", Need::kOptional,
                        [&result](FieldReader& r) { result.routes.push_back(ReadRoute(r)); });
  result.dns = ReadDns(top);
  // An IPAM result has no interfaces, so an index can only be checked against a list.
  const size_t interface_count = result.interfaces.size();
  for (size_t i = 0; i < result.ips.size(); ++i) {
    const std::optional<int> index = result.ips[i].interface;
    if (index && interface_count > 0 && static_cast<size_t>(*index) >= interface_count) {
      errors.push_back({jsonin::JoinKey(jsonin::JoinIndex("ips", i), "interface"),
                        std::to_string(*index) + " is not an index into interfaces (" +
                            std::to_string(interface_count) + " entries)"});
    }
  }
  if (!errors.empty()) return CniStatus(kErrDecode, kDecodeMsg, jsonin::JoinIssues(errors));
  return result;
}

Result<CniResult> ParseResultText(std::string_view text) {
  Result<json> j = jsonin::DecodeJson(text, "CNI result");
  if (!j.ok()) return WithCniCode(j.status(), kErrDecode);
  return ParseResult(*j);
}

Result<json> ToJson(const CniResult& result, std::string_view cni_version) {
  const std::string version(cni_version);
  RETURN_IF_ERROR(CheckConfigVersion(version, Verb::kAdd));
  const bool legacy = !VersionAtLeast(version, "1.0.0");
  const bool v110 = VersionAtLeast(version, "1.1.0");
  json out = {{"cniVersion", version}};
  PutIfSet(out, "interfaces", ListJson(result.interfaces, [v110](const ResultInterface& i) {
             return InterfaceJson(i, v110);
           }));
  PutIfSet(out, "ips",
           ListJson(result.ips, [legacy](const ResultIp& ip) { return IpJson(ip, legacy); }));
  PutIfSet(out, "routes", ListJson(result.routes, [v110](const ResultRoute& route) {
             return RouteJson(route, v110);
           }));
  out["dns"] = DnsJson(result.dns);
  return out;
}

CniResult MergeIpamResult(CniResult ours, const CniResult& ipam) {
  for (ResultIp ip : ipam.ips) {
    ip.interface = 0;
    ours.ips.push_back(std::move(ip));
  }
  ours.routes.insert(ours.routes.end(), ipam.routes.begin(), ipam.routes.end());
  if (IsEmpty(ours.dns)) ours.dns = ipam.dns;
  return ours;
}

CniResult ChainResult(CniResult prev, const CniResult& ours) {
  const int offset = static_cast<int>(prev.interfaces.size());
  prev.interfaces.insert(prev.interfaces.end(), ours.interfaces.begin(), ours.interfaces.end());
  for (ResultIp ip : ours.ips) {
    if (ip.interface) *ip.interface += offset;
    prev.ips.push_back(std::move(ip));
  }
  prev.routes.insert(prev.routes.end(), ours.routes.begin(), ours.routes.end());
  if (IsEmpty(prev.dns)) prev.dns = ours.dns;
  return prev;
}

}  // namespace hcashare::cni
