// Fault injection for the crash-recovery tests (tests/cni_crash_test.cc): named points in
// ADD and DEL, each right after a state write or a change to the host. A real node kills
// CNI plugins mid-verb (runtime timeouts, the OOM killer, a node shutdown); these points
// let the tests kill hcashare-cni with SIGKILL at every step, enumerated, and prove that a
// later DEL or GC restores the host from whatever the killed process left.
//
// Inert unless the process's own environment asks for it:
//   HCASHARE_CNI_CRASH_AT=<point>  reaching <point> raises SIGKILL on this process;
//   HCASHARE_CNI_CRASH_LIST=1      each point reached is printed to stderr as
//                                  "hcashare-cni crash point: <point>".
// It can only ever kill the process that was started with that variable, which its caller
// could kill anyway, so it adds no attack surface.
#pragma once

#include <array>
#include <string_view>

namespace hcashare::cni {

// Every crash point, in the order a full ADD and then a full DEL reach them.
inline constexpr std::array<std::string_view, 17> kCrashPoints = {
    "add:state-saved",          // the attachment state, before any change
    "add:owner-marked",         // the device's owner marker
    "add:pf-set",               // each PF-side group (the first one kills)
    "add:netdev-moved",         // the netdev in the pod, renamed, MAC/MTU set, up
    "add:netdev-saved",         // the state records it
    "add:rdma-moved",           // the RDMA device in the pod
    "add:device-info-written",  // the Multus device-info file
    "add:ipam-added",           // the IPAM plugin allocated
    "add:ipam-applied",         // its addresses and routes on the interface
    "add:done",                 // the final state (with the result), not yet printed
    "del:rdma-returned",        // the RDMA device back in the host
    "del:netdev-returned",      // the netdev back in the host under its name
    "del:ipam-released",        // the IPAM plugin released
    "del:pf-restored",          // the PF-side settings restored
    "del:device-info-removed",  // the device-info file removed
    "del:owner-released",       // the owner marker removed
    "del:state-removed",        // the state file removed: DEL is done
};

// The crash point `point` (one of kCrashPoints): see the comment at the top.
void CrashPoint(std::string_view point);

}  // namespace hcashare::cni
