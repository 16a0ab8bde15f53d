// Discovery: the RDMA-capable PCI functions, scalable functions and virtual RDMA devices
// (Soft-RoCE `rxe`, `siw`) that can be offered, as a view of one host snapshot
// (hostfacts/): the snapshot is read once per scan, not once per resource, and Discover()
// itself reads nothing. Scan() is const and thread-compatible.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "common/host.h"
#include "hostfacts/facts.h"
#include "hostfacts/live.h"
#include "hostfacts/reader.h"

namespace hcashare::node {

// The global RDMA CM char device; required, and given to a container once.
using hostfacts::kRdmaCmPath;

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
  // Network functions and RDMA devices discovery does not offer, with the unmet
  // requirement (no RDMA device, not a network controller, no driver); by address.
  std::vector<Exclusion> not_offered;
  bool rdma_cm_present = false;
};

// The host device `fn` is (a PCI function, an auxiliary device or a virtual RDMA device):
// what the live query (hostfacts/live.h) is asked about.
hostfacts::DeviceRef DeviceOf(const PciFunction& fn);

// Fills `f`'s PCI identity (class, vendor, device, NUMA node) from `pci`. False when `pci`
// has no class or is not a network controller (class 0x02xxxx).
bool DescribePciIdentity(const hostfacts::PciFunction& pci, PciFunction* f);

// Fills `f`'s place in SR-IOV from `pci`: a VF's PF, index and PF netdevs (read in `snap`),
// or a PF's VF count, its own netdevs (`f->netdevs`, set before) being the PF's.
void DescribeSriov(const hostfacts::PciFunction& pci, const hostfacts::HostSnapshot& snap,
                   PciFunction* f);

// Discovery's view of a host snapshot: the usable functions, the RDMA functions that cannot
// be offered (`excluded`), and why every other network function is not offered
// (`not_offered`). Never reads the host.
Inventory Discover(const hostfacts::HostSnapshot& snap);

// Scans a host through `host`, which must outlive the Discoverer.
class Discoverer {
 public:
  explicit Discoverer(const Host& host) : host_(host) {}

  // Reads a host snapshot (hostfacts::ReadHostSnapshot) and discovers from it. Never fails:
  // unreadable entries count as unknown. With `snapshot`, the snapshot read is kept there
  // (the DRA renderer's other input).
  Inventory Scan(hostfacts::HostSnapshot* snapshot = nullptr) const;

  // Re-reads only the health inputs of `fn` (that its sysfs directory and char devices
  // exist, RDMA port states, netdev operstate): the cheap poll between scans, since sysfs
  // attributes cannot be watched and a device can vanish without a uevent.
  void RefreshHealth(PciFunction* fn) const;

 private:
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

}  // namespace hcashare::node
