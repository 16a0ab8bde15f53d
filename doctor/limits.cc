#include "doctor/limits.h"

#include <linux/capability.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

namespace hcashare::doctor {
namespace {

class RealProcessLimits final : public ProcessLimits {
 public:
  Result<uint64_t> MemlockBytes() const override {
    rlimit rl{};
    if (::getrlimit(RLIMIT_MEMLOCK, &rl) != 0) return ErrnoStatus(errno, "getrlimit(MEMLOCK)");
    return rl.rlim_cur == RLIM_INFINITY ? kUnlimited : static_cast<uint64_t>(rl.rlim_cur);
  }

  bool HasIpcLock() const override {
    // glibc has no capget() wrapper; libcap is not worth a dependency for one bit.
    __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
    __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = {};
    if (::syscall(SYS_capget, &header, data) != 0) return false;
    return (data[CAP_TO_INDEX(CAP_IPC_LOCK)].effective & CAP_TO_MASK(CAP_IPC_LOCK)) != 0;
  }
};

}  // namespace

std::unique_ptr<ProcessLimits> NewProcessLimits() { return std::make_unique<RealProcessLimits>(); }

}  // namespace hcashare::doctor
