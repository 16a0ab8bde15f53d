#include "kubelet/podresources_devices.h"

#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace hcashare::kubelet {
namespace {

// Adds the devices of PodResources messages (v1 or v1alpha1) to one result.
class DeviceCollector {
 public:
  template <typename PodResourcesMsg>
  void Add(const PodResourcesMsg& pod) {
    for (const auto& container : pod.containers()) {
      for (const auto& dev : container.devices()) {
        for (const std::string& id : dev.device_ids()) Put(dev.resource_name(), id);
      }
      AddDynamic(container);
    }
  }
  DevicesByResource Take() { return std::move(out_); }

 private:
  void Put(const std::string& resource, const std::string& id) {
    if (seen_[resource].insert(id).second) out_[resource].push_back(id);
  }
  // v1 only: DRA devices, as DraResourceKey(driver) -> DraDeviceId(pool, device).
  void AddDynamic(const v1::ContainerResources& container) {
    for (const auto& claim : container.dynamic_resources()) {
      for (const auto& r : claim.claim_resources()) {
        if (r.driver_name().empty() || r.device_name().empty()) continue;
        Put(DraResourceKey(r.driver_name()), DraDeviceId(r.pool_name(), r.device_name()));
      }
    }
  }
  void AddDynamic(const v1alpha1::ContainerResources&) {}  // v1alpha1 has no DRA

  DevicesByResource out_;
  std::map<std::string, std::set<std::string>> seen_;
};

// Without a UID in the response, a recreated pod of the same name may be listed twice by
// kubelets <= 1.33 (terminal pods included); like Multus, every match is merged.
template <typename ListResponse>
DevicesByResource FromList(const ListResponse& resp, const PodRef& pod, int* matches) {
  DeviceCollector c;
  *matches = 0;
  for (const auto& p : resp.pod_resources()) {
    if (p.name() == pod.name && p.namespace_() == pod.ns) {
      c.Add(p);
      ++*matches;
    }
  }
  return c.Take();
}

}  // namespace

std::string DraResourceKey(const std::string& driver) {
  return std::string(kDraKeyPrefix) + driver;
}

std::string DraDeviceId(const std::string& pool, const std::string& device) {
  return pool + "/" + device;
}

DevicesByResource DevicesFromGet(const v1::GetPodResourcesResponse& resp) {
  DeviceCollector c;
  c.Add(resp.pod_resources());
  return c.Take();
}

DevicesByResource DevicesFromList(const v1::ListPodResourcesResponse& resp, const PodRef& pod,
                                  int* matches) {
  return FromList(resp, pod, matches);
}

DevicesByResource DevicesFromList(const v1alpha1::ListPodResourcesResponse& resp, const PodRef& pod,
                                  int* matches) {
  return FromList(resp, pod, matches);
}

}  // namespace hcashare::kubelet
