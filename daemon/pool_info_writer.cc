#include "daemon/pool_info_writer.h"

#include <set>

#include "common/host.h"

namespace hcashare::daemon {

PoolInfo BuildPoolInfo(const config::ResourceConfig& rc, const node::PoolState& pool) {
  PoolInfo info;
  info.resource = rc.FullName();
  for (const auto& h : pool.hcas) {
    PoolInfoHca hca;
    hca.pci = h.address;
    hca.netdevs = h.netdevs;
    hca.rdma_devices = node::PoolState::RdmaNamesOf({h});
    hca.numa = h.numa_node < 0 ? -1 : h.numa_node;
    hca.healthy = h.healthy;
    info.hcas.push_back(std::move(hca));
  }
  if (rc.topology_aware && pool.Usable()) {
    for (int id = 0; id < rc.rdma_hca_max; ++id) {
      info.id_numa[std::to_string(id)] = node::NodeOfSharedId(rc, pool, id);
    }
  }
  return info;
}

PoolInfoWriter::PoolInfoWriter(std::string dir, const std::string& kubelet_root)
    : files_(std::move(dir), CanonicalPath(kubelet_root)) {}

Status PoolInfoWriter::Write(const config::ResourceConfig& rc, const node::PoolState& pool) {
  if (rc.mode != config::PoolMode::kShared) return Status::Ok();
  return files_.Write(PoolInfoFileName(rc.FullName()), PoolInfoToJson(BuildPoolInfo(rc, pool)));
}

void PoolInfoWriter::Remove(const config::ResourceConfig& rc) {
  files_.Remove(PoolInfoFileName(rc.FullName()));
}

std::set<std::string> PoolInfoWriter::NamesOf(
    const std::vector<config::ResourceConfig>& resources) {
  std::set<std::string> names;
  for (const auto& rc : resources) {
    if (rc.mode == config::PoolMode::kShared) names.insert(PoolInfoFileName(rc.FullName()));
  }
  return names;
}

void PoolInfoWriter::Reclaim(const std::vector<config::ResourceConfig>& resources) {
  files_.Reclaim(NamesOf(resources));
}

void PoolInfoWriter::HandOver(const std::vector<config::ResourceConfig>& resources) {
  files_.HandOver(NamesOf(resources));
}

void PoolInfoWriter::Disown(const config::ResourceConfig& rc) {
  files_.Forget(PoolInfoFileName(rc.FullName()));
}

}  // namespace hcashare::daemon
