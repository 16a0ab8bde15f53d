#include "testing/sim_node.h"

#include <filesystem>
#include <fstream>
#include <regex>

#include "common/host.h"

namespace fs = std::filesystem;

namespace hcashare::fake {
namespace {

bool ValidBdf(const std::string& a) {
  static const std::regex re("^[0-9a-f]{4}:[0-9a-f]{2}:[0-1][0-9a-f]\\.[0-7]$");
  return std::regex_match(a, re);
}

// "0000:3b:00.0" -> "pci0000:00" style host bridge name for the function's domain.
std::string HostBridge(const std::string& bdf) { return "pci" + bdf.substr(0, 4) + ":00"; }

// The link's target expressed relative to the link's directory, as sysfs does.
std::string Relative(const std::string& link, const std::string& target) {
  return fs::path(target).lexically_relative(fs::path(link).parent_path()).string();
}

}  // namespace

SimNode::SimNode(std::string root) : root_(std::move(root)) {
  std::error_code ec;
  for (const char* d :
       {"/sys/bus/pci/devices", "/sys/bus/pci/drivers", "/sys/bus/auxiliary/devices",
        "/sys/class/net", "/sys/class/infiniband", "/sys/class/infiniband_verbs",
        "/sys/class/infiniband_mad", "/dev/infiniband", "/proc"}) {
    fs::create_directories(Path(d), ec);
  }
  (void)SetRdmaCm(true);
  // A routing table without a default route: the simulated node has no uplink (and
  // discovery does not fall back to the routes of the machine running the simulation).
  (void)WriteFile(
      "/proc/net/route",
      "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT\n");
  (void)WriteFile("/proc/net/ipv6_route", "");
}

std::string SimNode::Path(const std::string& host_path) const { return JoinPath(root_, host_path); }

Status SimNode::Symlink(const std::string& link, const std::string& target) {
  std::error_code ec;
  fs::create_directories(fs::path(Path(link)).parent_path(), ec);
  fs::remove(Path(link), ec);
  fs::create_symlink(Relative(link, target), Path(link), ec);
  if (ec) return Status::IoError("symlink " + link + ": " + ec.message());
  return Status::Ok();
}

Status SimNode::WriteFile(const std::string& host_path, const std::string& content) {
  std::error_code ec;
  fs::create_directories(fs::path(Path(host_path)).parent_path(), ec);
  std::ofstream out(Path(host_path), std::ios::trunc);
  out << content;
  if (!out) return Status::IoError("write " + host_path);
  return Status::Ok();
}

Status SimNode::SetPcieLink(const std::string& address, const std::string& speed, int width,
                            const std::string& max_speed, int max_width) {
  auto it = device_dirs_.find(address);
  if (it == device_dirs_.end()) return Status::NotFound("no device " + address);
  RETURN_IF_ERROR(WriteFile(it->second + "/current_link_speed", speed + "\n"));
  RETURN_IF_ERROR(WriteFile(it->second + "/current_link_width", std::to_string(width) + "\n"));
  RETURN_IF_ERROR(WriteFile(it->second + "/max_link_speed", max_speed + "\n"));
  return WriteFile(it->second + "/max_link_width", std::to_string(max_width) + "\n");
}

Status SimNode::SetIommuGroup(const std::string& address, const std::string& group,
                              const std::string& type) {
  auto it = device_dirs_.find(address);
  if (it == device_dirs_.end()) return Status::NotFound("no device " + address);
  const std::string gdir = "/sys/kernel/iommu_groups/" + group;
  RETURN_IF_ERROR(WriteFile(gdir + "/type", type + "\n"));
  RETURN_IF_ERROR(Symlink(gdir + "/devices/" + address, it->second));
  return Symlink(it->second + "/iommu_group", gdir);
}

Status SimNode::AddIommuUnit(const std::string& name) {
  const std::string dir = "/sys/devices/virtual/iommu/" + name;
  RETURN_IF_ERROR(WriteFile(dir + "/uevent", ""));
  return Symlink("/sys/class/iommu/" + name, dir);
}

Status SimNode::AddKernelModule(const std::string& name) {
  return WriteFile("/sys/module/" + name + "/initstate", "live\n");
}

Status SimNode::SetRdmaCm(bool present) {
  if (present) return WriteFile("/dev/infiniband/rdma_cm", "");
  std::error_code ec;
  fs::remove(Path("/dev/infiniband/rdma_cm"), ec);
  return Status::Ok();
}

Status SimNode::AddCharDev(const std::string& dev_dir, const std::string& cls,
                           const std::string& prefix, int* counter, const std::string& ibdev,
                           int port, std::vector<std::string>* owned) {
  std::string name = prefix + std::to_string((*counter)++);
  std::string dir = dev_dir + "/" + cls + "/" + name;
  RETURN_IF_ERROR(WriteFile(dir + "/ibdev", ibdev + "\n"));
  if (port > 0) RETURN_IF_ERROR(WriteFile(dir + "/port", std::to_string(port) + "\n"));
  RETURN_IF_ERROR(WriteFile(dir + "/dev", "231:" + std::to_string(*counter) + "\n"));
  std::string link = "/sys/class/" + cls + "/" + name;
  RETURN_IF_ERROR(Symlink(link, dir));
  std::string node = "/dev/infiniband/" + name;
  RETURN_IF_ERROR(WriteFile(node, ""));
  owned->push_back(link);
  owned->push_back(node);
  return Status::Ok();
}

Status SimNode::AddPciFunction(const SimPciFunction& fn) {
  if (!ValidBdf(fn.address)) return Status::InvalidArgument("bad PCI address " + fn.address);
  if (device_dirs_.count(fn.address)) return Status::InvalidArgument("duplicate " + fn.address);
  std::string parent = "/sys/devices/" + HostBridge(fn.address) + "/" + fn.root_port;
  if (!fn.parent_bridge.empty()) {
    auto it = device_dirs_.find(fn.parent_bridge);
    if (it == device_dirs_.end()) {
      return Status::InvalidArgument("unknown bridge " + fn.parent_bridge);
    }
    parent = it->second;
  }
  if (!fn.physfn.empty()) {
    auto it = device_dirs_.find(fn.physfn);
    if (it == device_dirs_.end()) return Status::InvalidArgument("unknown PF " + fn.physfn);
    parent = fs::path(it->second).parent_path().string();
  }
  std::string dir = parent + "/" + fn.address;
  device_dirs_[fn.address] = dir;
  bus_links_[fn.address] = "/sys/bus/pci/devices/" + fn.address;
  std::vector<std::string>& owned = owned_[fn.address];

  RETURN_IF_ERROR(AddPciCommon(dir, fn.address, fn.class_code, fn.vendor, fn.device, fn.numa_node,
                               fn.local_cpulist, fn.driver));
  if (!fn.physfn.empty()) {
    RETURN_IF_ERROR(Symlink(dir + "/physfn", device_dirs_[fn.physfn]));
    int vf = 0;
    while (fs::exists(Path(device_dirs_[fn.physfn] + "/virtfn" + std::to_string(vf)))) ++vf;
    RETURN_IF_ERROR(Symlink(device_dirs_[fn.physfn] + "/virtfn" + std::to_string(vf), dir));
    // As the kernel shows a PF with VFs enabled.
    RETURN_IF_ERROR(WriteFile(device_dirs_[fn.physfn] + "/sriov_numvfs", std::to_string(vf + 1)));
  }
  return AddNetAndRdma(dir, fn.netdevs, fn.link_type, fn.rdma_device, fn.ports, fn.with_uverbs,
                       fn.with_umad, fn.with_issm, fn.fw_ver, fn.port_rate, &owned);
}

Status SimNode::AddPciCommon(const std::string& dir, const std::string& address,
                             const std::string& class_code, const std::string& vendor,
                             const std::string& device, int numa_node, const std::string& cpulist,
                             const std::string& driver) {
  RETURN_IF_ERROR(WriteFile(dir + "/class", class_code + "\n"));
  RETURN_IF_ERROR(WriteFile(dir + "/vendor", "0x" + vendor + "\n"));
  RETURN_IF_ERROR(WriteFile(dir + "/device", "0x" + device + "\n"));
  RETURN_IF_ERROR(WriteFile(dir + "/numa_node", std::to_string(numa_node) + "\n"));
  const std::string cpus = !cpulist.empty() ? cpulist : numa_node == 1 ? "16-31" : "0-15";
  RETURN_IF_ERROR(WriteFile(dir + "/local_cpulist", cpus + "\n"));
  RETURN_IF_ERROR(Symlink("/sys/bus/pci/devices/" + address, dir));
  if (!driver.empty()) {
    std::error_code ec;
    fs::create_directories(Path("/sys/bus/pci/drivers/" + driver), ec);
    RETURN_IF_ERROR(Symlink(dir + "/driver", "/sys/bus/pci/drivers/" + driver));
  }
  return Status::Ok();
}

Status SimNode::AddPciBridge(const SimPciBridge& b) {
  if (!ValidBdf(b.address)) return Status::InvalidArgument("bad PCI address " + b.address);
  if (device_dirs_.count(b.address)) return Status::InvalidArgument("duplicate " + b.address);
  std::string parent =
      "/sys/devices/" + (b.host_bridge.empty() ? HostBridge(b.address) : b.host_bridge);
  if (!b.parent.empty()) {
    auto it = device_dirs_.find(b.parent);
    if (it == device_dirs_.end()) return Status::InvalidArgument("unknown bridge " + b.parent);
    parent = it->second;
  }
  const std::string dir = parent + "/" + b.address;
  device_dirs_[b.address] = dir;
  bus_links_[b.address] = "/sys/bus/pci/devices/" + b.address;
  return AddPciCommon(dir, b.address, "0x060400", b.vendor, b.device, b.numa_node, "", "pcieport");
}

Result<std::string> SimNode::RdmaDirOf(const std::string& address) const {
  auto it = device_dirs_.find(address);
  if (it == device_dirs_.end()) return Status::NotFound("no simulated function " + address);
  if (it->second.rfind("/sys/devices/virtual/infiniband/", 0) == 0) return it->second;
  std::error_code ec;
  auto rdma = fs::directory_iterator(Path(it->second + "/infiniband"), ec);
  if (ec || rdma == fs::directory_iterator()) {
    return Status::NotFound("no RDMA device on " + address);
  }
  return it->second + "/infiniband/" + rdma->path().filename().string();
}

Status SimNode::SetGid(const std::string& address, int port, int index, const SimGid& gid) {
  ASSIGN_OR_RETURN(const std::string dir, RdmaDirOf(address));
  const std::string pdir = dir + "/ports/" + std::to_string(port);
  const std::string i = std::to_string(index);
  RETURN_IF_ERROR(WriteFile(pdir + "/gids/" + i, gid.gid + "\n"));
  RETURN_IF_ERROR(WriteFile(pdir + "/gid_attrs/types/" + i, gid.type + "\n"));
  if (!gid.ndev.empty())
    RETURN_IF_ERROR(WriteFile(pdir + "/gid_attrs/ndevs/" + i, gid.ndev + "\n"));
  return Status::Ok();
}

Status SimNode::AddNetAndRdma(const std::string& dir, const std::vector<std::string>& netdevs,
                              const std::string& link_type, const std::string& rdma_device,
                              int ports, bool with_uverbs, bool with_umad, bool with_issm,
                              const std::string& fw_ver, const std::string& port_rate,
                              std::vector<std::string>* owned) {
  const bool ib = link_type == "infiniband";
  for (const auto& nd : netdevs) {
    std::string ndir = dir + "/net/" + nd;
    RETURN_IF_ERROR(WriteFile(ndir + "/type", ib ? "32\n" : "1\n"));
    RETURN_IF_ERROR(WriteFile(ndir + "/operstate", "up\n"));
    RETURN_IF_ERROR(Symlink("/sys/class/net/" + nd, ndir));
    RETURN_IF_ERROR(Symlink(ndir + "/device", dir));
    owned->push_back("/sys/class/net/" + nd);
  }
  if (rdma_device.empty()) return Status::Ok();
  std::string idir = dir + "/infiniband/" + rdma_device;
  RETURN_IF_ERROR(WriteFile(idir + "/node_type", "1: CA\n"));
  if (!fw_ver.empty()) RETURN_IF_ERROR(WriteFile(idir + "/fw_ver", fw_ver + "\n"));
  for (int p = 1; p <= ports; ++p) {
    std::string pdir = idir + "/ports/" + std::to_string(p);
    RETURN_IF_ERROR(WriteFile(pdir + "/link_layer", ib ? "InfiniBand\n" : "Ethernet\n"));
    RETURN_IF_ERROR(WriteFile(pdir + "/state", "4: ACTIVE\n"));
    RETURN_IF_ERROR(WriteFile(pdir + "/phys_state", "5: LinkUp\n"));
    if (!port_rate.empty()) RETURN_IF_ERROR(WriteFile(pdir + "/rate", port_rate + "\n"));
  }
  RETURN_IF_ERROR(Symlink("/sys/class/infiniband/" + rdma_device, idir));
  owned->push_back("/sys/class/infiniband/" + rdma_device);
  if (with_uverbs) {
    RETURN_IF_ERROR(
        AddCharDev(dir, "infiniband_verbs", "uverbs", &uverbs_next_, rdma_device, 0, owned));
  }
  for (int p = 1; p <= ports; ++p) {
    int umad = umad_next_;
    if (with_umad) {
      RETURN_IF_ERROR(AddCharDev(dir, "infiniband_mad", "umad", &umad, rdma_device, p, owned));
    }
    umad = umad_next_;
    if (with_issm) {
      RETURN_IF_ERROR(AddCharDev(dir, "infiniband_mad", "issm", &umad, rdma_device, p, owned));
    }
    ++umad_next_;
  }
  return Status::Ok();
}

Status SimNode::AddSubFunction(const SimSubFunction& sf) {
  if (sf.name.empty() || sf.name.find('/') != std::string::npos) {
    return Status::InvalidArgument("bad SF name " + sf.name);
  }
  if (device_dirs_.count(sf.name)) return Status::InvalidArgument("duplicate " + sf.name);
  auto parent = device_dirs_.find(sf.parent);
  if (parent == device_dirs_.end()) return Status::InvalidArgument("unknown PF " + sf.parent);
  const std::string dir = parent->second + "/" + sf.name;
  device_dirs_[sf.name] = dir;
  bus_links_[sf.name] = "/sys/bus/auxiliary/devices/" + sf.name;
  std::vector<std::string>& owned = owned_[sf.name];
  RETURN_IF_ERROR(WriteFile(dir + "/sfnum", std::to_string(sf.sfnum) + "\n"));
  RETURN_IF_ERROR(Symlink(bus_links_[sf.name], dir));
  if (!sf.driver.empty()) {
    std::error_code ec;
    fs::create_directories(Path("/sys/bus/auxiliary/drivers/" + sf.driver), ec);
    RETURN_IF_ERROR(Symlink(dir + "/driver", "/sys/bus/auxiliary/drivers/" + sf.driver));
  }
  return AddNetAndRdma(dir, sf.netdevs, sf.link_type, sf.rdma_device, 1, true, true, true,
                       sf.fw_ver, sf.port_rate, &owned);
}

Status SimNode::AddVirtualRdma(const SimVirtualRdma& dev) {
  if (dev.name.empty() || dev.name.find('/') != std::string::npos) {
    return Status::InvalidArgument("bad RDMA device name " + dev.name);
  }
  if (device_dirs_.count(dev.name)) return Status::InvalidArgument("duplicate " + dev.name);
  std::vector<std::string>& owned = owned_[dev.name];
  if (!dev.netdev_owner.empty()) {
    auto owner = device_dirs_.find(dev.netdev_owner);
    if (owner == device_dirs_.end()) {
      return Status::InvalidArgument("unknown function " + dev.netdev_owner);
    }
  } else if (!fs::exists(Path("/sys/class/net/" + dev.netdev))) {
    // A veth: /sys/devices/virtual/net/<name>, owned by the RDMA device for removal.
    const std::string ndir = "/sys/devices/virtual/net/" + dev.netdev;
    RETURN_IF_ERROR(WriteFile(ndir + "/type", "1\n"));
    RETURN_IF_ERROR(WriteFile(ndir + "/operstate", "up\n"));
    RETURN_IF_ERROR(Symlink("/sys/class/net/" + dev.netdev, ndir));
    owned.push_back("/sys/class/net/" + dev.netdev);
    owned.push_back(ndir);
  }
  // The RDMA device, its port and char devices go to /sys/devices/virtual/<class>/..., so
  // the "device" directory is /sys/devices/virtual and nothing of it is removed but ours.
  const std::string vdir = "/sys/devices/virtual";
  std::vector<std::string> mine;
  RETURN_IF_ERROR(
      AddNetAndRdma(vdir, {}, "ether", dev.name, 1, true, true, true, "", dev.port_rate, &mine));
  const std::string idir = vdir + "/infiniband/" + dev.name;
  if (dev.write_parent) RETURN_IF_ERROR(WriteFile(idir + "/parent", dev.netdev + "\n"));
  RETURN_IF_ERROR(WriteFile(idir + "/ports/1/gid_attrs/ndevs/0", dev.netdev + "\n"));
  owned.push_back(idir);
  for (const auto& p : mine) {
    owned.push_back(p);
    // Class links of the char devices point at their directories: remove those too.
    if (p.rfind("/sys/class/infiniband_", 0) == 0) {
      owned.push_back(vdir + p.substr(std::string("/sys/class").size()));
    }
  }
  device_dirs_[dev.name] = idir;
  bus_links_[dev.name] = "/sys/class/infiniband/" + dev.name;
  return Status::Ok();
}

Status SimNode::SetPortState(const std::string& address, int port, const std::string& state) {
  ASSIGN_OR_RETURN(const std::string dir, RdmaDirOf(address));
  return WriteFile(dir + "/ports/" + std::to_string(port) + "/state", state + "\n");
}

Status SimNode::SetOperState(const std::string& address, const std::string& netdev,
                             const std::string& state) {
  auto it = device_dirs_.find(address);
  if (it == device_dirs_.end()) return Status::NotFound("no simulated function " + address);
  return WriteFile(it->second + "/net/" + netdev + "/operstate", state + "\n");
}

Status SimNode::MoveRdmaToPod(const std::string& address) {
  auto it = device_dirs_.find(address);
  if (it == device_dirs_.end()) return Status::NotFound("no simulated function " + address);
  std::error_code ec;
  for (const auto& p : owned_[address]) fs::remove(Path(p), ec);
  owned_[address].clear();
  for (const char* sub : {"/infiniband", "/infiniband_verbs", "/infiniband_mad", "/net"}) {
    fs::remove_all(Path(it->second + sub), ec);
  }
  return Status::Ok();
}

Status SimNode::RemovePciFunction(const std::string& address) {
  auto it = device_dirs_.find(address);
  if (it == device_dirs_.end()) return Status::NotFound("no simulated function " + address);
  std::error_code ec;
  // remove_all: a virtual device owns directories too; a symlink is removed, not followed.
  for (const auto& p : owned_[address]) fs::remove_all(Path(p), ec);
  fs::remove(Path(bus_links_[address]), ec);
  fs::remove_all(Path(it->second), ec);
  owned_.erase(address);
  bus_links_.erase(address);
  device_dirs_.erase(it);
  return Status::Ok();
}

SimPciFunction SimNode::IbHca(const std::string& address, const std::string& netdev,
                              const std::string& rdma, int numa_node) {
  SimPciFunction f;
  f.address = address;
  f.class_code = "0x020700";
  f.numa_node = numa_node;
  f.netdevs = {netdev};
  f.link_type = "infiniband";
  f.rdma_device = rdma;
  return f;
}

SimPciFunction SimNode::RoceVf(const std::string& address, const std::string& physfn,
                               const std::string& netdev, const std::string& rdma, int numa_node) {
  SimPciFunction f;
  f.address = address;
  f.device = "101e";
  f.physfn = physfn;
  f.netdevs = {netdev};
  f.rdma_device = rdma;
  f.numa_node = numa_node;
  return f;
}

SimPciFunction SimNode::Gpu(const std::string& address, int numa_node) {
  SimPciFunction f;
  f.address = address;
  f.vendor = "10de";
  f.device = "2330";
  f.class_code = "0x030200";
  f.numa_node = numa_node;
  f.driver = "nvidia";
  return f;
}

Status SimNode::PopulateDemo() {
  auto hca = [](std::string addr, std::string dev, int numa, std::string nd, std::string rdma,
                std::string port) {
    SimPciFunction f = IbHca(addr, nd, rdma, numa);
    f.device = std::move(dev);
    f.root_port = std::move(port);
    return f;
  };
  RETURN_IF_ERROR(AddPciFunction(hca("0000:3b:00.0", "101b", 0, "ib0", "mlx5_0", "0000:3a:00.0")));
  RETURN_IF_ERROR(AddPciFunction(hca("0000:86:00.0", "101b", 1, "ib1", "mlx5_1", "0000:85:00.0")));
  RETURN_IF_ERROR(AddPciFunction(hca("0000:af:00.0", "1017", 1, "ib3", "mlx5_2", "0000:ae:00.0")));
  RETURN_IF_ERROR(AddPciFunction(hca("0000:af:00.1", "1017", 1, "ib4", "mlx5_3", "0000:ae:00.0")));
  SimPciFunction nic;
  nic.address = "0000:18:00.0";
  nic.vendor = "8086";
  nic.device = "1593";
  nic.driver = "ice";
  nic.netdevs = {"eno1"};
  RETURN_IF_ERROR(AddPciFunction(nic));
  SimPciFunction sata;
  sata.address = "0000:00:17.0";
  sata.vendor = "8086";
  sata.device = "a182";
  sata.class_code = "0x010601";
  sata.driver = "ahci";
  return AddPciFunction(sata);
}

}  // namespace hcashare::fake
