// FakeProcessLimits: a doctor::ProcessLimits double for the doctor tests.
#pragma once

#include <cstdint>

#include "common/status.h"
#include "doctor/limits.h"

namespace hcashare::fake {

// A double with fixed answers.
class FakeProcessLimits final : public doctor::ProcessLimits {
 public:
  FakeProcessLimits(uint64_t memlock, bool ipc_lock) : memlock_(memlock), ipc_lock_(ipc_lock) {}
  Result<uint64_t> MemlockBytes() const override { return memlock_; }
  bool HasIpcLock() const override { return ipc_lock_; }

 private:
  uint64_t memlock_;
  bool ipc_lock_;
};

}  // namespace hcashare::fake
