// Helpers shared by the doctor check files (internal to doctor/).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "doctor/check.h"

namespace hcashare::doctor {

inline CheckResult Pass(std::string name, std::string reason) {
  return {std::move(name), Verdict::kPass, std::move(reason), "", ""};
}
inline CheckResult Warn(std::string name, std::string reason, std::string fix) {
  return {std::move(name), Verdict::kWarn, std::move(reason), std::move(fix), ""};
}
inline CheckResult Fail(std::string name, std::string reason, std::string fix) {
  return {std::move(name), Verdict::kFail, std::move(reason), std::move(fix), ""};
}

// The value of `key` in `env`, or "" when it is unset.
inline std::string EnvOr(const DoctorInputs& in, const std::string& key) {
  auto it = in.env.find(key);
  return it == in.env.end() ? "" : it->second;
}

// The non-empty items of the comma-separated list `s`.
inline std::vector<std::string> SplitList(const std::string& s) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= s.size()) {
    size_t end = s.find(',', start);
    if (end == std::string::npos) end = s.size();
    if (end > start) out.push_back(s.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

}  // namespace hcashare::doctor
