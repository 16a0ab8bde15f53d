// Live facts: the few host facts that change between snapshots (sysfs attributes cannot be
// watched), asked about identities a HostSnapshot holds. The device plugin's health poll,
// Allocate's device-node check, the CNI's VF rebind and its wait for a netdev ask here;
// hostfacts/ builds every sysfs path, so no view does.
#pragma once

#include <string>
#include <vector>

#include "common/host.h"
#include "common/status.h"
#include "common/unique_fd.h"

namespace hcashare::hostfacts {

// Which directory a device identity lives in.
enum class DeviceBus {
  kPci,          // a PCI function, "0000:3b:00.0" (/sys/bus/pci/devices)
  kAux,          // an auxiliary device, "mlx5_core.sf.4" (/sys/bus/auxiliary/devices)
  kVirtualRdma,  // a virtual RDMA device, "rxe0" (/sys/class/infiniband)
};

// One device, by the identity a snapshot gives it.
struct DeviceRef {
  std::string id;
  DeviceBus bus = DeviceBus::kPci;
};

// PCI function `id`, or auxiliary device `id` when `aux`.
inline DeviceRef PciOrAux(const std::string& id, bool aux) {
  return {id, aux ? DeviceBus::kAux : DeviceBus::kPci};
}

// The sysfs directory of `dev` ("/sys/bus/pci/devices/0000:3b:00.0"): what messages name.
std::string DeviceDir(const DeviceRef& dev);
// The directory that lists the devices of `bus` ("/sys/bus/pci/devices"): what messages name.
std::string BusDir(DeviceBus bus);
// The host path of drivers/<driver>/<control> of the PCI bus
// ("/sys/bus/pci/drivers/mlx5_core/bind"): what messages name (LiveFacts::OpenDriverControl).
std::string DriverControlPath(const std::string& driver, const std::string& control);
// The part of a resolved PCI sysfs path below /sys/devices ("pci0000:3a/0000:3a:00.0/..."):
// the PCIe hierarchy it names. "" when `sysfs_path` is not under /sys/devices.
std::string PathBelowSysDevices(const std::string& sysfs_path);

// The live query. Holds `host` by reference; cheap to make for each use.
class LiveFacts {
 public:
  explicit LiveFacts(const Host& host) : host_(host) {}

  // True when `dev`'s sysfs directory exists.
  bool DevicePresent(const DeviceRef& dev) const;
  // True when the char device `dev_path` ("/dev/infiniband/uverbs0") exists.
  bool CharDevicePresent(const std::string& dev_path) const;
  // The `state` of port `port` of RDMA device `rdma` of `dev` ("4: ACTIVE"); "" when
  // unreadable. For a virtual RDMA device `rdma` is the device itself.
  std::string PortState(const DeviceRef& dev, const std::string& rdma,
                        const std::string& port) const;
  // The `operstate` of netdev `netdev` of `dev` ("up"); "" when unreadable. For a virtual
  // RDMA device, the netdev is looked up by name (/sys/class/net).
  std::string OperState(const DeviceRef& dev, const std::string& netdev) const;
  // The netdev names of `dev` (a PCI function or an auxiliary device), sorted: what the
  // CNI waits for when a VF's netdev returns to the host after DEL.
  std::vector<std::string> Netdevs(const DeviceRef& dev) const;
  // The driver PCI function `pci` is bound to, as its `driver` link names it; "" when
  // none. InvalidArgument when `pci` is not a PCI address or the name is not a plain
  // driver name (IsPlainDriverName).
  Result<std::string> BoundDriver(const std::string& pci) const;
  // Opens drivers/<driver>/<control> of the PCI bus ("bind", "unbind") for writing, below
  // the host root with no symlink followed on any component (common/safe_file.h
  // OpenBeneath): a tree that redirects `drivers`, a driver's directory or the file gets
  // no fd. InvalidArgument when `driver` is not a plain driver name or `control` is neither.
  Result<UniqueFd> OpenDriverControl(const std::string& driver, const std::string& control) const;

 private:
  const Host& host_;
};

// True when `name` can name a driver directory: not empty, no '/', not "." or "..".
bool IsPlainDriverName(const std::string& name);
// True for a PCI address as bind/unbind take it ("0000:7e:00.1"): hex digits, ':' and '.'
// only, nothing that could be read as another request.
bool IsPciAddress(const std::string& pci);

}  // namespace hcashare::hostfacts
