// Helpers shared by the whole-process benchmark drivers in bench/.
#pragma once

#include <algorithm>
#include <vector>

#include "tests/support/proc_status.h"

namespace hcashare::bench {

// The `p` quantile (0..1) of `v` (nearest rank; `v` must not be empty).
inline double Percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(p * static_cast<double>(v.size())))];
}

// One "Name:   N kB" field of /proc/<pid>/status in KiB (tests/support/proc_status.h).
using hcashare::testing::ProcStatusKib;

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
