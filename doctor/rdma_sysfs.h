// What sysfs and /dev say about the RDMA devices visible here: a view of the host snapshot
// (/sys/class/infiniband with ports and GID tables, /sys/class/infiniband_verbs owners,
// /dev/infiniband). Thread-compatible.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "common/host.h"
#include "hostfacts/facts.h"

namespace hcashare::doctor {

// One port of an RDMA device (sysfs ports/N).
struct RdmaPort {
  std::string number;      // "1"
  std::string link_layer;  // "InfiniBand" or "Ethernet" ("" when unreadable)
};

// One RDMA device in /sys/class/infiniband.
struct RdmaDevice {
  std::string name;  // "mlx5_0"
  std::vector<RdmaPort> ports;
};

// One GID table entry (ports/N/gids/I with gid_attrs/types/I and gid_attrs/ndevs/I).
struct GidEntry {
  int index = 0;
  std::string gid;   // "0000:0000:0000:0000:0000:ffff:0a00:0001"
  std::string type;  // "RoCE v2", "IB/RoCE v1"
  std::string ndev;  // "" when not readable
};

// The snapshot the doctor judges: `host`'s, with GID tables and uverbs owners.
hostfacts::HostSnapshot ReadDoctorSnapshot(const Host& host);

// The RDMA devices in /sys/class/infiniband with their ports, by name. None when the
// directory is missing.
std::vector<RdmaDevice> ListRdmaDevices(const hostfacts::HostSnapshot& snap);

// uverbs node name ("uverbs0") -> RDMA device name, from /sys/class/infiniband_verbs/*/ibdev.
const std::map<std::string, std::string>& UverbsOwners(const hostfacts::HostSnapshot& snap);

// The names in /dev/infiniband (none when it is missing).
const std::vector<std::string>& DevInfinibandEntries(const hostfacts::HostSnapshot& snap);

// True when /dev/infiniband/`name` exists.
bool HasDevNode(const hostfacts::HostSnapshot& snap, const std::string& name);

// The used entries of the GID table of `device` port `port`: unreadable and all-zero
// entries (unused slots) are left out. Ordered by index.
std::vector<GidEntry> ReadGidTable(const hostfacts::HostSnapshot& snap, const std::string& device,
                                   const std::string& port);

// True for an IPv4-mapped GID (::ffff:a.b.c.d), the kind NCCL picks by default for RoCE.
bool IsIpv4MappedGid(const std::string& gid);

}  // namespace hcashare::doctor
