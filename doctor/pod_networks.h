// `hcashare doctor --pod NS/NAME`: does a pod request the RDMA resource of every network it
// names? The pod as the API server stores it is run through the injector's own decision
// (injector::Mutate): what Mutate would add is what the pod lacks. A running pod cannot be
// changed, so each gap is a FAIL whose fix says where the request should have come from
// (hcashare-webhook, or the pod spec).
#pragma once

#include <vector>

#include <nlohmann/json.hpp>

#include "doctor/check.h"
#include "injector/mutate.h"

namespace hcashare::doctor {

// The checks for `pod` (a v1 Pod object), its NADs read through `nads`:
//   pod-networks           the annotation parses and every NAD exists (FAIL naming it);
//   pod-network-resources  per container and resource, requests and limits cover one unit
//                          per attachment (FAIL with what the injector would set), or one
//                          PASS listing what is requested.
// A pod that names no networks gets one PASS saying so.
std::vector<CheckResult> CheckPodNetworks(const nlohmann::json& pod, injector::NadLookup& nads);

}  // namespace hcashare::doctor
