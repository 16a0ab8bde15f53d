// Internal to hostfacts/: the read helpers, and the node-wide facts of a full read
// (ReadOptions::all_functions): the GPUDirect RDMA and IOMMU facts, the CPUs, and the NVIDIA GPUs
// the driver lists. Each file is read once, through the Host seam.
#pragma once

#include <string>
#include <vector>

#include "common/host.h"
#include "hostfacts/facts.h"

namespace hcashare::hostfacts {

// The entries of directory `dir`, sorted; none when it cannot be listed.
inline std::vector<std::string> List(const Host& host, const std::string& dir) {
  return host.ListDir(dir).value_or(std::vector<std::string>{});
}

// File `path` without trailing whitespace; "" when unreadable.
inline std::string Trimmed(const Host& host, const std::string& path) {
  return host.ReadTrimmed(path).value_or("");
}

// The `state` of the RDMA port at sysfs dir `port_dir` ("4: ACTIVE"); "" when unreadable.
// The one reader of it: the snapshot's and the live query's (live.h).
inline std::string PortStateAt(const Host& host, const std::string& port_dir) {
  return Trimmed(host, port_dir + "/state");
}

// The `operstate` of the netdev at sysfs dir `netdev_dir`; "" when unreadable. The one
// reader of it, as PortStateAt.
inline std::string OperStateAt(const Host& host, const std::string& netdev_dir) {
  return Trimmed(host, netdev_dir + "/operstate");
}

// The peer-memory modules, the NVIDIA driver and kernel versions, the IOMMU units and the
// IOMMU parameters of the kernel command line, into `snap`.
void ReadGpuDirectAndIommu(const Host& host, HostSnapshot* snap);

// The NUMA nodes of /sys/devices/system/node (by id), /proc/sys/kernel/arch and the first
// CPU of /proc/cpuinfo, into `snap`.
void ReadCpus(const Host& host, HostSnapshot* snap);

// containerd's /etc/containerd/config.toml (its CDI keys) and whether CRI-O's config is
// there, into `snap`.
void ReadContainerRuntime(const Host& host, HostSnapshot* snap);

}  // namespace hcashare::hostfacts
