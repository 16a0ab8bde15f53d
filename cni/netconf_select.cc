// The per-attachment settings that more than the network configuration may give, in
// sriov-cni's precedence (runtimeConfig, then CNI_ARGS, then the configuration): the MAC and
// the InfiniBand GUID (cni/netconf.h).
#include <optional>
#include <string>

#include "cni/env.h"
#include "cni/error.h"
#include "cni/netconf.h"
#include "json/fields.h"
#include "nl/vf_guid.h"

namespace hcashare::cni {

std::optional<std::string> ParseVfGuid(const std::string& text, std::string* problem) {
  Result<uint64_t> guid = ParseGuid(text);
  if (!guid.ok()) {
    *problem = guid.status().message();
    return std::nullopt;
  }
  if (*guid == 0 || *guid == UINT64_MAX) {
    *problem = "GUID " + jsonin::Quote(text) + " is all " + (*guid == 0 ? "zeros" : "ones") +
               ", the value of a VF that has no GUID; give the VF a unique GUID";
    return std::nullopt;
  }
  return FormatGuid(*guid);
}

namespace {

// A setting in sriov-cni's precedence: `runtime` (runtimeConfig), else CNI_ARGS `arg`
// checked by `parse` (code 4 when it is bad), else `configured`.
template <typename Parse>
Result<std::optional<std::string>> SelectSetting(const std::optional<std::string>& runtime,
                                                 const std::map<std::string, std::string>& cni_args,
                                                 std::string_view arg, Parse parse,
                                                 const std::optional<std::string>& configured) {
  if (runtime) return runtime;
  const auto it = cni_args.find(std::string(arg));
  if (it == cni_args.end()) return configured;
  std::string problem;
  std::optional<std::string> value = parse(it->second, &problem);
  if (!value) {
    return CniStatus(kErrInvalidEnv, "CNI_ARGS " + std::string(arg) + " " +
                                         jsonin::Quote(it->second) + ": " + problem);
  }
  return value;
}

}  // namespace

Result<std::optional<std::string>> SelectMac(const NetConf& conf,
                                             const std::map<std::string, std::string>& cni_args) {
  return SelectSetting(
      conf.runtime_mac, cni_args, kArgMac,
      [](const std::string& v, std::string* problem) { return ParseUnicastMac(v, problem); },
      conf.mac);
}

Result<std::optional<std::string>> SelectGuid(const NetConf& conf,
                                              const std::map<std::string, std::string>& cni_args) {
  return SelectSetting(conf.runtime_guid, cni_args, kArgGuid, ParseVfGuid, conf.guid);
}

}  // namespace hcashare::cni
