#include "doctor/rdma_sysfs.h"

#include <algorithm>
#include <cstdlib>

namespace hcashare::doctor {
namespace {

constexpr const char* kIbClass = "/sys/class/infiniband";
constexpr const char* kVerbsClass = "/sys/class/infiniband_verbs";

std::vector<std::string> List(const Host& host, const std::string& dir) {
  return host.ListDir(dir).value_or(std::vector<std::string>{});
}

bool AllZero(const std::string& gid) {
  return std::all_of(gid.begin(), gid.end(), [](char c) { return c == '0' || c == ':'; });
}

}  // namespace

std::vector<RdmaDevice> ListRdmaDevices(const Host& host) {
  std::vector<RdmaDevice> out;
  for (const auto& name : List(host, kIbClass)) {
    RdmaDevice dev;
    dev.name = name;
    const std::string ports = std::string(kIbClass) + "/" + name + "/ports";
    for (const auto& p : List(host, ports)) {
      dev.ports.push_back({p, host.ReadTrimmed(ports + "/" + p + "/link_layer").value_or("")});
    }
    out.push_back(std::move(dev));
  }
  return out;
}

std::map<std::string, std::string> UverbsOwners(const Host& host) {
  std::map<std::string, std::string> out;
  for (const auto& node : List(host, kVerbsClass)) {
    auto ibdev = host.ReadTrimmed(std::string(kVerbsClass) + "/" + node + "/ibdev");
    if (ibdev.ok()) out[node] = *ibdev;
  }
  return out;
}

std::vector<std::string> DevInfinibandEntries(const Host& host) {
  return List(host, "/dev/infiniband");
}

std::vector<GidEntry> ReadGidTable(const Host& host, const std::string& device,
                                   const std::string& port) {
  const std::string dir = std::string(kIbClass) + "/" + device + "/ports/" + port;
  std::vector<GidEntry> out;
  for (const auto& i : List(host, dir + "/gids")) {
    auto gid = host.ReadTrimmed(dir + "/gids/" + i);
    // The kernel lists every slot; unused ones read as zero and their type as EINVAL.
    if (!gid.ok() || AllZero(*gid)) continue;
    auto type = host.ReadTrimmed(dir + "/gid_attrs/types/" + i);
    if (!type.ok()) continue;
    GidEntry e;
    e.index = std::atoi(i.c_str());
    e.gid = *gid;
    e.type = *type;
    e.ndev = host.ReadTrimmed(dir + "/gid_attrs/ndevs/" + i).value_or("");
    out.push_back(std::move(e));
  }
  std::sort(out.begin(), out.end(),
            [](const GidEntry& a, const GidEntry& b) { return a.index < b.index; });
  return out;
}

bool IsIpv4MappedGid(const std::string& gid) {
  return gid.rfind("0000:0000:0000:0000:0000:ffff:", 0) == 0;
}

}  // namespace hcashare::doctor
