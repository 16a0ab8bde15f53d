// Verbs: the few rdma-core libibverbs calls `hcashare doctor` makes, behind a small
// interface so that both outcomes of every check can be tested.
//
// The real implementation loads libibverbs.so.1 at run time with dlopen(), as NCCL does,
// so a missing or broken rdma-core is a check result rather than a CLI that cannot start.
// Not thread-safe.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/status.h"

namespace hcashare::doctor {

// One port as ibv_query_port reports it.
struct VerbsPort {
  int number = 1;
  std::string state;       // "ACTIVE", "DOWN", "INIT", "ARMED", "ACTIVE_DEFER", "NOP"
  std::string link_layer;  // "InfiniBand" or "Ethernet" (unspecified reads as InfiniBand)
};

class Verbs {
 public:
  virtual ~Verbs() = default;
  Verbs() = default;
  Verbs(const Verbs&) = delete;
  Verbs& operator=(const Verbs&) = delete;

  // Loads libibverbs. FailedPrecondition with the loader's message when it cannot be
  // loaded or lacks a symbol. Idempotent.
  virtual Status Load() = 0;
  // ibv_get_device_list(): the device names (possibly none). An error when libibverbs is
  // not loaded or the call fails (errno mapped by ErrnoStatus).
  virtual Result<std::vector<std::string>> ListDevices() = 0;
  // ibv_open_device() on `name`, then ibv_query_port() for each of its ports. NotFound
  // when `name` is not listed; an errno status when opening or a query fails.
  virtual Result<std::vector<VerbsPort>> QueryPorts(const std::string& name) = 0;
};

// The real libibverbs (dlopen of libibverbs.so.1). The library stays loaded for the
// life of the process, as the providers it loads expect.
std::unique_ptr<Verbs> NewLibibverbs();

}  // namespace hcashare::doctor
