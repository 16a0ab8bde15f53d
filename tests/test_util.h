// Helpers shared by the test binaries.
#pragma once

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "common/subprocess.h"

namespace hcashare::testing {

// Milliseconds since `start` (printable in assertion failures, unlike a duration).
inline long long MsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                               start)
      .count();
}

// Polls `pred` every millisecond until it holds or `timeout` has passed: waits on state
// that has no notification. True when it held.
template <typename Pred>
bool WaitUntil(Pred pred, std::chrono::milliseconds timeout = std::chrono::milliseconds(10000)) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!pred()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

// The whole file at `path` ("" when it cannot be read).
inline std::string ReadTextFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Where the project's binaries are: $HCASHARE_BIN_DIR (set by CTest), else next to the test.
inline std::string BinDir() {
  const char* d = std::getenv("HCASHARE_BIN_DIR");
  return d ? d : SelfDir();
}

}  // namespace hcashare::testing
