// Virtual RDMA devices (Soft-RoCE `rxe`, soft-iWARP `siw`): RDMA devices with no parent
// device. sysfs puts them under /sys/devices/virtual/infiniband; their netdev is named only
// by their `parent` attribute and their GID table. Read through the Host seam.
#pragma once

#include <string>
#include <vector>

#include "common/host.h"

namespace hcashare {

// The RDMA device class directory.
inline constexpr const char* kRdmaClassDir = "/sys/class/infiniband";

// One virtual RDMA device and the netdev it runs on.
struct VirtualRdmaDevice {
  std::string name;    // "rxe0"
  std::string netdev;  // "eth4"; "" when sysfs names none
};

// True when a class link target (e.g. "../../devices/virtual/infiniband/rxe0") lies under
// /sys/devices/virtual, i.e. the device has no parent device.
bool IsVirtualDeviceTarget(const std::string& link_target);

// The netdev of the virtual RDMA device at sysfs dir `dir`: its `parent`, else the first
// netdev its GID table names; "" when neither does.
std::string VirtualRdmaNetdev(const Host& host, const std::string& dir);

// The virtual RDMA devices in /sys/class/infiniband, sorted by name (none when the class
// is missing).
std::vector<VirtualRdmaDevice> ListVirtualRdmaDevices(const Host& host);

}  // namespace hcashare
