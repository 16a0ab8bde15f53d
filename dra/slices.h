// ResourceSlice objects from one node's pool of DRA devices: the pure last step of
// rendering, shared by `hcashare discover --dra` (which prints them) and the publisher
// (which sends them). It splits a pool into slices of at most kMaxDevicesPerSlice devices,
// shapes each device for the API version the server serves (v1beta1 wraps a device's
// attributes in `basic`) and fills the metadata a node-local driver gives its slices
// (generateName, an ownerReference to the Node). Names and resourceVersions are the API
// server's; the publisher adds them. Facts: shared reference "kube-api-and-dra.md" §3.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/status.h"

namespace hcashare::dra {

// The driver name when the config names none (`draDriver`).
inline constexpr const char* kDefaultDriver = "rdma.hcashare.io";
// Devices per ResourceSlice: 128, or 64 when a device of the slice uses taints, counters or
// list-typed attributes (the API server refuses more).
inline constexpr size_t kMaxDevicesPerSlice = 128;
inline constexpr size_t kMaxDevicesPerSliceAdvanced = 64;
// Attributes and capacities of one device, together.
inline constexpr size_t kMaxAttributesAndCapacities = 32;

// The versions of resource.k8s.io a publisher can speak, newest first.
enum class ApiVersion { kV1, kV1beta2, kV1beta1 };

// "v1", "v1beta2", "v1beta1".
const char* ApiVersionName(ApiVersion v);
// The inverse of ApiVersionName; InvalidArgument for any other text.
Result<ApiVersion> ParseApiVersion(const std::string& name);

// One node's pool: what the driver offers, independent of API version and publication.
struct PoolContent {
  std::string driver;     // spec.driver, e.g. "rdma.hcashare.io"
  std::string node_name;  // spec.nodeName
  std::string pool_name;  // spec.pool.name; node-local drivers use the node name
  // Each device in the v1 shape ({name, attributes, capacity, allowMultipleAllocations}),
  // sorted by name, names unique.
  std::vector<nlohmann::json> devices;
  bool operator==(const PoolContent& o) const {
    return driver == o.driver && node_name == o.node_name && pool_name == o.pool_name &&
           devices == o.devices;
  }
};

// What a publication adds to the content.
struct SliceHeader {
  ApiVersion version = ApiVersion::kV1;
  std::string node_uid;  // the Node's metadata.uid; "" leaves out the ownerReference
  int64_t generation = 1;
};

// The devices of `pool` split into slices, in order: each at most kMaxDevicesPerSlice
// (kMaxDevicesPerSliceAdvanced when any device of the pool uses taints, consumesCounters or
// list-typed attributes). A pool without devices is one slice with none, so consumers see
// the node's pool exist and be empty.
std::vector<std::vector<nlohmann::json>> SplitDevices(const PoolContent& pool);

// The complete ResourceSlice objects for `pool` (apiVersion, kind, metadata.generateName
// "<node>-<driver>-", ownerReferences, spec with pool.generation and resourceSliceCount), one
// per SplitDevices() part, devices shaped for header.version.
std::vector<nlohmann::json> SliceObjects(const PoolContent& pool, const SliceHeader& header);

// `device` (v1 shape) in the shape of `version`: unchanged for v1 and v1beta2; for v1beta1
// attributes, capacity, allowMultipleAllocations and consumesCounters move under `basic`.
nlohmann::json ShapeDevice(const nlohmann::json& device, ApiVersion version);

}  // namespace hcashare::dra
