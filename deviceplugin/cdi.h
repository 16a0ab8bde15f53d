// CDI (Container Device Interface) support: one spec file per resource, written by us,
// and the CDI names an allocation grants.
//
// Device names in a resource's spec: "all" (a shared pool), "numa<N>" (a topology-aware
// shared pool, per NUMA node; "numa-unknown" for HCAs without one), or the PCI address (an
// exclusive pool). The kind is the resource's `cdiKind`, by default
// "<resourcePrefix>/<resourceName>".
//
// One node may run one daemon per kubelet root, all writing into /var/run/cdi. The daemon of
// the default root (/var/lib/kubelet) uses the names above; any other one adds its instance
// tag (CdiInstanceTag) to its spec file names and device names ("all.k1a2b3c4d"), so that
// the daemons never share a file and the CDI registry never sees one device defined in two
// specs (it would refuse both).
#pragma once

#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/owned_files.h"
#include "common/status.h"
#include "config/config.h"
#include "deviceplugin/api/deviceplugin_v1beta1.pb.h"
#include "node/cdi_spec.h"
#include "node/pool.h"

namespace hcashare::dp {

// "" for the default kubelet root, else "k" and 8 hex digits of a hash (FNV-1a) of the
// canonical root (CanonicalPath): stable across restarts and spellings of the root.
std::string CdiInstanceTag(const std::string& kubelet_root);
// "<prefix>/<name>".
std::string CdiKind(const config::ResourceConfig& rc);
// The container annotation a pre-1.28 kubelet passes to the runtime; distinct per resource,
// so that two resources in one container both work.
std::string CdiAnnotationKey(const config::ResourceConfig& rc);
// The spec file name, "hcashare-<prefix>_<name>.json" with '/' and '.' turned into '_', or
// "hcashare-<prefix>_<name>.<tag>.json" with an instance tag.
std::string CdiSpecFileName(const config::ResourceConfig& rc, const std::string& tag = "");
// The spec (JSON, cdiVersion 0.5.0) for `pool`.
std::string CdiSpecJson(const config::ResourceConfig& rc, const node::PoolState& pool,
                        const std::string& tag = "");
// Fully qualified CDI names ("kind=name") that container request `ids` grants.
std::vector<std::string> CdiDeviceNames(const config::ResourceConfig& rc,
                                        const node::PoolState& pool,
                                        const std::vector<std::string>& ids,
                                        const std::string& tag = "");

// Rewrites an Allocate response for CDI: the DeviceSpecs are replaced by `cdi_devices`
// (API field 5, kubelet >= 1.28) and the same names in the CDI annotation (older kubelets).
// Envs are kept. REQUIRES: `resp` was built by BuildAllocateResponse for `req`.
void ApplyCdi(const config::ResourceConfig& rc, const node::PoolState& pool,
              const v1beta1::AllocateRequest& req, v1beta1::AllocateResponse* resp,
              const std::string& tag = "");

// Writes and removes the spec files this process owns (common/owned_files.h): a file is
// removed only while it is still the one we wrote (same inode), and a foreign file at a
// spec's name is never touched. Not thread-safe: owned by the control loop.
class CdiSpecWriter {
 public:
  // The daemon of `kubelet_root` (its canonical path owns the files; CdiInstanceTag).
  CdiSpecWriter(std::string dir, const std::string& kubelet_root);

  // Writes (atomically) the spec of `rc` for `pool`, unless the content is unchanged. An
  // unusable pool has no devices, so its spec is removed instead. AlreadyExists when a
  // foreign file holds the spec's name.
  Status Write(const config::ResourceConfig& rc, const node::PoolState& pool);
  // Removes the spec of `rc` if it is still ours.
  void Remove(const config::ResourceConfig& rc);
  // At start: removes the specs an earlier run of this daemon wrote for resources that
  // `resources` no longer has (OwnedFiles::Reclaim).
  void Reclaim(const std::vector<config::ResourceConfig>& resources);
  // At shutdown: leaves the specs of `resources` for the successor (OwnedFiles::HandOver).
  void HandOver(const std::vector<config::ResourceConfig>& resources);
  // Leaves the spec of `rc` to the instance that took the resource over: never rewritten
  // or removed by this one again (until a later Write).
  void Disown(const config::ResourceConfig& rc);
  // The file layer (uninstall, foreign names).
  OwnedFiles& files() { return files_; }
  const std::string& tag() const { return tag_; }

 private:
  std::set<std::string> NamesOf(const std::vector<config::ResourceConfig>& resources) const;

  const std::string tag_;
  OwnedFiles files_;
};

}  // namespace hcashare::dp
