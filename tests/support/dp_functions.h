// Device-plugin function and resource builders shared by the pool, topology, selector and
// device-info tests: discovery's view of an HCA, a PF and its VFs, and resource configs.
#pragma once

#include <string>
#include <vector>

#include "config/config.h"
#include "node/discovery.h"

namespace hcashare::node::testfns {

// An InfiniBand HCA PF on NUMA node `numa` with RDMA device `rdma` and its uverbs node.
inline PciFunction Hca(const std::string& address, int numa, const std::string& rdma) {
  PciFunction f;
  f.address = address;
  f.vendor = "15b3";
  f.device = "1017";
  f.class_code = 0x020700;
  f.numa_node = numa;
  f.driver = "mlx5_core";
  f.netdevs = {"ib_" + rdma};
  f.pf_netdevs = f.netdevs;
  f.link_types = {"infiniband"};
  RdmaDeviceInfo r;
  r.name = rdma;
  r.char_devices = {"/dev/infiniband/uverbs" + rdma.substr(rdma.size() - 1)};
  r.link_layers = {"infiniband"};
  f.rdma = {r};
  return f;
}

// A shared resource.
inline config::ResourceConfig Shared(int rdma_hca_max, bool topology_aware = false) {
  config::ResourceConfig rc;
  rc.resource_name = "hca_shared";
  rc.resource_prefix = "rdma";
  rc.mode = config::PoolMode::kShared;
  rc.rdma_hca_max = rdma_hca_max;
  rc.topology_aware = topology_aware;
  return rc;
}

// An exclusive resource (rdmaHcaMax 0).
inline config::ResourceConfig Exclusive(const std::string& prefix = "rdma",
                                        const std::string& name = "hca_vfs") {
  config::ResourceConfig rc;
  rc.resource_name = name;
  rc.resource_prefix = prefix;
  rc.mode = config::PoolMode::kExclusive;
  return rc;
}

// A PF with netdev pf0.
inline PciFunction Pf(const std::string& address, const std::string& netdev) {
  PciFunction f = Hca(address, 0, "mlx5_0");
  f.netdevs = {netdev};
  f.pf_netdevs = {netdev};
  return f;
}

// VF number `index` of the PF at `pf_address` whose netdev is `pf_netdev`.
inline PciFunction Vf(const std::string& address, const std::string& pf_address,
                      const std::string& pf_netdev, int index) {
  PciFunction f = Hca(address, 0, "mlx5_" + std::to_string(index + 2));
  f.device = "101c";
  f.netdevs = {pf_netdev + "v" + std::to_string(index)};
  f.is_vf = true;
  f.pf_address = pf_address;
  f.pf_netdevs = {pf_netdev};
  f.vf_index = index;
  return f;
}

// The addresses of `fns`, in order.
inline std::vector<std::string> Addresses(const std::vector<PciFunction>& fns) {
  std::vector<std::string> out;
  for (const auto& f : fns) out.push_back(f.address);
  return out;
}

}  // namespace hcashare::node::testfns
