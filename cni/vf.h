// Resolving the device an attachment uses (an SR-IOV VF or a scalable function): a view of
// the part of the host snapshot that holds it.
#pragma once

#include <string>
#include <vector>

#include "common/host.h"
#include "common/status.h"
#include "hostfacts/facts.h"

namespace hcashare::cni {

// What sysfs says about the device, in the host network namespace.
struct VfDevice {
  std::string id;         // PCI address or auxiliary device name
  bool is_sf = false;     // an auxiliary device (scalable function)
  std::string pf_pci;     // the PF's PCI address
  std::string pf_netdev;  // the PF's netdev ("" when it has none)
  // The PF netdev's ARPHRD type ("1" Ethernet, "32" InfiniBand; "" unknown): the kernel
  // sets VF GUIDs only through an InfiniBand PF.
  std::string pf_arp_type;
  int vf_index = -1;   // N of the PF's virtfnN link (-1 for an SF)
  std::string netdev;  // the device's netdev in the host namespace ("" when none)
  std::string driver;  // bound driver
  bool dpdk = false;   // a userspace (DPDK) driver: no netdev
  // RDMA devices under its infiniband/, else the virtual ones (rxe) on its netdev.
  std::vector<std::string> rdma_devices;
  bool virtual_rdma = false;  // rdma_devices are virtual (found through the netdev)
  // Its netdev carries the host's default route, itself or through a bond, VLAN or
  // macvlan: the node's own uplink, never attached.
  bool host_uplink = false;
};

// True for the userspace (DPDK) drivers: vfio-pci, igb_uio, uio_pci_generic.
bool IsDpdkDriver(const std::string& driver);

// Resolves `id` (a normalised PCI address or auxiliary name) in `snap`, which holds it, its
// PF and the virtual RDMA devices (hostfacts::ReadDevices). NotFound when the device is
// absent; FailedPrecondition when it is a PCI function that is not a VF (no physfn) or is
// bound to no driver.
Result<VfDevice> ResolveVfIn(const hostfacts::HostSnapshot& snap, const std::string& id,
                             bool is_aux);

// ResolveVfIn on the part of `host` that `id` needs, read now.
Result<VfDevice> ResolveVf(const Host& host, const std::string& id, bool is_aux);

}  // namespace hcashare::cni
