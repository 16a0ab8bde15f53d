#include "cni/podresources_devices.h"

#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace hcashare::cni {
namespace {

// Adds the devices of PodResources messages (v1 or v1alpha1) to one result.
class DeviceCollector {
 public:
  template <typename PodResourcesMsg>
  void Add(const PodResourcesMsg& pod) {
    for (const auto& container : pod.containers()) {
      for (const auto& dev : container.devices()) {
        if (dev.device_ids().empty()) continue;
        std::vector<std::string>& list = out_[dev.resource_name()];
        std::set<std::string>& seen = seen_[dev.resource_name()];
        for (const std::string& id : dev.device_ids()) {
          if (seen.insert(id).second) list.push_back(id);
        }
      }
    }
  }
  DevicesByResource Take() { return std::move(out_); }

 private:
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

}  // namespace hcashare::cni
