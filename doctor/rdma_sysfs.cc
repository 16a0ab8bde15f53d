#include "doctor/rdma_sysfs.h"

#include <algorithm>

#include "hostfacts/reader.h"

namespace hcashare::doctor {

hostfacts::HostSnapshot ReadDoctorSnapshot(const Host& host) {
  hostfacts::ReadOptions opts;
  opts.gid_tables = true;
  opts.verbs_owners = true;
  return hostfacts::ReadHostSnapshot(host, opts);
}

std::vector<RdmaDevice> ListRdmaDevices(const hostfacts::HostSnapshot& snap) {
  std::vector<RdmaDevice> out;
  for (const auto& name : snap.rdma_class) {
    RdmaDevice dev;
    dev.name = name;
    if (const hostfacts::RdmaDevice* r = snap.FindRdma(name); r != nullptr) {
      for (const auto& p : r->ports) dev.ports.push_back({p.number, p.link_layer});
    }
    out.push_back(std::move(dev));
  }
  return out;
}

const std::map<std::string, std::string>& UverbsOwners(const hostfacts::HostSnapshot& snap) {
  return snap.verbs_owners;
}

const std::vector<std::string>& DevInfinibandEntries(const hostfacts::HostSnapshot& snap) {
  return snap.dev_infiniband;
}

bool HasDevNode(const hostfacts::HostSnapshot& snap, const std::string& name) {
  return std::binary_search(snap.dev_infiniband.begin(), snap.dev_infiniband.end(), name);
}

std::vector<GidEntry> ReadGidTable(const hostfacts::HostSnapshot& snap, const std::string& device,
                                   const std::string& port) {
  std::vector<GidEntry> out;
  const hostfacts::RdmaDevice* r = snap.FindRdma(device);
  if (r == nullptr) return out;
  for (const auto& p : r->ports) {
    if (p.number != port) continue;
    for (const auto& g : p.gids) out.push_back({g.index, g.gid, g.type, g.ndev});
  }
  return out;
}

bool IsIpv4MappedGid(const std::string& gid) {
  return gid.rfind("0000:0000:0000:0000:0000:ffff:", 0) == 0;
}

}  // namespace hcashare::doctor
