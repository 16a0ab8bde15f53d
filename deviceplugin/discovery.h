// Discovery: one pass over the host's sysfs that yields the RDMA-capable PCI functions.
//
// /sys/bus/pci/devices is walked once per scan (not once per resource); a function's char
// devices are found under its own device directory. Every read goes
// through the Host seam. Scan() is const and thread-compatible.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "common/host.h"

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

// A usable RDMA PCI function, or scalable function (SF): bound to a driver, with an RDMA
// device and every required char device present. An SF is an auxiliary device under a PF
// (e.g. "mlx5_core.sf.4"); it has the PF's vendor, device, class and NUMA node.
struct PciFunction {
  std::string address;                  // "0000:3b:00.0", or the SF's auxiliary device name
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
  std::string pf_address;               // for VFs and SFs
  int vf_index = -1;                    // N of the PF's virtfnN link, for VFs
  std::vector<std::string> pf_netdevs;  // netdevs of the PF (of itself for a PF)
  // Health: every RDMA port ACTIVE and no netdev down. The reason names what is not.
  bool healthy = true;
  std::string health_reason;

  bool operator==(const PciFunction& o) const;
};

// An RDMA function that cannot be offered, and why.
struct Exclusion {
  std::string address;
  std::string reason;
};

// The result of one scan.
struct Inventory {
  std::vector<PciFunction> functions;  // sorted by address
  // Every PCI address listed in /sys/bus/pci/devices and every auxiliary device name,
  // usable or not. An exclusive device whose RDMA device moved into a pod is still here.
  std::set<std::string> present;
  std::vector<Exclusion> excluded;  // sorted by address
  bool rdma_cm_present = false;
};

// The sysfs directory of `fn` (under /sys/bus/pci/devices or /sys/bus/auxiliary/devices).
std::string SysfsDirOf(const PciFunction& fn);

// Scans a host through `host`, which must outlive the Discoverer.
class Discoverer {
 public:
  explicit Discoverer(const Host& host) : host_(host) {}

  // Walks sysfs once. Never fails: unreadable entries are skipped (logged at debug).
  Inventory Scan() const;

  // Re-reads only the health inputs (RDMA port states, netdev operstate) of `fn`: the
  // cheap poll between scans, since sysfs attributes cannot be watched.
  void RefreshHealth(PciFunction* fn) const;

 private:
  // RDMA device name -> char device host paths, for the function at sysfs dir `dir`.
  std::map<std::string, std::vector<std::string>> CharDevicesOf(
      const std::string& dir, const std::vector<std::string>& rdma_names) const;
  // Reads the device `id` at sysfs directory `dir` (`aux`: an auxiliary device whose PCI
  // details come from its parent function). False when it is not offered; `excluded` is
  // filled when it is RDMA-capable but unusable.
  bool ReadFunction(const std::string& id, const std::string& dir, bool aux, bool rdma_cm,
                    PciFunction* out, Exclusion* excluded) const;
  // Fills the PCI identity (class, vendor, device, NUMA node) of `f` from the PCI function
  // at `pci_dir`. False when it has no class or is not a network controller.
  bool ReadPciIdentity(const std::string& pci_dir, PciFunction* f) const;
  // The N of `pf`'s virtfnN link that points at `vf`, or -1.
  int VfIndex(const std::string& pf, const std::string& vf) const;
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
