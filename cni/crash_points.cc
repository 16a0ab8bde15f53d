#include "cni/crash_points.h"

#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

namespace hcashare::cni {

void CrashPoint(std::string_view point) {
  // Read once: the environment does not change during one invocation.
  static const char* const kCrashAt = std::getenv("HCASHARE_CNI_CRASH_AT");
  static const bool kList = std::getenv("HCASHARE_CNI_CRASH_LIST") != nullptr;
  if (kList) {
    const std::string line = "hcashare-cni crash point: " + std::string(point) + "\n";
    (void)!::write(STDERR_FILENO, line.data(), line.size());
  }
  if (kCrashAt != nullptr && point == kCrashAt) ::kill(::getpid(), SIGKILL);
}

}  // namespace hcashare::cni
