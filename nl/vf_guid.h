// InfiniBand VF GUIDs (IFLA_VF_IB_NODE_GUID / IFLA_VF_IB_PORT_GUID): their text form and
// how they travel in an RTM_NEWLINK message of the PF. Pure functions, tested on messages
// built in memory (no InfiniBand hardware needed).
#pragma once

#include <linux/netlink.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/status.h"

namespace hcashare {

// Parses a GUID written as eight two-digit hex bytes joined by ':' ("02:00:00:00:00:00:00:01",
// either case; ib-sriov-cni's format), first byte most significant, as the kernel takes it.
// InvalidArgument saying what is wrong otherwise.
Result<uint64_t> ParseGuid(std::string_view text);

// "02:00:00:00:00:00:00:01": lower case, the form ParseGuid reads.
std::string FormatGuid(uint64_t guid);

// One VF's GUIDs as its PF reports them; nullopt when not reported (a kernel before 5.6, a
// driver without ndo_get_vf_guid, an Ethernet VF).
struct VfGuids {
  std::optional<uint64_t> node;
  std::optional<uint64_t> port;
};

// VF `vf`'s GUIDs in `hdr`, an RTM_NEWLINK message of its PF (IFLA_VFINFO_LIST, each
// entry's index taken from the GUID attribute itself). Malformed or short attributes are
// skipped, never read past.
VfGuids ParseVfGuids(const nlmsghdr* hdr, uint32_t vf);

}  // namespace hcashare
