#include "dra/cdi_claim.h"

#include <algorithm>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "common/env_names.h"
#include "common/strings.h"
#include "node/cdi_spec.h"

namespace hcashare::dra {
namespace {

// The RDMA device names of `devices`, each once, in their order.
std::vector<std::string> RdmaNames(const std::vector<const CdiClaimDevice*>& devices) {
  std::vector<std::string> out;
  std::set<std::string> seen;
  for (const CdiClaimDevice* d : devices) {
    for (const auto& r : d->rdma_devices) {
      if (seen.insert(r).second) out.push_back(r);
    }
  }
  return out;
}

// NCCL_IB_HCA's exact form for `devices` (common/env_names.h).
std::string NcclIbHca(const std::vector<const CdiClaimDevice*>& devices) {
  std::vector<NcclHca> hcas;
  for (const CdiClaimDevice* d : devices) hcas.push_back({d->numa_node, d->rdma_devices});
  return NcclIbHcaExact(std::move(hcas));
}

// "<prefix>RDMA_DEVICES=..." and "<prefix>NCCL_IB_HCA=..." for `devices`.
void AddNamed(const std::string& prefix, const std::vector<const CdiClaimDevice*>& devices,
              std::vector<std::string>* env) {
  env->push_back(prefix + "RDMA_DEVICES=" + Join(RdmaNames(devices)));
  env->push_back(prefix + "NCCL_IB_HCA=" + NcclIbHca(devices));
}

// The spec's variables (see the header).
std::vector<std::string> ClaimEnv(const CdiClaim& claim) {
  std::vector<const CdiClaimDevice*> all;
  std::map<std::string, std::vector<const CdiClaimDevice*>> by_request;
  std::map<std::string, std::vector<const CdiClaimDevice*>> by_resource;
  for (const auto& d : claim.devices) {
    all.push_back(&d);
    by_resource[d.resource_name].push_back(&d);
    std::set<std::string> parents;
    for (const auto& r : d.requests) parents.insert(ParentRequest(r));
    for (const auto& p : parents) by_request[p].push_back(&d);
  }
  std::vector<std::string> env;
  if (all.empty()) return env;
  AddNamed(ClaimEnvPrefix(claim.label), all, &env);
  for (const auto& [request, devices] : by_request) {
    AddNamed(ClaimEnvPrefix(claim.label, request), devices, &env);
  }
  if (by_request.size() > 1) return env;
  // One request: the claim is what any container holding it gets.
  env.push_back(std::string(kRdmaDevicesEnv) + "=" + Join(RdmaNames(all)));
  for (const auto& [resource, devices] : by_resource) {
    env.push_back(RdmaDevicesEnvName(resource) + "=" + Join(RdmaNames(devices)));
  }
  if (std::any_of(all.begin(), all.end(),
                  [](const CdiClaimDevice* d) { return d->set_nccl_ib_hca; })) {
    env.push_back(std::string(kNcclIbHcaEnv) + "=" + NcclIbHca(all));
  }
  return env;
}

}  // namespace

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

std::string ClaimEnvPrefix(const std::string& label, const std::string& request) {
  std::string out = "HCASHARE_DRA_CLAIM_" + ResourceEnvSuffix(label) + "_";
  if (!request.empty()) out += "REQUEST_" + ResourceEnvSuffix(request) + "_";
  return out;
}

std::string ParentRequest(const std::string& request) {
  return request.substr(0, request.find('/'));
}

std::string ClaimCdiSpecJson(const std::string& driver, const CdiClaim& claim) {
  nlohmann::ordered_json out = nlohmann::json::array();
  for (const auto& d : claim.devices) {
    out.push_back(node::CdiDeviceJson(ClaimCdiDeviceName(claim.uid, d.name),
                                      node::CdiDeviceNodePaths(d.char_devices), {}));
  }
  return node::CdiSpecText(ClaimCdiKind(driver), out, ClaimEnv(claim));
}

}  // namespace hcashare::dra
