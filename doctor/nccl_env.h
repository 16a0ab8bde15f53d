// NCCL_IB_HCA, parsed and matched the way NCCL does it: an optional '^' (exclude the
// listed devices), then an optional '=' (exact names instead of prefixes), then a comma
// list of `device[:port]`. Pure functions.
#pragma once

#include <string>
#include <vector>

namespace hcashare::doctor {

// One list entry.
struct NcclHcaEntry {
  std::string device;  // a name, or a prefix without '='
  int port = -1;       // -1: every port
  // "mlx5_0" or "mlx5_0:1".
  std::string ToString() const;
};

// A parsed NCCL_IB_HCA value.
struct NcclHcaFilter {
  bool exclude = false;  // '^'
  bool exact = false;    // '='
  std::vector<NcclHcaEntry> entries;
};

// One RDMA port that exists.
struct NcclPortRef {
  std::string device;
  int port = 1;
};

// Parses `value`. Empty entries are skipped; a port that is not a number makes the entry
// match no port, as in NCCL.
NcclHcaFilter ParseNcclIbHca(const std::string& value);

// True when `entry` matches `port` under the filter's exact/prefix rule.
bool EntryMatches(const NcclHcaFilter& filter, const NcclHcaEntry& entry, const NcclPortRef& port);

// The ports of `present` that NCCL would use under `filter`.
std::vector<NcclPortRef> SelectPorts(const NcclHcaFilter& filter,
                                     const std::vector<NcclPortRef>& present);

// The entries (as written) that match no port of `present`.
std::vector<std::string> UnmatchedEntries(const NcclHcaFilter& filter,
                                          const std::vector<NcclPortRef>& present);

}  // namespace hcashare::doctor
