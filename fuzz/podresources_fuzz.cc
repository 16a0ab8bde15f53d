// Fuzzes pod-resources response handling: the bytes after the first are parsed as the
// protobuf response the first byte selects (0: v1 GetPodResourcesResponse, 1: v1
// ListPodResourcesResponse, 2: v1alpha1 ListPodResourcesResponse, modulo 3), then turned
// into the pod's device lists (kubelet/podresources_devices.h) for pod "ns-1/pod-1".
// Invariants beyond "no crash": no empty device list; no ID twice within a resource; every
// ID is listed for that resource by a container of a matching pod; `matches` counts the
// matching pods.
#include <cstddef>
#include <cstdint>
#include <map>
#include <set>
#include <string>

#include <google/protobuf/stubs/logging.h>

#include "fuzz/fuzz_check.h"
#include "kubelet/podresources_devices.h"

namespace {

namespace kubelet = hcashare::kubelet;

using IdsByResource = std::map<std::string, std::set<std::string>>;

const kubelet::PodRef kPod{"ns-1", "pod-1", ""};

// What each resource lists across the containers of `pod`.
template <typename PodResourcesMsg>
void AddListed(const PodResourcesMsg& pod, IdsByResource* listed) {
  for (const auto& container : pod.containers()) {
    for (const auto& dev : container.devices()) {
      for (const std::string& id : dev.device_ids()) (*listed)[dev.resource_name()].insert(id);
    }
  }
}

void CheckDevices(const kubelet::DevicesByResource& devices, const IdsByResource& listed) {
  for (const auto& [resource, ids] : devices) {
    FUZZ_CHECK(!ids.empty());
    FUZZ_CHECK(std::set<std::string>(ids.begin(), ids.end()).size() == ids.size());
    const auto it = listed.find(resource);
    FUZZ_CHECK(it != listed.end());
    for (const std::string& id : ids) FUZZ_CHECK(it->second.count(id) == 1);
  }
}

template <typename ListResponse>
void FuzzList(const uint8_t* data, size_t size) {
  ListResponse resp;
  if (!resp.ParseFromArray(data, static_cast<int>(size))) return;
  int matches = -1;
  const kubelet::DevicesByResource devices = kubelet::DevicesFromList(resp, kPod, &matches);
  IdsByResource listed;
  int expected = 0;
  for (const auto& pod : resp.pod_resources()) {
    if (pod.name() != kPod.name || pod.namespace_() != kPod.ns) continue;
    ++expected;
    AddListed(pod, &listed);
  }
  FUZZ_CHECK(matches == expected);
  CheckDevices(devices, listed);
}

}  // namespace

// Discards protobuf's log: it writes a line for every string field with invalid UTF-8,
// which would slow the fuzzer down to the speed of its log.
extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** /*argv*/) {
  google::protobuf::SetLogHandler(nullptr);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint8_t selector = data[0] % 3;
  ++data;
  --size;
  if (selector == 0) {
    v1::GetPodResourcesResponse resp;
    if (!resp.ParseFromArray(data, static_cast<int>(size))) return 0;
    IdsByResource listed;
    AddListed(resp.pod_resources(), &listed);
    CheckDevices(kubelet::DevicesFromGet(resp), listed);
  } else if (selector == 1) {
    FuzzList<v1::ListPodResourcesResponse>(data, size);
  } else {
    FuzzList<v1alpha1::ListPodResourcesResponse>(data, size);
  }
  return 0;
}
