#include "interop/device_info_json.h"

#include <nlohmann/json.hpp>

#include "common/strings.h"
#include "json/dump.h"

namespace hcashare {

std::string PciDeviceInfoJson(const std::string& pci_address,
                              const std::vector<std::string>& rdma_devices,
                              const std::string& pf_pci) {
  nlohmann::ordered_json pci = {{"pci-address", pci_address}};
  if (!rdma_devices.empty()) pci["rdma-device"] = Join(rdma_devices);
  if (!pf_pci.empty()) pci["pf-pci-address"] = pf_pci;
  nlohmann::ordered_json doc = {{"type", "pci"}, {"version", "1.1.0"}, {"pci", pci}};
  return DumpJson(doc);
}

}  // namespace hcashare
