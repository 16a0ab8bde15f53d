#include "cni/fault_points.h"

#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <string>

namespace hcashare::cni {

Status FaultPoint(std::string_view point) {
  // Read once: the environment does not change during one invocation.
  static const char* const kCrashAt = std::getenv("HCASHARE_CNI_CRASH_AT");
  static const char* const kFailAt = std::getenv("HCASHARE_CNI_FAIL_AT");
  static const bool kList = std::getenv("HCASHARE_CNI_CRASH_LIST") != nullptr;
  if (!kList && kCrashAt == nullptr && kFailAt == nullptr) return Status::Ok();
  // A point reached again in one invocation (a PF-side group after another) is
  // "<point>#<n>" from its second time on, so that each can be named on its own.
  static std::map<std::string, int, std::less<>> reached;
  const int n = ++reached[std::string(point)];
  const std::string label = std::string(point) + (n > 1 ? "#" + std::to_string(n) : "");
  if (kList) {
    const std::string line = "hcashare-cni crash point: " + label + "\n";
    (void)!::write(STDERR_FILENO, line.data(), line.size());
  }
  if (kCrashAt != nullptr && label == kCrashAt) ::kill(::getpid(), SIGKILL);
  if (kFailAt != nullptr && label == kFailAt) {
    return Status::IoError("injected failure")
        .WithDetails("fault injected at " + label + " (HCASHARE_CNI_FAIL_AT)");
  }
  return Status::Ok();
}

}  // namespace hcashare::cni
