// Fault injection for the failure-path tests (tests/cni_crash_test.cc, tests/cni_oracle_test.cc):
// named points in ADD and DEL, each right after a state write or a change to the host
// (and after the undo of that change is registered). A real node kills CNI plugins
// mid-verb (runtime timeouts, the OOM killer, a node shutdown) and steps fail (netlink
// errors, a full disk); these points let the tests do both at every step, enumerated,
// and prove that the rollback, or a later DEL or GC, restores the host exactly.
//
// Inert unless the process's own environment asks for it:
//   HCASHARE_CNI_CRASH_AT=<point>  reaching <point> raises SIGKILL on this process;
//   HCASHARE_CNI_FAIL_AT=<point>   reaching <point> fails the step there (I/O error);
//   HCASHARE_CNI_CRASH_LIST=1      each point reached is printed to stderr as
//                                  "hcashare-cni crash point: <point>".
// A point reached more than once in one invocation (one per PF-side group) is named
// "<point>#<n>" from its second time on, in the list and in the two variables.
// It can only ever kill or fail the process that was started with that variable, which
// its caller could kill, or feed a bad configuration, anyway: it adds no attack surface.
#pragma once

#include <array>
#include <string_view>

#include "common/status.h"

namespace hcashare::cni {

// Every fault point, in the order a full ADD and then a full DEL reach them.
inline constexpr std::array<std::string_view, 24> kFaultPoints = {
    "add:state-saved",          // the attachment state, before any change
    "add:owner-marked",         // the device's owner marker
    "add:pf-set",               // each PF-side group ("add:pf-set#2" for the second, ...)
    "add:vf-unbound",           // an InfiniBand VF unbound from its driver (no netdev)
    "add:vf-rebound",           // it is bound again, its new netdev named and recorded
    "add:netdev-moved",         // the netdev in the pod, renamed, MAC/MTU set, up
    "add:netdev-saved",         // the state records it
    "add:child-created",        // macvlan/ipoib: the child link in the pod, configured
    "add:rdma-moved",           // the RDMA device in the pod
    "add:device-info-written",  // the Multus device-info file
    "add:ipam-added",           // the IPAM plugin allocated
    "add:ipam-applied",         // its addresses and routes on the interface
    "add:done",                 // the final state (with the result), not yet printed
    "del:rdma-returned",        // the RDMA device back in the host
    "del:netdev-returned",      // the netdev back in the host under its name
    "del:child-deleted",        // macvlan/ipoib: the child link deleted
    "del:ipam-released",        // the IPAM plugin released
    "del:pf-restored",          // the PF-side settings restored
    "del:vf-unbound",           // an InfiniBand VF unbound to apply its restored GUID
    "del:vf-rebound",           // an InfiniBand VF rebound to apply its restored GUID
    "del:device-info-removed",  // the device-info file removed
    "del:dra-status-removed",   // the DRA step's network status file removed
    "del:owner-released",       // the owner marker removed
    "del:state-removed",        // the state file removed: DEL is done
};

// The fault point `point` (one of kFaultPoints): see the comment at the top. Returns the
// injected failure (an I/O error, msg "injected failure", details naming the point), or OK.
Status FaultPoint(std::string_view point);

}  // namespace hcashare::cni

// Returns the injected failure from the enclosing verb when HCASHARE_CNI_FAIL_AT names
// `point`.
#define HCASHARE_FAULT_POINT(point) RETURN_IF_ERROR(::hcashare::cni::FaultPoint(point))
