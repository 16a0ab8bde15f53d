#include "doctor/report.h"

#include <algorithm>
#include <sstream>

namespace hcashare::doctor {
namespace {

int Count(const std::vector<CheckResult>& results, Verdict v) {
  return static_cast<int>(std::count_if(results.begin(), results.end(),
                                        [v](const CheckResult& r) { return r.verdict == v; }));
}

}  // namespace

std::string FormatText(const std::vector<CheckResult>& results) {
  size_t w = 0;
  for (const auto& r : results) w = std::max(w, r.name.size());
  std::ostringstream out;
  for (const auto& r : results) {
    out << VerdictName(r.verdict) << "  " << r.name << std::string(w - r.name.size() + 2, ' ')
        << r.reason << "\n";
    if (r.verdict != Verdict::kPass && !r.fix.empty()) {
      out << std::string(6 + w + 2, ' ') << "fix: " << r.fix << "\n";
    }
  }
  out << "doctor: " << Count(results, Verdict::kPass) << " PASS, " << Count(results, Verdict::kWarn)
      << " WARN, " << Count(results, Verdict::kFail) << " FAIL\n";
  return out.str();
}

nlohmann::ordered_json ToJson(const std::vector<CheckResult>& results) {
  nlohmann::ordered_json checks = nlohmann::ordered_json::array();
  for (const auto& r : results) {
    nlohmann::ordered_json c = {
        {"name", r.name},
        {"status", VerdictName(r.verdict)},
        {"reason", r.reason},
        {"fix", r.fix.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(r.fix)}};
    if (!r.device.empty()) c["device"] = r.device;
    checks.push_back(std::move(c));
  }
  return {{"ok", !AnyFailed(results)},
          {"summary",
           {{"pass", Count(results, Verdict::kPass)},
            {"warn", Count(results, Verdict::kWarn)},
            {"fail", Count(results, Verdict::kFail)}}},
          {"checks", checks}};
}

}  // namespace hcashare::doctor
