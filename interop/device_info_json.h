// The Multus device-info document for a PCI device (device-info spec 1.1.0), shared by the
// device plugin (exclusive allocations) and the CNI plugin (runtimeConfig.CNIDeviceInfoFile).
#pragma once

#include <string>
#include <vector>

namespace hcashare {

// {"type":"pci","version":"1.1.0","pci":{"pci-address":…[,"rdma-device":…][,"pf-pci-address":…]}}
// `rdma_devices` are joined with ','; empty ones and an empty `pf_pci` are left out.
std::string PciDeviceInfoJson(const std::string& pci_address,
                              const std::vector<std::string>& rdma_devices,
                              const std::string& pf_pci);

}  // namespace hcashare
