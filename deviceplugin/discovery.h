// Discovery: one pass over the host's sysfs that yields the RDMA-capable PCI functions,
// scalable functions and virtual RDMA devices (Soft-RoCE `rxe`, `siw`).
//
// /sys/bus/pci/devices is walked once per scan (not once per resource); a function's char
// devices are found under its own device directory. Virtual RDMA devices have no PCI
// parent: they are found under /sys/class/infiniband, their netdev through `parent` or the
// GID table, and their char devices through the `ibdev` of the class devices. Every read
// goes through the Host seam. Scan() is const and thread-compatible.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "common/host.h"
#include "common/virtual_rdma.h"

namespace hcashare::dp {

// The global RDMA CM char device; required, and given to a container once.
inline constexpr const char* kRdmaCmPath = "/dev/infiniband/rdma_cm";

// One RDMA device (e.g. mlx5_0) and the char devices that belong to it.
struct RdmaDeviceInfo {
  std::string name;
  std::vector<std::string> char_devices;  // host paths: uverbsN, umadN, issmN (sorted)
  std::vector<std::string> link_layers;   // per port: "ether" / "infiniband"
  std::vector<std::string> ports;         // port directory names ("1", "2")
  bool operator==(const RdmaDeviceInfo& o) const {
    return name == o.name && char_devices == o.char_devices && link_layers == o.link_layers &&
           ports == o.ports;
  }
};

// A usable RDMA PCI function, scalable function (SF) or virtual RDMA device: with an RDMA
// device and every required char device present (a PCI function or SF also bound to a
// driver). An SF is an auxiliary device under a PF (e.g. "mlx5_core.sf.4"); it has the
// PF's vendor, device, class and NUMA node. A virtual device (e.g. "rxe0") has no PCI
// identity: vendor, device, driver and class are empty, its NUMA node is its netdev's.
struct PciFunction {
  std::string address;                  // "0000:3b:00.0", the SF's auxiliary device name, or "rxe0"
  std::string vendor;                   // "15b3"
  std::string device;                   // "1017"
  uint32_t class_code = 0;              // 0x020700
  int numa_node = -1;                   // -1 = unknown
  std::string driver;                   // "mlx5_core"
  std::vector<std::string> netdevs;     // all names under net/, sorted
  std::vector<std::string> link_types;  // distinct, from netdev `type` and RDMA link_layer
  std::vector<RdmaDeviceInfo> rdma;     // usually one
  bool is_vf = false;
  bool is_sf = false;                   // an auxiliary device (scalable function)
  int sf_num = -1;                      // `sfnum` of an SF, -1 if unknown
  bool is_virtual = false;              // a virtual RDMA device (rxe, siw): not on PCI
  std::string pf_address;               // for VFs and SFs
  int vf_index = -1;                    // N of the PF's virtfnN link, for VFs
  std::vector<std::string> pf_netdevs;  // netdevs of the PF (of itself for a PF)
  int num_vfs = 0;                      // a PF's enabled VFs (`sriov_numvfs`)
  bool host_uplink = false;             // a netdev carries the host's default route
  // Health: the function and its char devices exist, and its port is up: for a PF or a
  // virtual device every RDMA port ACTIVE and no netdev down; for an Ethernet VF or SF its
  // PF's netdevs not down (its own admin state is the CNI's business); for an InfiniBand
  // VF its own RDMA ports ACTIVE. The reason names what is not.
  bool healthy = true;
  std::string health_reason;
  bool gone = false;  // the function or a char device vanished since the scan

  bool operator==(const PciFunction& o) const;
};

// An RDMA function that cannot be offered, and why.
struct Exclusion {
  std::string address;
  std::string reason;
  bool operator==(const Exclusion& o) const { return address == o.address && reason == o.reason; }
};

// The result of one scan.
struct Inventory {
  std::vector<PciFunction> functions;  // sorted by address
  // Every PCI address listed in /sys/bus/pci/devices, every auxiliary device name and
  // every virtual RDMA device name, usable or not. An exclusive device whose RDMA device moved into
  // a pod is still here.
  std::set<std::string> present;
  std::vector<Exclusion> excluded;  // sorted by address
  bool rdma_cm_present = false;
};

// The sysfs directory of `fn` (under /sys/bus/pci/devices or /sys/bus/auxiliary/devices;
// /sys/class/infiniband/<name> for a virtual RDMA device).
std::string SysfsDirOf(const PciFunction& fn);

// The sysfs directory of RDMA device `rdma` of `fn`.
std::string RdmaSysfsDir(const PciFunction& fn, const std::string& rdma);

// The sysfs directory of netdev `netdev` of `fn`.
std::string NetdevSysfsDir(const PciFunction& fn, const std::string& netdev);

// Scans a host through `host`, which must outlive the Discoverer.
class Discoverer {
 public:
  explicit Discoverer(const Host& host) : host_(host) {}

  // Walks sysfs once. Never fails: unreadable entries are skipped (logged at debug).
  Inventory Scan() const;

  // Re-reads only the health inputs of `fn` (that its sysfs directory and char devices
  // exist, RDMA port states, netdev operstate): the cheap poll between scans, since sysfs
  // attributes cannot be watched and a device can vanish without a uevent.
  void RefreshHealth(PciFunction* fn) const;

 private:
  // RDMA device name -> char device host paths.
  using CharDevices = std::map<std::string, std::vector<std::string>>;

  // The char devices of the function at sysfs dir `dir` (RDMA devices `rdma_names`).
  CharDevices CharDevicesOf(const std::string& dir,
                            const std::vector<std::string>& rdma_names) const;
  // The char devices of virtual RDMA devices: the class devices under /sys/devices/virtual.
  CharDevices VirtualCharDevices() const;
  // Adds the virtual RDMA devices (those under /sys/devices/virtual/infiniband) to `inv`.
  void ScanVirtual(Inventory* inv) const;
  // Reads virtual RDMA device `dev`. False when it is not offered; `excluded` is filled
  // when it is unusable.
  bool ReadVirtual(const VirtualRdmaDevice& dev, const CharDevices& chardevs, bool rdma_cm,
                   PciFunction* out, Exclusion* excluded) const;
  // Fills f->rdma for RDMA devices `names` (sysfs dirs `<rdma_dir>/<name>`) with their
  // ports, link layers and present char devices, then reads health. False (and `excluded`
  // filled) when a required char device is missing.
  bool ReadRdmaDevices(const std::string& rdma_dir, const std::vector<std::string>& names,
                       const CharDevices& chardevs, bool rdma_cm, PciFunction* f,
                       Exclusion* excluded) const;
  // Reads the device `id` at sysfs directory `dir` (`aux`: an auxiliary device whose PCI
  // details come from its parent function). False when it is not offered; `excluded` is
  // filled when it is RDMA-capable but unusable.
  bool ReadFunction(const std::string& id, const std::string& dir, bool aux, bool rdma_cm,
                    PciFunction* out, Exclusion* excluded) const;
  // Fills the PCI identity (class, vendor, device, NUMA node) of `f` from the PCI function
  // at `pci_dir`. False when it has no class or is not a network controller.
  bool ReadPciIdentity(const std::string& pci_dir, PciFunction* f) const;
  std::vector<std::string> NetdevsOf(const std::string& dir) const;

  const Host& host_;
};

// Logs exclusions once per device per change (not once per scan): a new or changed reason
// is a warning, a device that became usable again is an info line.
class ExclusionReporter {
 public:
  // Compares with the previous call and logs the differences.
  void Report(const std::vector<Exclusion>& excluded);

 private:
  std::map<std::string, std::string> last_;
};

// Parses a sysfs hex value such as "0x15b3\n" into "15b3" (4 lower-case digits).
// Returns "" when it is not hex.
std::string ParseHexId(const std::string& s);

}  // namespace hcashare::dp
