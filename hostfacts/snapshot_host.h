// A Host that answers from a HostSnapshot: the /dev/infiniband nodes it recorded exist,
// nothing else can be read. For the parts that check device nodes through the Host seam
// (Allocate) when they run on a snapshot instead of the live node (`discover --snapshot`).
#pragma once

#include <memory>

#include "common/host.h"
#include "hostfacts/facts.h"

namespace hcashare::hostfacts {

// A Host over `snap`, which must outlive it.
std::unique_ptr<Host> NewSnapshotHost(const HostSnapshot& snap);

}  // namespace hcashare::hostfacts
