// What sysfs and /dev say about the RDMA devices visible here, read through the Host seam:
// /sys/class/infiniband (devices, ports, GID tables), /sys/class/infiniband_verbs (which
// uverbs node belongs to which device) and /dev/infiniband. Thread-compatible.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "common/host.h"

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

// The RDMA devices in /sys/class/infiniband with their ports, by name. None when the
// directory is missing.
std::vector<RdmaDevice> ListRdmaDevices(const Host& host);

// uverbs node name ("uverbs0") -> RDMA device name, from /sys/class/infiniband_verbs/*/ibdev.
std::map<std::string, std::string> UverbsOwners(const Host& host);

// The names in /dev/infiniband (none when it is missing).
std::vector<std::string> DevInfinibandEntries(const Host& host);

// The used entries of the GID table of `device` port `port`: unreadable and all-zero
// entries (unused slots) are left out. Ordered by index.
std::vector<GidEntry> ReadGidTable(const Host& host, const std::string& device,
                                   const std::string& port);

// True for an IPv4-mapped GID (::ffff:a.b.c.d), the kind NCCL picks by default for RoCE.
bool IsIpv4MappedGid(const std::string& gid);

}  // namespace hcashare::doctor
