// Fuzzes the kubelet device-manager checkpoint reader, ParseCheckpointDevices, for the pod
// UID the seed corpus uses ("pod-uid-1").
// Invariants beyond "no crash": a parsed result has no empty device list and no ID twice
// within a resource (IDs are de-duplicated across entries and NUMA buckets).
#include <cstddef>
#include <cstdint>
#include <set>
#include <string>

#include "fuzz/fuzz_check.h"
#include "kubelet/device_checkpoint.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  const auto devices = hcashare::kubelet::ParseCheckpointDevices(text, "pod-uid-1");
  if (!devices.ok()) return 0;
  for (const auto& [resource, ids] : *devices) {
    FUZZ_CHECK(!resource.empty());
    FUZZ_CHECK(!ids.empty());
    FUZZ_CHECK(std::set<std::string>(ids.begin(), ids.end()).size() == ids.size());
  }
  return 0;
}
