// A pod's devices from kubelet pod-resources responses (v1 Get, v1 List, v1alpha1 List):
// the pure part of LookupPodDevices, exposed for its tests and the fuzz target
// (fuzz/podresources_fuzz.cc).
#pragma once

#include <string>

#include "kubelet/api/podresources_v1.pb.h"
#include "kubelet/api/podresources_v1alpha1.pb.h"
#include "kubelet/device_checkpoint.h"
#include "kubelet/podresources.h"

namespace hcashare::kubelet {

// DRA devices (pod-resources v1 `dynamic_resources`) are returned among the device-plugin
// resources under a key no extended resource name can be (':' is not allowed in one):
// "dra:<driver>" -> "<pool>/<device>" (cni/dra_devices.h turns ours into PCI addresses).
inline constexpr const char* kDraKeyPrefix = "dra:";
// "dra:<driver>".
std::string DraResourceKey(const std::string& driver);
// "<pool>/<device>".
std::string DraDeviceId(const std::string& pool, const std::string& device);

// The devices of the pod in a v1 Get response: resource name -> device IDs across all its
// containers, de-duplicated, in first-seen order; resources without IDs are absent. DRA
// devices are under DraResourceKey(driver).
DevicesByResource DevicesFromGet(const v1::GetPodResourcesResponse& resp);

// The devices of every pod named `pod` (namespace and name) in a List response, merged as
// DevicesFromGet does. `*matches` receives how many entries matched (a recreated pod of
// the same name may be listed more than once).
DevicesByResource DevicesFromList(const v1::ListPodResourcesResponse& resp, const PodRef& pod,
                                  int* matches);
DevicesByResource DevicesFromList(const v1alpha1::ListPodResourcesResponse& resp, const PodRef& pod,
                                  int* matches);

}  // namespace hcashare::kubelet
