#include "cni/vf.h"

#include "hostfacts/live.h"
#include "hostfacts/reader.h"
#include "hostfacts/uplink.h"

namespace hcashare::cni {

bool IsDpdkDriver(const std::string& driver) {
  return driver == "vfio-pci" || driver == "igb_uio" || driver == "uio_pci_generic";
}

Result<VfDevice> ResolveVfIn(const hostfacts::HostSnapshot& snap, const std::string& id,
                             bool is_aux) {
  const hostfacts::AuxDevice* aux = is_aux ? snap.FindAux(id) : nullptr;
  const hostfacts::PciFunction* pci = is_aux ? nullptr : snap.FindPci(id);
  if (aux == nullptr && pci == nullptr) {
    return Status::NotFound(std::string(is_aux ? "auxiliary device " : "PCI device ") + id +
                            " not found under " +
                            hostfacts::BusDir(hostfacts::PciOrAux(id, is_aux).bus) + "/");
  }
  VfDevice vf;
  vf.id = id;
  vf.is_sf = is_aux;
  vf.driver = is_aux ? aux->driver : pci->driver;
  if (vf.driver.empty()) {
    return Status::FailedPrecondition(id +
                                      " is bound to no driver; bind it to its network "
                                      "driver (e.g. mlx5_core) first");
  }
  vf.dpdk = IsDpdkDriver(vf.driver);
  if (is_aux) {
    vf.pf_pci = aux->parent;
  } else {
    if (pci->physfn.empty()) {
      return Status::FailedPrecondition(id +
                                        " is not an SR-IOV VF (it has no physfn link); "
                                        "give the CNI a VF's PCI address");
    }
    vf.pf_pci = pci->physfn;
  }
  if (const hostfacts::PciFunction* pf = snap.FindPci(vf.pf_pci); pf != nullptr) {
    if (!pf->netdevs.empty()) vf.pf_netdev = pf->netdevs.front();
    if (const hostfacts::Netdev* nd = snap.FindNetdev(vf.pf_netdev); nd != nullptr) {
      vf.pf_arp_type = nd->arp_type;
    }
    for (const auto& [index, addr] : pf->virtfns) {
      if (!is_aux && addr == id) vf.vf_index = index;
    }
  }
  const std::vector<std::string>& netdevs = is_aux ? aux->netdevs : pci->netdevs;
  if (!netdevs.empty()) vf.netdev = netdevs.front();
  for (const auto& netdev : netdevs) {
    vf.host_uplink = vf.host_uplink || hostfacts::CarriesDefaultRoute(snap, netdev);
  }
  vf.rdma_devices = is_aux ? aux->rdma_devices : pci->rdma_devices;
  if (vf.rdma_devices.empty() && !vf.netdev.empty()) {
    // A virtual RDMA device (Soft-RoCE) on the VF's netdev is not under the VF's directory.
    for (const auto& r : snap.rdma) {
      if (r.is_virtual && r.netdev == vf.netdev) {
        vf.rdma_devices.push_back(r.name);
        vf.virtual_rdma = true;
      }
    }
  }
  return vf;
}

Result<VfDevice> ResolveVf(const Host& host, const std::string& id, bool is_aux) {
  const hostfacts::HostSnapshot snap =
      is_aux ? hostfacts::ReadDevices(host, {}, {id}) : hostfacts::ReadDevices(host, {id}, {});
  return ResolveVfIn(snap, id, is_aux);
}

}  // namespace hcashare::cni
