// Rebinding an InfiniBand VF to its driver (how mlx5 applies new GUIDs) without ever
// losing it. The driver is the one ADD recorded in the state (AttachmentState::vf_driver)
// before the first unbind, so every later step that finds the VF unbound (ADD's undo, DEL,
// `hcashare cni-gc` through DEL) can bind it again; a failed bind is retried with a
// bounded back-off and, when it still fails, reported with the command that fixes it by
// hand. The bind gives the VF a new netdev under a name of the kernel's choosing: it is
// found by the VF's PCI address and renamed to the recorded host name, with retries that
// survive a concurrent rename (udev, or IPoIB siblings rebinding at the same time).
#pragma once

#include <string>
#include <string_view>

#include "cni/attach.h"
#include "cni/state.h"

namespace hcashare::cni {

// Rebinds the attachment's VF to state.vf_driver: unbinds it (unless a rebind cut short
// left it unbound already; bound to another driver is an error), reaches fault point
// `fault_point` ("" for none), binds it again (BindVf) and names its new netdev
// (AdoptVfNetdev). `*unbound` (when given) is set once the VF has been unbound, so that a
// caller knows whether a failure left anything to undo.
Status RebindVf(const AttachmentState& state, const AttachContext& ctx,
                std::string_view fault_point, bool* unbound = nullptr);

// Binds the VF to state.vf_driver, retried a few times over at most ~1.5 s. The error
// (code 102) says the VF is left unbound and how to bind it by hand.
Status BindVf(const AttachmentState& state, VfDriver& driver);

// Gives the VF's netdev in the host namespace (found by PCI address, waited for up to 5 s)
// the recorded host name and admin state. A rename that fails because the netdev was
// renamed meanwhile (not found) or because the name is held (by a sibling that got ours)
// is retried, the netdev first stepping aside to a temporary name in the second case.
Status AdoptVfNetdev(const AttachmentState& state, const AttachContext& ctx);

// Whether DEL must look at the VF's binding first: a VF whose GUID ADD set may have been
// left unbound, or rebound with its netdev under a kernel name, by a failed or killed
// rebind.
bool MayNeedRebindRepair(const AttachmentState& state);

// Repairs what a failed or killed rebind left: a VF bound to no driver is bound again to
// the recorded one; then the VF's netdev, when it is in the host namespace, gets its host
// name and admin state back. True when the netdev is in the host namespace now (it need
// not be looked for in the pod); false when the VF is bound and its netdev is not in the
// host (in the pod, or returning from it).
Result<bool> RepairRebindingVf(const AttachmentState& state, const AttachContext& ctx);

}  // namespace hcashare::cni
