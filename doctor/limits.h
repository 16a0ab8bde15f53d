// ProcessLimits: the limits that decide whether RDMA memory registration can pin memory —
// RLIMIT_MEMLOCK and the CAP_IPC_LOCK capability, which lifts it — behind an interface so
// that tests control them. Thread-safe.
#pragma once

#include <cstdint>
#include <limits>
#include <memory>

#include "common/status.h"

namespace hcashare::doctor {

// RLIMIT_MEMLOCK value meaning "unlimited".
inline constexpr uint64_t kUnlimited = std::numeric_limits<uint64_t>::max();

class ProcessLimits {
 public:
  virtual ~ProcessLimits() = default;
  // The soft RLIMIT_MEMLOCK of this process in bytes (kUnlimited for RLIM_INFINITY). An
  // errno status when it cannot be read.
  virtual Result<uint64_t> MemlockBytes() const = 0;
  // True when CAP_IPC_LOCK is in this process's effective set.
  virtual bool HasIpcLock() const = 0;
};

// This process (getrlimit and capget).
std::unique_ptr<ProcessLimits> NewProcessLimits();

}  // namespace hcashare::doctor
