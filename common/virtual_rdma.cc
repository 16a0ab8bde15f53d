#include "common/virtual_rdma.h"

#include <algorithm>

namespace hcashare {

bool IsVirtualDeviceTarget(const std::string& link_target) {
  return link_target.find("/devices/virtual/") != std::string::npos;
}

std::string VirtualRdmaNetdev(const Host& host, const std::string& dir) {
  // rxe writes its netdev's name to `parent`; otherwise the GID table names the netdev of
  // each entry (unused entries cannot be read).
  if (auto parent = host.ReadTrimmed(dir + "/parent"); parent.ok() && !parent->empty()) {
    return *parent;
  }
  for (const auto& p : host.ListDir(dir + "/ports").value_or({})) {
    const std::string ndevs = dir + "/ports/" + p + "/gid_attrs/ndevs";
    for (const auto& e : host.ListDir(ndevs).value_or({})) {
      auto nd = host.ReadTrimmed(ndevs + "/" + e);
      if (nd.ok() && !nd->empty()) return *nd;
    }
  }
  return "";
}

std::vector<VirtualRdmaDevice> ListVirtualRdmaDevices(const Host& host) {
  std::vector<VirtualRdmaDevice> out;
  for (const auto& name : host.ListDir(kRdmaClassDir).value_or({})) {
    const std::string dir = std::string(kRdmaClassDir) + "/" + name;
    auto target = host.ReadLink(dir);
    if (!target.ok() || !IsVirtualDeviceTarget(*target)) continue;
    out.push_back({name, VirtualRdmaNetdev(host, dir)});
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  return out;
}

}  // namespace hcashare
