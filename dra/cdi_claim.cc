#include "dra/cdi_claim.h"

#include <nlohmann/json.hpp>

#include "common/env_names.h"
#include "common/strings.h"
#include "node/cdi_spec.h"

namespace hcashare::dra {

std::string ClaimCdiKind(const std::string& driver) { return driver + "/claim"; }

std::string ClaimCdiDeviceName(const std::string& claim_uid, const std::string& device) {
  return claim_uid + "-" + device;
}

std::string ClaimCdiDeviceId(const std::string& driver, const std::string& claim_uid,
                             const std::string& device) {
  return ClaimCdiKind(driver) + "=" + ClaimCdiDeviceName(claim_uid, device);
}

std::string ClaimCdiSpecFileName(const std::string& driver, const std::string& claim_uid) {
  return "hcashare-dra-" + ReplaceAny(driver, ".", '_') + "-" + claim_uid + ".json";
}

std::string ClaimCdiSpecJson(const std::string& driver, const std::string& claim_uid,
                             const std::vector<CdiClaimDevice>& devices) {
  nlohmann::ordered_json out = nlohmann::json::array();
  for (const auto& d : devices) {
    const std::string names = Join(d.rdma_devices);
    const std::vector<std::string> env = {RdmaDevicesEnvName(d.resource_name) + "=" + names,
                                          std::string(kRdmaDevicesEnv) + "=" + names};
    out.push_back(node::CdiDeviceJson(ClaimCdiDeviceName(claim_uid, d.name),
                                      node::CdiDeviceNodePaths(d.char_devices), env));
  }
  return node::CdiSpecText(ClaimCdiKind(driver), out);
}

}  // namespace hcashare::dra
