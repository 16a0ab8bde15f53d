// IPoIB child interfaces (`ip link add link ib0 name X type ipoib pkey P`) through
// rtnetlink. libnl has no ipoib link module, so the request is built here; building is a
// pure function so it can be tested without InfiniBand hardware.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/netns.h"
#include "common/status.h"

namespace hcashare {

// The full RTM_NEWLINK message (nlmsghdr included, sequence 0) that creates IPoIB child
// `name` of parent ifindex `parent` with partition key `pkey` (datagram mode), directly
// in the namespace `netns_fd`.
std::vector<uint8_t> BuildIpoibChildRequest(const std::string& name, uint32_t parent, uint16_t pkey,
                                            uint32_t netns_fd);

// Creates the child on `parent` (a netdev in the calling thread's namespace) inside
// `target`. The parent must be an IPoIB interface.
Status CreateIpoibChild(const std::string& parent, const std::string& name, uint16_t pkey,
                        const Netns& target);

}  // namespace hcashare
