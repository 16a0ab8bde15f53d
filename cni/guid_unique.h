// A GUID is unique on the node: two VFs with one node or port GUID on a fabric break the
// subnet manager's addressing (both pods get rc 0 and neither works). ADD gives a VF a GUID
// only when no other VF of the node carries it — set by the administrator on any VF of any
// InfiniBand PF (what the PF's VF table reports), or given by another attachment (its state)
// — and holds a node-wide lock on the GUID from that check until ADD returns, so that two
// ADDs cannot both pass it.
#pragma once

#include <string>

#include "cni/attach.h"
#include "cni/vf.h"

namespace hcashare::cni {

// Takes the node-wide lock on `guid` (a file under the state dir's locks/), waiting up to
// ctx.lock_wait.
Result<DeviceLock> LockGuid(const std::string& guid, const AttachContext& ctx);

// OK when no VF of the node but `vf` carries `guid` (lower-case, as SelectGuid returns it).
// Otherwise an error (code 7, nothing changed) naming the holder: the attachment (container,
// interface, pod) and its VF, or the VF and PF whose table reports it. Attachments of the same
// container and interface (an ADD retried) are not holders.
Status CheckGuidUnique(const std::string& guid, const VfDevice& vf, const CniEnv& env,
                       const AttachContext& ctx);

}  // namespace hcashare::cni
