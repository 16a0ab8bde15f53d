// CDI (Container Device Interface) support: one spec file per resource, written by us,
// and the CDI names an allocation grants.
//
// Device names in a resource's spec: "all" (a shared pool), "numa<N>" (a topology-aware
// shared pool, per NUMA node; "numa-unknown" for HCAs without one), or the PCI address (an
// exclusive pool). The kind is the resource's `cdiKind`, by default
// "<resourcePrefix>/<resourceName>".
#pragma once

#include <string>
#include <vector>

#include "common/owned_files.h"
#include "common/status.h"
#include "config/config.h"
#include "deviceplugin/api/deviceplugin_v1beta1.pb.h"
#include "deviceplugin/pool.h"

namespace hcashare::dp {

// Default CDI spec directory (a host path used as given).
inline constexpr const char* kDefaultCdiSpecDir = "/var/run/cdi";

// "<prefix>/<name>".
std::string CdiKind(const config::ResourceConfig& rc);
// The container annotation a pre-1.28 kubelet passes to the runtime; distinct per resource,
// so that two resources in one container both work.
std::string CdiAnnotationKey(const config::ResourceConfig& rc);
// The spec file name, "hcashare-<prefix>_<name>.json" with '/' turned into '_'.
std::string CdiSpecFileName(const config::ResourceConfig& rc);
// The spec (JSON, cdiVersion 0.5.0) for `pool`.
std::string CdiSpecJson(const config::ResourceConfig& rc, const PoolState& pool);
// Fully qualified CDI names ("kind=name") that container request `ids` grants.
std::vector<std::string> CdiDeviceNames(const config::ResourceConfig& rc, const PoolState& pool,
                                        const std::vector<std::string>& ids);

// Rewrites an Allocate response for CDI: the DeviceSpecs are replaced by `cdi_devices`
// (API field 5, kubelet >= 1.28) and the same names in the CDI annotation (older kubelets).
// Envs are kept. REQUIRES: `resp` was built by BuildAllocateResponse for `req`.
void ApplyCdi(const config::ResourceConfig& rc, const PoolState& pool,
              const v1beta1::AllocateRequest& req, v1beta1::AllocateResponse* resp);

// Writes and removes the spec files this process owns. A file is removed only while it is
// still the one we wrote (same inode): another instance's rewrite is never deleted.
// Not thread-safe: owned by the control loop.
class CdiSpecWriter {
 public:
  // `owner` names this daemon across restarts (its kubelet root; see OwnedFiles).
  CdiSpecWriter(std::string dir, std::string owner) : files_(std::move(dir), std::move(owner)) {}

  // Writes (atomically) the spec of `rc` for `pool`, unless the content is unchanged. An
  // unusable pool has no devices, so its spec is removed instead.
  Status Write(const config::ResourceConfig& rc, const PoolState& pool);
  // Removes the spec of `rc` if it is still ours.
  void Remove(const config::ResourceConfig& rc);
  // Removes every spec still ours (shutdown).
  void RemoveAll();
  // At start: removes the specs an earlier run of this daemon wrote for resources that
  // `resources` no longer has (OwnedFiles::Reclaim).
  void Reclaim(const std::vector<config::ResourceConfig>& resources);
  // Leaves the spec of `rc` to the instance that took the resource over: never rewritten
  // or removed by this one again (until a later Write).
  void Disown(const config::ResourceConfig& rc);

 private:
  OwnedFiles files_;
};

}  // namespace hcashare::dp
