#include "cni/vf.h"

#include "common/sysfs_attr.h"
#include "common/virtual_rdma.h"

namespace hcashare::cni {
namespace {

constexpr const char* kPciDevices = "/sys/bus/pci/devices/";
constexpr const char* kAuxDevices = "/sys/bus/auxiliary/devices/";

std::vector<std::string> ListOrEmpty(const Host& host, const std::string& dir) {
  auto names = host.ListDir(dir);
  return names.ok() ? *names : std::vector<std::string>{};
}

}  // namespace

bool IsDpdkDriver(const std::string& driver) {
  return driver == "vfio-pci" || driver == "igb_uio" || driver == "uio_pci_generic";
}

Result<VfDevice> ResolveVf(const Host& host, const std::string& id, bool is_aux) {
  const std::string dir = (is_aux ? kAuxDevices : kPciDevices) + id;
  if (!host.Exists(dir)) {
    return Status::NotFound(std::string(is_aux ? "auxiliary device " : "PCI device ") + id +
                            " not found under " + (is_aux ? kAuxDevices : kPciDevices));
  }
  VfDevice vf;
  vf.id = id;
  vf.is_sf = is_aux;
  auto driver = host.ReadLink(dir + "/driver");
  if (!driver.ok()) {
    return Status::FailedPrecondition(id +
                                      " is bound to no driver; bind it to its network "
                                      "driver (e.g. mlx5_core) first");
  }
  vf.driver = BaseName(*driver);
  vf.dpdk = IsDpdkDriver(vf.driver);
  if (is_aux) {
    // An SF's directory sits inside its PF's: /sys/devices/.../<pf>/<sf name>.
    auto target = host.ReadLink(dir);
    if (target.ok()) vf.pf_pci = BaseName(target->substr(0, target->find_last_of('/')));
  } else {
    auto physfn = host.ReadLink(dir + "/physfn");
    if (!physfn.ok()) {
      return Status::FailedPrecondition(id +
                                        " is not an SR-IOV VF (it has no physfn link); "
                                        "give the CNI a VF's PCI address");
    }
    vf.pf_pci = BaseName(*physfn);
    vf.vf_index = ReadVfIndex(host, vf.pf_pci, id);
  }
  if (!vf.pf_pci.empty()) {
    auto pf_netdevs = ListOrEmpty(host, kPciDevices + vf.pf_pci + "/net");
    if (!pf_netdevs.empty()) vf.pf_netdev = pf_netdevs.front();
  }
  auto netdevs = ListOrEmpty(host, dir + "/net");
  if (!netdevs.empty()) vf.netdev = netdevs.front();
  vf.rdma_devices = ListOrEmpty(host, dir + "/infiniband");
  if (vf.rdma_devices.empty() && !vf.netdev.empty()) {
    // A virtual RDMA device (Soft-RoCE) on the VF's netdev is not under the VF's directory.
    for (const auto& v : ListVirtualRdmaDevices(host)) {
      if (v.netdev == vf.netdev) {
        vf.rdma_devices.push_back(v.name);
        vf.virtual_rdma = true;
      }
    }
  }
  return vf;
}

}  // namespace hcashare::cni
