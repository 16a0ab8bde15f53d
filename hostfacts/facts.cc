#include "hostfacts/facts.h"

#include <algorithm>
#include <cctype>
#include <tuple>

namespace hcashare::hostfacts {
namespace {

// The element of sorted `v` whose `key` is `k`; nullptr when there is none.
template <typename T, typename K>
const T* Find(const std::vector<T>& v, K key, const std::string& k) {
  auto it = std::lower_bound(v.begin(), v.end(), k,
                             [&](const T& e, const std::string& x) { return e.*key < x; });
  return it != v.end() && (*it).*key == k ? &*it : nullptr;
}

}  // namespace

bool Gid::operator==(const Gid& o) const {
  return std::tie(index, gid, type, ndev) == std::tie(o.index, o.gid, o.type, o.ndev);
}

bool RdmaPort::operator==(const RdmaPort& o) const {
  return std::tie(number, link_layer, state, rate, rate_gbps, gids) ==
         std::tie(o.number, o.link_layer, o.state, o.rate, o.rate_gbps, o.gids);
}

bool RdmaDevice::operator==(const RdmaDevice& o) const {
  return std::tie(name, sysfs_dir, parent, is_virtual, netdev, fw_ver, char_devices, ports) ==
         std::tie(o.name, o.sysfs_dir, o.parent, o.is_virtual, o.netdev, o.fw_ver, o.char_devices,
                  o.ports);
}

bool Netdev::operator==(const Netdev& o) const {
  return std::tie(name, sysfs_dir, arp_type, operstate, device, uppers) ==
         std::tie(o.name, o.sysfs_dir, o.arp_type, o.operstate, o.device, o.uppers);
}

bool PciFunction::operator==(const PciFunction& o) const {
  return std::tie(address, class_code, rdma_devices, details, sysfs_path, vendor, device, driver,
                  numa_node, local_cpulist, physfn, virtfns, sriov_numvfs, sriov_totalvfs,
                  current_link_speed, max_link_speed, current_link_width, max_link_width,
                  upstream_max_link_speed, upstream_max_link_width, iommu_group, netdevs,
                  acs_ctrl) ==
         std::tie(o.address, o.class_code, o.rdma_devices, o.details, o.sysfs_path, o.vendor,
                  o.device, o.driver, o.numa_node, o.local_cpulist, o.physfn, o.virtfns,
                  o.sriov_numvfs, o.sriov_totalvfs, o.current_link_speed, o.max_link_speed,
                  o.current_link_width, o.max_link_width, o.upstream_max_link_speed,
                  o.upstream_max_link_width, o.iommu_group, o.netdevs, o.acs_ctrl);
}

bool NumaNode::operator==(const NumaNode& o) const {
  return std::tie(id, cpumap, cpulist) == std::tie(o.id, o.cpumap, o.cpulist);
}

bool NvidiaGpu::operator==(const NvidiaGpu& o) const {
  return std::tie(address, uuid, model, minor) == std::tie(o.address, o.uuid, o.model, o.minor);
}

bool AuxDevice::operator==(const AuxDevice& o) const {
  return std::tie(name, parent, driver, sf_num, netdevs, rdma_devices) ==
         std::tie(o.name, o.parent, o.driver, o.sf_num, o.netdevs, o.rdma_devices);
}

bool HostSnapshot::operator==(const HostSnapshot& o) const {
  return std::tie(version, pci_listed, gid_tables, pci, aux, rdma, netdevs, rdma_class,
                  verbs_owners, dev_infiniband, rdma_cm_present, default_route_netdevs,
                  rdma_netns_mode, rdma_netns_error, sys_module_listed, peermem_modules,
                  memory_peers, nvidia_version, kernel_release, iommu_units, iommu_group_types,
                  iommu_cmdline, numa_nodes, cpu_arch, cpu_vendor, cpu_family, cpu_model,
                  nvidia_gpus, containerd_config_present, containerd_config_version,
                  containerd_enable_cdi, containerd_config_imports, crio_config_present) ==
         std::tie(o.version, o.pci_listed, o.gid_tables, o.pci, o.aux, o.rdma, o.netdevs,
                  o.rdma_class, o.verbs_owners, o.dev_infiniband, o.rdma_cm_present,
                  o.default_route_netdevs, o.rdma_netns_mode, o.rdma_netns_error,
                  o.sys_module_listed, o.peermem_modules, o.memory_peers, o.nvidia_version,
                  o.kernel_release, o.iommu_units, o.iommu_group_types, o.iommu_cmdline,
                  o.numa_nodes, o.cpu_arch, o.cpu_vendor, o.cpu_family, o.cpu_model, o.nvidia_gpus,
                  o.containerd_config_present, o.containerd_config_version, o.containerd_enable_cdi,
                  o.containerd_config_imports, o.crio_config_present);
}

const PciFunction* HostSnapshot::FindPci(const std::string& address) const {
  return Find(pci, &PciFunction::address, address);
}

const AuxDevice* HostSnapshot::FindAux(const std::string& name) const {
  return Find(aux, &AuxDevice::name, name);
}

const RdmaDevice* HostSnapshot::FindRdma(const std::string& name) const {
  return Find(rdma, &RdmaDevice::name, name);
}

const Netdev* HostSnapshot::FindNetdev(const std::string& name) const {
  return Find(netdevs, &Netdev::name, name);
}

const NvidiaGpu* HostSnapshot::FindGpuByUuid(const std::string& uuid) const {
  auto same = [&uuid](const std::string& other) {
    return other.size() == uuid.size() &&
           std::equal(other.begin(), other.end(), uuid.begin(), [](char a, char b) {
             return std::tolower(static_cast<unsigned char>(a)) ==
                    std::tolower(static_cast<unsigned char>(b));
           });
  };
  for (const auto& g : nvidia_gpus) {
    if (!g.uuid.empty() && same(g.uuid)) return &g;
  }
  return nullptr;
}

}  // namespace hcashare::hostfacts
