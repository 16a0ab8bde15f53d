// Endpoints: the GPUs and NICs of a host and where each sits in the PCIe hierarchy.
//
// A view of the host snapshot (hostfacts/), as NCCL's src/graph computes on its XML: the
// snapshot is read once, this picks the GPUs and NICs out of it, topo/graph.h computes
// paths on the result. Plain data, thread-compatible.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/host.h"
#include "common/status.h"
#include "hostfacts/facts.h"
#include "topo/link.h"

namespace hcashare::topo {

// What an endpoint of the matrix is.
enum class DeviceKind { kGpu, kNic };

// "gpu" or "nic".
const char* DeviceKindName(DeviceKind kind);

// One GPU or NIC PCI function.
struct PciEndpoint {
  std::string address;  // "0000:3b:00.0"
  DeviceKind kind = DeviceKind::kNic;
  uint32_t class_code = 0;  // 0x030200
  std::string vendor;       // "10de" (4 lower-case hex digits)
  int numa_node = -1;       // -1 = unknown
  std::string cpus;         // `local_cpulist`, "" = unknown
  // The root complex: the sysfs path below /sys/devices up to the host bridge, e.g.
  // "pci0000:3a" (longer behind a VMD or a hypervisor bus: "pci0000:00/0000:00:0e.5/pci10000:e0").
  std::string root_complex;
  std::vector<std::string> bridges;  // BDFs from the root port down to the device's parent
  std::vector<std::string> netdevs;  // NICs: netdev names, sorted
  std::vector<std::string> rdma;     // NICs: RDMA device names, sorted
  std::string physfn;                // VFs: the PF's address; "" otherwise
  PcieLink link;                     // its PCIe link as trained (unknown for VFs)
};

// A virtual RDMA device (Soft-RoCE rxe, siw): not on PCI, so it has no PCIe distance.
struct VirtualRdmaEndpoint {
  std::string name;    // "rxe0"
  std::string netdev;  // the netdev it runs on; "" when sysfs names none
  std::string pci;     // the PCI function of that netdev (e.g. an SR-IOV VF); "" for a veth
};

// Every GPU and NIC of a host.
struct Endpoints {
  std::vector<PciEndpoint> devices;               // GPUs by address, then NICs by address
  std::vector<VirtualRdmaEndpoint> virtual_rdma;  // by name
  // Every PCI-to-PCI bridge's ACS Control register (hostfacts::PciFunction::acs_ctrl).
  std::map<std::string, int> bridge_acs;
};

// The kind of a PCI function from its class code and vendor: a GPU for class 0x0300 (VGA)
// or 0x0302 (3D), of any vendor except BMC display controllers (ASPEED, Matrox VGA); a NIC
// for class 0x02xx. nullopt for everything else.
std::optional<DeviceKind> KindOfClass(uint32_t class_code, const std::string& vendor);

// True for "DDDD:BB:DD.F" (lower-case hex; the domain may be longer, as behind a VMD).
bool IsBdf(const std::string& s);

// Every GPU and NIC of `snap`, and its virtual RDMA devices. Functions whose class or sysfs
// path is unknown are skipped (logged at debug). NotFound when the snapshot could not list
// /sys/bus/pci/devices.
Result<Endpoints> EndpointsOf(const hostfacts::HostSnapshot& snap);

// EndpointsOf a snapshot read from `host` now.
Result<Endpoints> ReadEndpoints(const Host& host);

}  // namespace hcashare::topo
