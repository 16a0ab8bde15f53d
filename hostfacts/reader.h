// Reading a HostSnapshot: the one place that walks sysfs, /dev/infiniband and the route
// tables, all through the Host seam (hostfacts/attrs.h parses each value).
//
// /sys/bus/pci/devices is walked once per read. Every function's `infiniband/` and `class`
// are read; the details only for network and display controllers and RDMA-bearing
// functions, so the many bridges and storage functions of a node cost two reads each (one,
// in the device plugin's scan: ReadOptions::all_functions). A full read also reads every
// PCI-to-PCI bridge in detail with its ACS control register, the CPUs and the NVIDIA GPUs.
// Unreadable entries are recorded as unknown (see facts.h), never as errors.
#pragma once

#include <string>
#include <vector>

#include "common/host.h"
#include "hostfacts/facts.h"

namespace hcashare::hostfacts {

// The RDMA CM char device.
inline constexpr const char* kRdmaCmPath = "/dev/infiniband/rdma_cm";

// What a read includes.
struct ReadOptions {
  // Every function's class, and the details of every network and display controller with
  // their PCIe links, sysfs paths and CPU lists (topo, discover, snapshot). False: only
  // functions with an RDMA device are read beyond their address, with their sysfs path (the
  // DRA driver's pcieRoot) but without PCIe link or CPU list (the device plugin's scan and
  // the CNI, which need nothing else).
  bool all_functions = true;
  bool gid_tables = false;    // every port's GID table (up to 256 files per port)
  bool verbs_owners = false;  // /sys/class/infiniband_verbs/*/ibdev
};

// Reads the whole node.
HostSnapshot ReadHostSnapshot(const Host& host, const ReadOptions& opts = {});

// Reads only PCI functions `pci` and auxiliary devices `aux` (with details but no PCIe
// link, whatever their class), the PCI functions they hang off (a VF's PF, an SF's parent), their
// netdevs (with their uppers when the node has a default route) and RDMA devices, the
// virtual RDMA devices and the default-route netdevs: the CNI's view of one attachment. A
// device that does not exist is left out.
HostSnapshot ReadDevices(const Host& host, const std::vector<std::string>& pci,
                         const std::vector<std::string>& aux);

// The NVIDIA GPUs of /proc/driver/nvidia/gpus/*/information, by address (none without the
// driver). Each read briefly wakes the GPU: read once, do not poll.
std::vector<NvidiaGpu> ReadNvidiaGpus(const Host& host);

}  // namespace hcashare::hostfacts
