// A pod's devices from kubelet pod-resources responses (v1 Get, v1 List, v1alpha1 List):
// the pure part of LookupPodDevices, exposed for its tests and the fuzz target
// (fuzz/podresources_fuzz.cc).
#pragma once

#include "cni/api/podresources_v1.pb.h"
#include "cni/api/podresources_v1alpha1.pb.h"
#include "cni/checkpoint.h"
#include "cni/podresources.h"

namespace hcashare::cni {

// The devices of the pod in a v1 Get response: resource name -> device IDs across all its
// containers, de-duplicated, in first-seen order; resources without IDs are absent.
DevicesByResource DevicesFromGet(const v1::GetPodResourcesResponse& resp);

// The devices of every pod named `pod` (namespace and name) in a List response, merged as
// DevicesFromGet does. `*matches` receives how many entries matched (a recreated pod of
// the same name may be listed more than once).
DevicesByResource DevicesFromList(const v1::ListPodResourcesResponse& resp, const PodRef& pod,
                                  int* matches);
DevicesByResource DevicesFromList(const v1alpha1::ListPodResourcesResponse& resp, const PodRef& pod,
                                  int* matches);

}  // namespace hcashare::cni
