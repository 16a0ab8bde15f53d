// Helpers shared by the whole-process benchmark drivers in bench/.
#pragma once

#include <sys/types.h>

#include <algorithm>
#include <fstream>
#include <string>
#include <vector>

namespace hcashare::bench {

// The `p` quantile (0..1) of `v` (nearest rank; `v` must not be empty).
inline double Percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(p * static_cast<double>(v.size())))];
}

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

// The least-squares slope of y over x (0 with fewer than two distinct x).
inline double LeastSquaresSlope(const std::vector<double>& x, const std::vector<double>& y) {
  const size_t n = std::min(x.size(), y.size());
  double mx = 0, my = 0;
  for (size_t i = 0; i < n; ++i) {
    mx += x[i] / static_cast<double>(n);
    my += y[i] / static_cast<double>(n);
  }
  double sxy = 0, sxx = 0;
  for (size_t i = 0; i < n; ++i) {
    sxy += (x[i] - mx) * (y[i] - my);
    sxx += (x[i] - mx) * (x[i] - mx);
  }
  return sxx > 0 ? sxy / sxx : 0;
}

}  // namespace hcashare::bench
