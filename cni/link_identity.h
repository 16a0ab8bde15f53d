// Which netdev is the attachment's: decided by identity, never by name. A pod's interface
// names belong to the pod (and to other plugins); acting on a name could rename, strip
// or steal an interface this invocation never moved.
//
// A link is the attachment's when
//   - the kernel reports its parent device (a VF's netdev, kernel >= 5.15): that parent
//     is the attachment's device (PCI address or auxiliary name), whatever its name or MAC;
//   - otherwise, when ethtool reports its bus address (a real VF's netdev on an older
//     kernel, e.g. RHEL 8's 4.18; LinkState::bus_info): that address is the device;
//   - otherwise (stand-ins without a bus: veths in tests, drivers that report none):
//       - it carries a MAC recorded for it (the one it had in the host, or the one ADD gave
//         it), and its ifindex is the one recorded in the pod or in the host (the kernel
//         keeps it across a move when it is free there) or it bears a name this attachment
//         gave it; or
//       - its MAC changed (the pod may set it: it has CAP_NET_ADMIN in its namespace), and
//         it has both the ifindex recorded in the pod and the name CNI_IFNAME gave it.
//     Never a name alone.
#pragma once

#include <vector>

#include "cni/state.h"
#include "nl/netdev.h"

namespace hcashare::cni {

// True when `link` is the netdev `state` attached (see above).
bool IsAttachedLink(const hcashare::LinkState& link, const AttachmentState& state);

// Whether `link` is the attachment's device, its MAC left aside (CHECK reports a changed
// MAC as drift): its parent device, or its bus address, or, without either, the ifindex
// recorded in the pod.
bool IsAttachedDevice(const hcashare::LinkState& link, const AttachmentState& state);

// The attachment's netdev among `links`; NotFound when none of them is.
Result<hcashare::LinkState> FindAttachedLink(const std::vector<hcashare::LinkState>& links,
                                             const AttachmentState& state);

// The attachment's netdev in the calling thread's namespace (one link dump).
Result<hcashare::LinkState> FindAttachedLink(NetdevOps& netdev, const AttachmentState& state);

// The attachment's macvlan/IPoIB child in the calling thread's namespace: a link of that
// kind whose lower device is the recorded master (`host_ifindex`), with the recorded pod
// ifindex (or, before that is recorded, CNI_IFNAME's name). NotFound when there is none.
Result<hcashare::LinkState> FindChildLink(NetdevOps& netdev, const AttachmentState& state);

// The link named `name` among `links`, or nullptr.
const hcashare::LinkState* LinkNamed(const std::vector<hcashare::LinkState>& links,
                                     const std::string& name);

}  // namespace hcashare::cni
