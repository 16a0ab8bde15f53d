#include "hostfacts/live.h"

#include <fcntl.h>

#include <cctype>

#include "common/safe_file.h"
#include "hostfacts/platform.h"

namespace hcashare::hostfacts {
namespace {

constexpr const char* kSysDevices = "/sys/devices/";
constexpr const char* kPciDrivers = "/sys/bus/pci/drivers/";

// The sysfs directory of RDMA device `rdma` of `dev`.
std::string RdmaDir(const DeviceRef& dev, const std::string& rdma) {
  return dev.bus == DeviceBus::kVirtualRdma ? BusDir(dev.bus) + "/" + rdma
                                            : DeviceDir(dev) + "/infiniband/" + rdma;
}

// The sysfs directory of netdev `netdev` of `dev`.
std::string NetdevDir(const DeviceRef& dev, const std::string& netdev) {
  return dev.bus == DeviceBus::kVirtualRdma ? "/sys/class/net/" + netdev
                                            : DeviceDir(dev) + "/net/" + netdev;
}

}  // namespace

std::string BusDir(DeviceBus bus) {
  switch (bus) {
    case DeviceBus::kAux:
      return "/sys/bus/auxiliary/devices";
    case DeviceBus::kVirtualRdma:
      return "/sys/class/infiniband";
    case DeviceBus::kPci:
      break;
  }
  return "/sys/bus/pci/devices";
}

std::string DeviceDir(const DeviceRef& dev) { return BusDir(dev.bus) + "/" + dev.id; }

std::string DriverControlPath(const std::string& driver, const std::string& control) {
  return kPciDrivers + driver + "/" + control;
}

std::string PathBelowSysDevices(const std::string& sysfs_path) {
  if (sysfs_path.rfind(kSysDevices, 0) != 0) return "";
  return sysfs_path.substr(std::string(kSysDevices).size());
}

bool LiveFacts::DevicePresent(const DeviceRef& dev) const { return host_.Exists(DeviceDir(dev)); }

bool LiveFacts::CharDevicePresent(const std::string& dev_path) const {
  return host_.Exists(dev_path);
}

std::string LiveFacts::PortState(const DeviceRef& dev, const std::string& rdma,
                                 const std::string& port) const {
  return PortStateAt(host_, RdmaDir(dev, rdma) + "/ports/" + port);
}

std::string LiveFacts::OperState(const DeviceRef& dev, const std::string& netdev) const {
  return OperStateAt(host_, NetdevDir(dev, netdev));
}

std::vector<std::string> LiveFacts::Netdevs(const DeviceRef& dev) const {
  return List(host_, DeviceDir(dev) + "/net");
}

Result<std::string> LiveFacts::BoundDriver(const std::string& pci) const {
  if (!IsPciAddress(pci)) return Status::InvalidArgument("not a PCI address: " + pci);
  auto link = host_.ReadLink(DeviceDir({pci, DeviceBus::kPci}) + "/driver");
  if (!link.ok()) {
    if (link.status().IsNotFound()) return std::string();
    return link.status();
  }
  std::string name = BaseName(*link);
  if (!IsPlainDriverName(name)) {
    return Status::InvalidArgument("the driver link of " + pci + " names \"" + name +
                                   "\", not a driver");
  }
  return name;
}

Result<UniqueFd> LiveFacts::OpenDriverControl(const std::string& driver,
                                              const std::string& control) const {
  if (!IsPlainDriverName(driver)) {
    return Status::InvalidArgument("not a driver name: \"" + driver + "\"");
  }
  if (control != "bind" && control != "unbind") {
    return Status::InvalidArgument("not a driver control file: \"" + control + "\"");
  }
  const std::string path = DriverControlPath(driver, control);
  // Confined below the host root: a symlink on any component of sys/bus/pci/drivers/...
  // (the last one included) is refused, not followed.
  return OpenBeneath(host_.Resolve("/"), path.substr(1), O_WRONLY);
}

bool IsPlainDriverName(const std::string& name) {
  return !name.empty() && name != "." && name != ".." && name.find('/') == std::string::npos;
}

bool IsPciAddress(const std::string& pci) {
  if (pci.empty() || pci.size() > 32) return false;
  for (char c : pci) {
    if (!std::isxdigit(static_cast<unsigned char>(c)) && c != ':' && c != '.') return false;
  }
  return true;
}

}  // namespace hcashare::hostfacts
