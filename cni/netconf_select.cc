// The per-attachment settings that more than the network configuration may give, in
// sriov-cni's precedence (runtimeConfig, then CNI_ARGS, then the configuration): the MAC and
// the InfiniBand GUID (cni/netconf.h).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cni/env.h"
#include "cni/error.h"
#include "cni/netconf.h"
#include "cni/syntax.h"
#include "json/fields.h"
#include "nl/vf_guid.h"

namespace hcashare::cni {

std::optional<std::string> ParseVfGuid(const std::string& text, std::string* problem) {
  const std::string quoted = jsonin::Quote(text);
  const std::optional<std::vector<uint8_t>> octets = ParseHardwareAddress(text);
  if (!octets || octets->size() != 8) {
    *problem = "GUID " + quoted +
               " must be eight hex octets, as 02:00:00:00:00:00:00:01, "
               "02-00-00-00-00-00-00-01 or 0200.0000.0000.0001";
    return std::nullopt;
  }
  uint64_t guid = 0;
  for (uint8_t b : *octets) guid = guid << 8 | b;
  if (guid == 0 || guid == UINT64_MAX) {
    *problem = "GUID " + quoted + " is all " + (guid == 0 ? "zeros" : "ones") +
               ", the value of a VF that has no GUID; give the VF a unique GUID";
    return std::nullopt;
  }
  return FormatGuid(guid);
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
  // ib-sriov-cni's two sources come first; both are the runtime's (Multus') for this network.
  const std::optional<std::string>& runtime =
      conf.runtime_guid ? conf.runtime_guid : conf.args_guid;
  return SelectSetting(runtime, cni_args, kArgGuid, ParseVfGuid, conf.guid);
}

Status CheckIbKubernetes(const NetConf& conf) {
  if (!conf.ib_kubernetes_enabled) return Status::Ok();
  constexpr char kConfigured[] = "configured";
  if (conf.ib_kubernetes_state != kConfigured) {
    return CniStatus(
        kErrTryAgainLater, "ib-kubernetes has not configured this pod's network yet",
        std::string("ibKubernetesEnabled is set and args.cni \"") + kIbKubernetesKey + "\" is " +
            (conf.ib_kubernetes_state.empty() ? std::string("absent")
                                              : jsonin::Quote(conf.ib_kubernetes_state)) +
            ", not \"configured\"; is ib-kubernetes running?");
  }
  if (!conf.runtime_guid && !conf.args_guid) {
    return CniStatus(kErrTryAgainLater, "ib-kubernetes gave this pod's network no GUID",
                     "ibKubernetesEnabled is set and neither runtimeConfig.infinibandGUID nor "
                     "args.cni.guid is given");
  }
  return Status::Ok();
}

}  // namespace hcashare::cni
