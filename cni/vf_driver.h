// The PCI driver binding of a VF: how mlx5 applies an InfiniBand VF's new node and port
// GUID (it reads them when the VF's driver is bound). An unbind destroys the VF's netdev
// and RDMA device, a bind creates new ones (under a name of the kernel's choosing), so
// callers re-resolve the VF afterwards; cni/vf_rebind.h does the whole rebind without
// ever losing the VF.
#pragma once

#include <memory>
#include <string>

#include "common/host.h"
#include "common/status.h"

namespace hcashare::cni {

class VfDriver {
 public:
  virtual ~VfDriver() = default;
  // The driver PCI function `pci` is bound to, as the kernel's `driver` link names it; ""
  // when it is bound to none. InvalidArgument when the name could leave the drivers
  // directory ('/', "." or "..").
  virtual Result<std::string> BoundDriver(const std::string& pci) = 0;
  // Unbinds `pci` from `driver` (writes the address to the driver's `unbind`).
  virtual Status Unbind(const std::string& pci, const std::string& driver) = 0;
  // Binds `pci` to `driver` (writes the address to the driver's `bind`), once.
  virtual Status Bind(const std::string& pci, const std::string& driver) = 0;
};

// True when `name` can name a driver directory: not empty, no '/', not "." or "..".
bool IsPlainDriverName(const std::string& name);

// Reads the `driver` link and writes drivers/<driver>/{unbind,bind} of `host`'s root through
// hostfacts' live query (hostfacts/live.h), which opens them below the root with no symlink
// followed on any component (common/safe_file.h OpenBeneath: openat2 RESOLVE_BENEATH |
// RESOLVE_NO_SYMLINKS, else a component walk): a tree that redirects `drivers`, a driver's
// directory or its `bind` elsewhere gets no write.
std::unique_ptr<VfDriver> NewSysfsVfDriver(const Host& host);

}  // namespace hcashare::cni
