#include "cni/fault_points.h"

#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

namespace hcashare::cni {

Status FaultPoint(std::string_view point) {
  // Read once: the environment does not change during one invocation.
  static const char* const kCrashAt = std::getenv("HCASHARE_CNI_CRASH_AT");
  static const char* const kFailAt = std::getenv("HCASHARE_CNI_FAIL_AT");
  static const bool kList = std::getenv("HCASHARE_CNI_CRASH_LIST") != nullptr;
  if (kList) {
    const std::string line = "hcashare-cni crash point: " + std::string(point) + "\n";
    (void)!::write(STDERR_FILENO, line.data(), line.size());
  }
  if (kCrashAt != nullptr && point == kCrashAt) ::kill(::getpid(), SIGKILL);
  if (kFailAt != nullptr && point == kFailAt) {
    return Status::IoError("fault injected at " + std::string(point) + " (HCASHARE_CNI_FAIL_AT)");
  }
  return Status::Ok();
}

}  // namespace hcashare::cni
