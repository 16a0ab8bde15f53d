// Rebinding a VF to its driver: how mlx5 applies an InfiniBand VF's new node and port GUID
// (it reads them when the VF's driver is bound). The rebind destroys the VF's netdev and
// RDMA device and creates new ones, so callers re-resolve the VF afterwards.
#pragma once

#include <memory>
#include <string>

#include "common/host.h"
#include "common/status.h"

namespace hcashare::cni {

class VfDriver {
 public:
  virtual ~VfDriver() = default;
  // Unbinds PCI function `pci` from the driver it is bound to and binds it to that driver
  // again. FailedPrecondition when it is bound to none; on a failed bind, one more bind is
  // tried, and the error says the function is left unbound.
  virtual Status Rebind(const std::string& pci) = 0;
};

// Writes /sys/bus/pci/drivers/<driver>/{unbind,bind} under `host`'s root; the driver is the
// one `pci`'s `driver` link names (the kernel's link, not a name from the configuration).
std::unique_ptr<VfDriver> NewSysfsVfDriver(const Host& host);

}  // namespace hcashare::cni
