// SimNode: builds a simulated host tree (sysfs + /dev) on disk, laid out as a real Linux
// kernel lays it out: device directories under /sys/devices/pci<dom>:<bus>/..., with the
// relative symlinks of /sys/bus/pci/devices, /sys/class/{net,infiniband,infiniband_verbs,
// infiniband_mad} and the driver links. Char devices under /dev/infiniband are plain files.
//
// Used by the tests, the benchmarks and `hcashare demo`. Not thread-safe.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "common/status.h"

namespace hcashare::fake {

// One PCI function to create.
struct SimPciFunction {
  std::string address;          // "0000:3b:00.0"
  std::string vendor = "15b3";  // 4 hex digits
  std::string device = "1017";
  std::string class_code = "0x020000";  // as in sysfs `class`
  int numa_node = 0;                    // -1 for "unknown"
  std::string driver = "mlx5_core";     // "" = unbound (no driver symlink)
  std::vector<std::string> netdevs;     // netdev names under net/
  std::string link_type = "ether";      // "ether" or "infiniband", for netdevs and RDMA ports
  std::string rdma_device;              // e.g. "mlx5_0"; "" = no RDMA
  int ports = 1;                        // RDMA ports (one umad/issm each)
  std::string fw_ver = "16.35.2000";    // the RDMA device's `fw_ver`; "" = not written
  std::string port_rate = "100 Gb/sec (4X EDR)";  // each port's `rate`; "" = not written
  bool with_umad = true;
  bool with_issm = true;
  bool with_uverbs = true;
  std::string physfn;                      // PF address when this is a VF
  std::string root_port = "0000:00:01.0";  // upstream bridge the function sits under
  // Address of a bridge added with AddPciBridge to sit under instead of `root_port`
  // ("" = use `root_port`). VFs always sit next to their PF.
  std::string parent_bridge;
  std::string local_cpulist;  // "" = "0-15" ("16-31" on NUMA node 1)
};

// A PCI-to-PCI bridge to create: a root port, or an upstream or downstream port of a PCIe
// switch (class 0x060400, bound to pcieport). Bridges give functions their place in the
// PCIe hierarchy: /sys/devices/<host_bridge>/<root port>/<upstream>/<downstream>/<fn>.
struct SimPciBridge {
  std::string address;      // "0000:16:00.0"
  std::string parent;       // address of the bridge above; "" = a root port
  std::string host_bridge;  // root ports only: the root complex, e.g. "pci0000:15";
                            // "" = "pci<domain>:00"
  int numa_node = 0;        // -1 for "unknown"
  std::string vendor = "8086";
  std::string device = "2030";
};

// One GID table entry of an RDMA port (sysfs ports/N/gids/I, gid_attrs/types/I and
// gid_attrs/ndevs/I).
struct SimGid {
  std::string gid;               // "fe80:0000:0000:0000:0a00:27ff:fe00:0001"
  std::string type = "RoCE v2";  // "IB/RoCE v1" or "RoCE v2"
  std::string ndev;              // netdev the GID belongs to ("" = none written)
};

// One scalable function (an auxiliary device such as "mlx5_core.sf.4") to create under
// an existing PCI function, laid out as mlx5 lays it out: the SF's own net/, infiniband/
// and infiniband_{verbs,mad}/ under /sys/devices/.../<pf>/<name>, linked from
// /sys/bus/auxiliary/devices/<name>.
struct SimSubFunction {
  std::string name;    // "mlx5_core.sf.4"
  std::string parent;  // PCI address of the PF it belongs to
  int sfnum = 0;       // the `sfnum` attribute
  std::string driver = "mlx5_core.sf";
  std::vector<std::string> netdevs;  // e.g. "enp59s0f0s4"
  std::string link_type = "ether";
  std::string rdma_device;                        // e.g. "mlx5_4"
  std::string fw_ver = "16.35.2000";              // the RDMA device's `fw_ver`
  std::string port_rate = "100 Gb/sec (4X EDR)";  // its port's `rate`
};

// A virtual RDMA device (Soft-RoCE `rxe`) to create, laid out as the kernel lays it out:
// /sys/devices/virtual/infiniband/<name> with a `parent` file naming its netdev, and its
// char devices under /sys/devices/virtual/infiniband_{verbs,mad}.
struct SimVirtualRdma {
  std::string name;    // "rxe0"
  std::string netdev;  // the netdev it runs on
  // The simulated function whose netdev it is (e.g. an SR-IOV VF); "" = a virtual netdev
  // (a veth), created under /sys/devices/virtual/net unless it exists.
  std::string netdev_owner;
  bool write_parent = true;                      // false: only the GID table names the netdev
  std::string port_rate = "10 Gb/sec (1X QDR)";  // its port's `rate`; rxe has no firmware
};

class SimNode {
 public:
  // Uses `root` (created if missing) as the host root. The basic directories are created
  // and /dev/infiniband/rdma_cm is present.
  explicit SimNode(std::string root);

  const std::string& root() const { return root_; }

  // An InfiniBand HCA function: class 0x020700, Mellanox 15b3:1017 on mlx5_core, one
  // port, IPoIB netdev `netdev` and RDMA device `rdma`.
  static SimPciFunction IbHca(const std::string& address, const std::string& netdev,
                              const std::string& rdma, int numa_node = 0);
  // A GPU function: class 0x030200 (3D controller), NVIDIA 10de:2330 on the nvidia driver,
  // without netdevs or RDMA.
  static SimPciFunction Gpu(const std::string& address, int numa_node = 0);
  // A RoCE VF of the PF at `physfn`: Mellanox 15b3:101e on mlx5_core, Ethernet netdev
  // `netdev` and RDMA device `rdma`.
  static SimPciFunction RoceVf(const std::string& address, const std::string& physfn,
                               const std::string& netdev, const std::string& rdma,
                               int numa_node = 0);

  // Creates a bridge under its parent bridge (already added) or, for a root port, under its
  // host bridge. InvalidArgument on a bad address, a duplicate or an unknown parent.
  Status AddPciBridge(const SimPciBridge& bridge);

  // Creates the function and everything it implies. InvalidArgument on a bad address or a
  // duplicate.
  Status AddPciFunction(const SimPciFunction& fn);
  // Creates a scalable function under its (already added) parent PF. Afterwards every
  // method taking an address also takes the SF's name.
  Status AddSubFunction(const SimSubFunction& sf);
  // Creates a virtual RDMA device. Afterwards RemovePciFunction, SetPortState and SetGid
  // take its name.
  Status AddVirtualRdma(const SimVirtualRdma& dev);
  // Hot-removes the function (or SF, or virtual RDMA device): its device directory, the bus link
  // and every class link and /dev node that pointed into it.
  Status RemovePciFunction(const std::string& address);
  // Simulates the function's RDMA device and netdevs moving into a pod's network namespace
  // (RDMA netns mode exclusive): they leave host sysfs, the PCI function stays.
  Status MoveRdmaToPod(const std::string& address);
  // Sets port `port` (1-based) of the function's RDMA device to `state`, e.g. "1: DOWN" or
  // "4: ACTIVE", as in sysfs `ports/N/state`.
  Status SetPortState(const std::string& address, int port, const std::string& state);
  // Sets the `operstate` of netdev `netdev` of the function ("up", "down", ...).
  Status SetOperState(const std::string& address, const std::string& netdev,
                      const std::string& state);
  // Creates or deletes /dev/infiniband/rdma_cm.
  Status SetRdmaCm(bool present);
  // Writes entry `index` of the GID table of port `port` (1-based) of the function's RDMA
  // device. NotFound when the function has no RDMA device.
  Status SetGid(const std::string& address, int port, int index, const SimGid& gid);

  // Writes the PCIe link attributes of a function or bridge (already added):
  // current_link_{speed,width} and max_link_{speed,width}, e.g. "16.0 GT/s PCIe", 16.
  Status SetPcieLink(const std::string& address, const std::string& speed, int width,
                     const std::string& max_speed, int max_width);
  // Puts a function (or bridge) in IOMMU group `group`, creating
  // /sys/kernel/iommu_groups/<group> with `type` ("identity", "DMA", "DMA-FQ") and the
  // device's `iommu_group` link.
  Status SetIommuGroup(const std::string& address, const std::string& group,
                       const std::string& type);
  // Creates /sys/class/iommu/<name> (a hardware IOMMU unit, e.g. "dmar0").
  Status AddIommuUnit(const std::string& name);
  // Creates /sys/module/<name>, as a loaded kernel module.
  Status AddKernelModule(const std::string& name);
  // The CPUs and GPUs of the node (testing/sim_node_platform.cc).
  // Writes the sysfs `config` of a function or bridge (already added): its config space as
  // a read of the file returns it (any bytes).
  Status SetPciConfig(const std::string& address, const std::string& bytes);
  // SetPciConfig with a PCIe switch port's config space: 4096 bytes whose extended
  // capability list holds AER, an ACS capability with Control register `acs_ctrl` unless it
  // is negative (e.g. 0x001d: SV, RR, CR, UF, as Linux sets them with the IOMMU on), and
  // Secondary PCIe. `unprivileged`: only the first 64 bytes, as a read without CAP_SYS_ADMIN.
  Status SetBridgeAcs(const std::string& address, int acs_ctrl, bool unprivileged = false);
  // Creates NUMA node `id`: /sys/devices/system/node/node<id>/{cpumap,cpulist}, e.g.
  // "00000000,0000ffff" and "0-15".
  Status AddNumaNode(int id, const std::string& cpumap, const std::string& cpulist);
  // Writes /proc/sys/kernel/arch and a /proc/cpuinfo of `cpus` x86 processor blocks with
  // `vendor_id`, `cpu family` and `model` (and a `model name`).
  Status SetCpu(const std::string& arch, const std::string& vendor, int family, int model,
                int cpus = 2);
  // Writes /proc/driver/nvidia/gpus/<address>/information as the NVIDIA driver does;
  // without the `GPU UUID` line when `uuid` is "".
  Status AddNvidiaGpuInfo(const std::string& address, const std::string& model,
                          const std::string& uuid, int minor);
  // Writes any file of the tree (e.g. /proc/cmdline, /proc/driver/nvidia/version).
  Status WriteHostFile(const std::string& host_path, const std::string& content) {
    return WriteFile(host_path, content);
  }

  // The demo node: four Mellanox HCAs that match the Mellanox example config
  // (ib0, ib1 on ConnectX-6; ib3, ib4 on a ConnectX-5 15b3:1017), a NIC without RDMA,
  // and a SATA controller, over two NUMA nodes.
  Status PopulateDemo();

 private:
  std::string Path(const std::string& host_path) const;
  Status Symlink(const std::string& link, const std::string& target);
  Status WriteFile(const std::string& host_path, const std::string& content);
  // Creates the netdevs and the RDMA device (with its ports and char devices) of the device
  // at `dir`, recording the class links and /dev nodes in `owned`. `fw_ver` and
  // `port_rate` ("" = not written) become the RDMA device's `fw_ver` and each port's `rate`.
  Status AddNetAndRdma(const std::string& dir, const std::vector<std::string>& netdevs,
                       const std::string& link_type, const std::string& rdma_device, int ports,
                       bool with_uverbs, bool with_umad, bool with_issm, const std::string& fw_ver,
                       const std::string& port_rate, std::vector<std::string>* owned);
  // The sysfs directory of the function's (first) RDMA device. NotFound when there is none.
  Result<std::string> RdmaDirOf(const std::string& address) const;
  // Writes the attributes every PCI function and bridge has (class, IDs, NUMA, CPUs) and
  // the /sys/bus/pci/devices and driver links.
  Status AddPciCommon(const std::string& dir, const std::string& address,
                      const std::string& class_code, const std::string& vendor,
                      const std::string& device, int numa_node, const std::string& cpulist,
                      const std::string& driver);
  Status AddCharDev(const std::string& dev_dir, const std::string& cls, const std::string& prefix,
                    int* counter, const std::string& ibdev, int port,
                    std::vector<std::string>* owned);

  std::string root_;
  int uverbs_next_ = 0;
  int umad_next_ = 0;
  // address -> host paths (class links and /dev nodes) created for it.
  std::map<std::string, std::vector<std::string>> owned_;
  std::map<std::string, std::string> device_dirs_;  // address -> /sys/devices/... dir
  std::map<std::string, std::string> bus_links_;    // address or SF name -> /sys/bus/... link
};

}  // namespace hcashare::fake
