// The node's PCIe tree as an NCCL topology file (NCCL_TOPO_FILE), for
// `hcashare topo --format nccl-xml`.
//
// The file holds what NCCL cannot get wrong by reading it: one `cpu` per NUMA node that has a
// GPU or an RDMA NIC, and under it `pci` elements nested as NCCL nests them itself (every
// second bus address of a device's sysfs path, going up: a switch's upstream port, never a
// root port or a downstream port). Only GPUs, RDMA-capable NIC PFs and the bridges above
// them appear. No `gpu`, `nic` or `net` element: their attributes come from NVML and the net
// plugin, and NCCL lets a file's values win over its own detection. An attribute whose
// value is unknown is left out (NCCL reads it from sysfs or cpuid). docs/architecture.md
// ("NCCL topology export") lists every element and attribute and where each comes from.
// Pure functions of the host snapshot.
#pragma once

#include <string>

#include "common/status.h"
#include "hostfacts/facts.h"

namespace hcashare::topo {

// The topology file of `snap`, ending in a newline. Errors, naming the missing or bad fact:
// the snapshot could not list /sys/bus/pci/devices (NotFound); a `cpu` is needed and the
// CPU architecture is unknown or not one NCCL knows, or a bridge on a device's path has no
// class (FailedPrecondition); a value NCCL's parser cannot read back unchanged (a '"', '<',
// '&' or control character: it decodes no XML escapes), or more elements than NCCL loads
// (InvalidArgument).
Result<std::string> FormatNcclXml(const hostfacts::HostSnapshot& snap);

}  // namespace hcashare::topo
