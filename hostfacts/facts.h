// HostSnapshot: everything hcashare knows about a node's RDMA hardware, read once.
//
// The intermediate of the host model, as NCCL's src/graph keeps its XML: hostfacts/reader.h
// fills it from sysfs, /dev and /proc through the Host seam, hostfacts/snapshot_json.h dumps
// and loads it, and every other part (device-plugin discovery, the CNI's VF resolution,
// topo, doctor, discover) is a view computed from it. The fields hold sysfs facts, parsed
// once, with no policy: what is usable or healthy is decided by the views.
// Plain data, thread-compatible.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace hcashare::hostfacts {

// The version of the snapshot's JSON form. Loading refuses any other.
inline constexpr int kSnapshotVersion = 1;

// One used entry of a port's GID table (ports/N/gids/I, gid_attrs/{types,ndevs}/I).
struct Gid {
  int index = 0;
  std::string gid;   // "0000:0000:0000:0000:0000:ffff:0a00:0001"
  std::string type;  // "RoCE v2", "IB/RoCE v1"
  std::string ndev;  // "" when unreadable
  bool operator==(const Gid& o) const;
};

// One port of an RDMA device (ports/N).
struct RdmaPort {
  std::string number;      // "1"
  std::string link_layer;  // "InfiniBand", "Ethernet"; "" when unreadable
  std::string state;       // "4: ACTIVE"; "" when unreadable
  std::string rate;        // "100 Gb/sec (4X EDR)"; "" when unreadable
  int rate_gbps = -1;      // the whole Gb/s of `rate` (100; 2 for "2.5 Gb/sec"); -1 unknown
  std::vector<Gid> gids;   // only when the snapshot was read with gid tables
  bool operator==(const RdmaPort& o) const;
};

// One RDMA device (mlx5_0, rxe0).
struct RdmaDevice {
  std::string name;
  std::string sysfs_dir;    // where it was read: <function>/infiniband/<name> or the class dir
  std::string parent;       // the PCI function or auxiliary device it belongs to; "" otherwise
  bool is_virtual = false;  // under /sys/devices/virtual (rxe, siw): no parent device
  std::string netdev;       // virtual devices: `parent`, else the first GID table netdev
  std::string fw_ver;       // `fw_ver` ("16.35.2000"); "" when unreadable
  // Its uverbs/umad/issm class devices as /dev paths, sorted; listed by sysfs, so a node
  // may still be missing from /dev (see HostSnapshot::dev_infiniband).
  std::vector<std::string> char_devices;
  std::vector<RdmaPort> ports;  // by directory name
  bool operator==(const RdmaDevice& o) const;
};

// One network interface of the host namespace.
struct Netdev {
  std::string name;
  std::string sysfs_dir;            // <function>/net/<name> or /sys/class/net/<name>
  std::string arp_type;             // `type` (ARPHRD: "1" Ethernet, "32" InfiniBand); "" unreadable
  std::string operstate;            // "up", "down", ...; "" unreadable
  std::string device;               // the PCI address (or auxiliary name) of its device; "" none
  std::vector<std::string> uppers;  // upper devices (`upper_*` links): bond, VLAN, macvlan
  bool operator==(const Netdev& o) const;
};

// One PCI function of /sys/bus/pci/devices. Only `address`, `class_code` and
// `rdma_devices` are read for every function; the rest (`details`) for network and display
// controllers and for any function with an RDMA device.
struct PciFunction {
  std::string address;      // "0000:3b:00.0"
  int32_t class_code = -1;  // 0x020700; -1 when `class` is missing or not a 24-bit hex value
  std::vector<std::string> rdma_devices;  // names under infiniband/, sorted
  bool details = false;
  std::string sysfs_path;     // resolved, e.g. "/sys/devices/pci0000:3a/0000:3a:00.0/0000:3b:00.0"
  std::string vendor;         // 4 lower-case hex digits; "" when unreadable
  std::string device;         // same
  std::string driver;         // bound driver; "" when unbound
  int numa_node = -1;         // -1 when the kernel reports none or the file is bad
  std::string local_cpulist;  // "" when unreadable
  std::string physfn;         // VFs: the PF's address
  std::map<int, std::string> virtfns;  // PFs: virtfnN link -> VF address
  int sriov_numvfs = -1;               // -1 when absent or malformed
  int sriov_totalvfs = -1;
  std::string current_link_speed;  // "16.0 GT/s PCIe"; "" when unreadable
  std::string max_link_speed;
  int current_link_width = -1;  // lanes; -1 when unreadable
  int max_link_width = -1;
  // The max_link_* of the port above it (its parent bridge in sysfs_path): the attainable
  // link is the lower of both ends. "" / -1 when unreadable (e.g. under a host bridge).
  std::string upstream_max_link_speed;
  int upstream_max_link_width = -1;
  std::string iommu_group;           // `iommu_group` link name ("17"); "" when none
  std::vector<std::string> netdevs;  // names under net/, sorted
  // PCI-to-PCI bridges (class 0x0604xx), full read only: the ACS Control register (extended
  // capability 0x000D, at cap+6) from `config`. kAcsUnread when the extended config space
  // could not be read (without CAP_SYS_ADMIN only its first 64 bytes are), kAcsAbsent when
  // it was read and has no ACS capability.
  int acs_ctrl = -1;
  bool operator==(const PciFunction& o) const;
};

// PciFunction::acs_ctrl when the extended config space was not readable, or not read.
inline constexpr int kAcsUnread = -1;
// PciFunction::acs_ctrl when the extended capability list has no ACS capability.
inline constexpr int kAcsAbsent = -2;

// One NUMA node of /sys/devices/system/node/node<N> (full read).
struct NumaNode {
  int id = -1;
  std::string cpumap;   // `cpumap` ("00000000,0000ffff"): NCCL's cpu `affinity`
  std::string cpulist;  // `cpulist` ("0-15")
  bool operator==(const NumaNode& o) const;
};

// One NVIDIA GPU of /proc/driver/nvidia/gpus/<address>/information (full read).
struct NvidiaGpu {
  std::string address;  // the directory name, "0000:18:00.0"
  std::string uuid;     // `GPU UUID` ("GPU-8c3d..."); "" when the line is absent
  std::string model;    // `Model`
  int minor = -1;       // `Device Minor`: N of /dev/nvidiaN; -1 when absent
  bool operator==(const NvidiaGpu& o) const;
};

// One auxiliary device (a scalable function such as "mlx5_core.sf.4").
struct AuxDevice {
  std::string name;
  std::string parent;                     // the PCI function its directory sits in; "" when unknown
  std::string driver;                     // "" when unbound
  int sf_num = -1;                        // `sfnum`; -1 when absent or malformed
  std::vector<std::string> netdevs;       // sorted
  std::vector<std::string> rdma_devices;  // sorted
  bool operator==(const AuxDevice& o) const;
};

// The node.
struct HostSnapshot {
  int version = kSnapshotVersion;
  bool pci_listed = false;       // /sys/bus/pci/devices could be listed
  bool gid_tables = false;       // the ports' GID tables were read
  std::vector<PciFunction> pci;  // every entry of /sys/bus/pci/devices, by address
  std::vector<AuxDevice> aux;    // every entry of /sys/bus/auxiliary/devices, by name
  std::vector<RdmaDevice> rdma;  // of functions, virtual ones, the rest of the class; by name
  std::vector<Netdev> netdevs;   // of functions, of virtual RDMA devices, their uppers; by name
  std::vector<std::string> rdma_class;              // the names in /sys/class/infiniband
  std::map<std::string, std::string> verbs_owners;  // uverbsN -> RDMA device (class `ibdev`)
  std::vector<std::string> dev_infiniband;          // the names in /dev/infiniband
  bool rdma_cm_present = false;                     // /dev/infiniband/rdma_cm exists
  std::vector<std::string> default_route_netdevs;   // netdevs with an up default route
  std::string rdma_netns_mode;   // "shared" / "exclusive"; "" when not read (netlink)
  std::string rdma_netns_error;  // why it could not be read; "" otherwise
  // GPUDirect RDMA and IOMMU facts (read with ReadOptions::all_functions).
  bool sys_module_listed = false;            // /sys/module could be listed
  std::vector<std::string> peermem_modules;  // of nvidia_peermem, nv_peer_mem: in /sys/module
  std::vector<std::string> memory_peers;     // /sys/kernel/mm/memory_peers/*/version, by name
  std::string nvidia_version;  // line 1 of /proc/driver/nvidia/version; "" when absent
  std::string kernel_release;  // /proc/sys/kernel/osrelease ("6.1.0-18-amd64"); "" unreadable
  std::vector<std::string> iommu_units;  // the names in /sys/class/iommu ("dmar0")
  // /sys/kernel/iommu_groups/<group>/type of the groups of the functions read in detail.
  std::map<std::string, std::string> iommu_group_types;
  std::vector<std::string> iommu_cmdline;  // the IOMMU parameters of /proc/cmdline, in order
  // CPUs and GPUs (full read): what an NCCL topology file describes.
  std::vector<NumaNode> numa_nodes;  // by id
  std::string cpu_arch;    // /proc/sys/kernel/arch, else the CPU modalias ("x86_64"); "" unknown
  std::string cpu_vendor;  // /proc/cpuinfo `vendor_id` of the first CPU; "" none
  int cpu_family = -1;     // `cpu family` (extended family included); -1 none
  int cpu_model = -1;      // `model` (extended model included); -1 none
  std::vector<NvidiaGpu> nvidia_gpus;  // by address
  // The container runtime's config (full read; hostfacts/container_runtime.h): whether a
  // container gets CDI devices, which a DRA claim's devices need.
  bool containerd_config_present = false;  // /etc/containerd/config.toml exists
  int containerd_config_version = -1;      // its top-level `version`; -1 unset
  std::string containerd_enable_cdi;       // its CRI plugin's enable_cdi: "true", "false", ""
  bool containerd_config_imports = false;  // it imports other files (not read)
  bool crio_config_present = false;        // /etc/crio/crio.conf or crio.conf.d exists

  // Lookups by key (binary search; the vectors are sorted). nullptr when absent.
  const PciFunction* FindPci(const std::string& address) const;
  const AuxDevice* FindAux(const std::string& name) const;
  const RdmaDevice* FindRdma(const std::string& name) const;
  const Netdev* FindNetdev(const std::string& name) const;
  // The NVIDIA GPU whose `uuid` is `uuid` ("GPU-...", compared case-insensitively; a linear
  // scan, GPUs are few); nullptr when absent or `uuid` is "".
  const NvidiaGpu* FindGpuByUuid(const std::string& uuid) const;
  bool operator==(const HostSnapshot& o) const;
};

}  // namespace hcashare::hostfacts
