// Reading /proc/<pid>/status, for the tests and benchmarks that measure memory.
#pragma once

#include <sys/types.h>

#include <fstream>
#include <string>

namespace hcashare::testing {

// One "Name:   N kB" field of /proc/<pid>/status (`name` with its colon, e.g. "VmRSS:"),
// in KiB; -1 when absent.
inline long ProcStatusKib(pid_t pid, const std::string& name) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(name, 0) == 0) return std::stol(line.substr(name.size()));
  }
  return -1;
}

}  // namespace hcashare::testing
