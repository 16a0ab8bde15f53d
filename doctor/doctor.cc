#include <algorithm>

#include "doctor/check.h"

namespace hcashare::doctor {

const char* VerdictName(Verdict v) {
  switch (v) {
    case Verdict::kPass:
      return "PASS";
    case Verdict::kWarn:
      return "WARN";
    default:
      return "FAIL";
  }
}

std::vector<CheckResult> RunChecks(const DoctorInputs& in) {
  using CheckFn = CheckResult (*)(const DoctorInputs&);
  static constexpr CheckFn kChecks[] = {
      CheckUverbsNodes, CheckLibibverbs, CheckVerbsPorts, CheckRoceGid,
      CheckMemlock,     CheckRdmaNetns,  CheckRuntimeCdi, CheckNcclIbDisable,
      CheckNcclNet,     CheckNcclIbHca,  CheckPluginEnv,
  };
  std::vector<CheckResult> out;
  for (CheckFn check : kChecks) out.push_back(check(in));
  for (auto& r : CheckPcieLinks(in)) out.push_back(std::move(r));
  out.push_back(CheckGpuDirect(in));
  out.push_back(CheckIommu(in));
  for (auto& r : CheckAcs(in)) out.push_back(std::move(r));
  return out;
}

bool AnyFailed(const std::vector<CheckResult>& results) {
  return std::any_of(results.begin(), results.end(),
                     [](const CheckResult& r) { return r.verdict == Verdict::kFail; });
}

}  // namespace hcashare::doctor
