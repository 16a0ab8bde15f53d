// Helpers shared by the test binaries.
#pragma once

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "common/subprocess.h"

namespace hcashare::testing {

// Milliseconds since `start` (printable in assertion failures, unlike a duration).
inline long long MsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                               start)
      .count();
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
