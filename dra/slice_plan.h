// The publisher's pure decisions, apart from its thread and its API calls: which writes take
// a node's ResourceSlices in the API server from what is there to what is wanted (the rules
// of the upstream helper, shared reference "kube-api-and-dra.md" §3.5), the view of the
// slices that adds the publisher's own writes to an informer cache that has not seen them
// yet, and the shared devices a server without consumable capacity drops.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "dra/slices.h"
#include "kube/informer.h"

namespace hcashare::dra {

// The writes that publish a pool, in the order they are sent: deletes first, then updates,
// then creates.
struct SlicePlan {
  int64_t generation = 0;               // the pool generation of the wanted slices
  bool bumped = false;                  // generation is higher than the slices' own
  std::vector<nlohmann::json> deletes;  // existing slices (name, uid, resourceVersion used)
  std::vector<nlohmann::json> updates;  // complete objects to PUT (metadata from the server's)
  std::vector<nlohmann::json> creates;  // complete objects to POST (generateName)
  // No write needed.
  bool empty() const { return deletes.empty() && updates.empty() && creates.empty(); }
};

// The writes from `existing` (every slice of the driver on the node, as the server holds
// them) to the slices of `pool` (SliceObjects with `header`, whose generation is ignored).
// Slices of another pool or an older generation are obsolete. When no slice is created and
// at most one changes, the generation is kept and the changed one updated in place;
// otherwise the generation is one above both the slices' and `last_generation` (the highest
// this publisher wrote: the floor after someone deleted every slice) and every kept slice is
// rewritten.
SlicePlan PlanSlices(const std::vector<nlohmann::json>& existing, const PoolContent& pool,
                     const SliceHeader& header, int64_t last_generation);

// True when `existing` (a slice from the server) holds what `wanted` (from SliceObjects) says,
// the pool generation aside: the same spec otherwise and, when `wanted` has one, the same
// owner reference.
bool SameContent(const nlohmann::json& existing, const nlohmann::json& wanted);

// The pool generation of a slice, 0 when absent.
int64_t GenerationOf(const nlohmann::json& slice);

// The slices as the server holds them after the publisher's writes: the informer's cache
// lags them, so the objects written are laid over it until the informer has one as new (by
// resourceVersion), and the objects deleted are hidden until the informer drops them. Not
// thread-safe (the publisher thread's own).
class SliceView {
 public:
  // An object the server returned from a PUT or POST.
  void Wrote(const nlohmann::json& object);
  // The object `name` was deleted (or found gone).
  void Deleted(const std::string& name);
  // `informed` (the informer's objects) with the writes laid over it; `informer_version` is
  // the resourceVersion the informer has seen up to. Entries the informer has caught up with
  // are dropped.
  std::vector<nlohmann::json> Merge(const std::vector<kube::CachedObject>& informed,
                                    const std::string& informer_version);
  // Forgets every write (a new informer).
  void Clear();

 private:
  std::map<std::string, nlohmann::json> written_;
  std::set<std::string> deleted_;
};

// True when resourceVersion `a` is at or after `b`: as numbers when both are (as every API
// server makes them), else only when equal.
bool VersionAtLeast(const std::string& a, const std::string& b);

// Whether a device (v1 shape) asks for several allocations (a shared device).
bool IsSharedDevice(const nlohmann::json& device);
// `pool` without its shared devices.
PoolContent WithoutSharedDevices(const PoolContent& pool);
// The names of the devices `sent` (a slice in the shape of `version`) marks
// allowMultipleAllocations that `returned` (the server's answer) no longer does: the
// server does not serve consumable capacity.
std::vector<std::string> DroppedSharedDevices(const nlohmann::json& sent,
                                              const nlohmann::json& returned, ApiVersion version);
// `pool` with no device's taints.
PoolContent WithoutTaints(const PoolContent& pool);
// Whether a device `sent` (a slice in the shape of `version`) gave taints came back from the
// server (`returned`) without them: the server does not serve device taints.
bool DroppedTaints(const nlohmann::json& sent, const nlohmann::json& returned, ApiVersion version);

}  // namespace hcashare::dra
