// Renderings of doctor results: aligned text lines or a JSON document. Pure functions.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "doctor/check.h"

namespace hcashare::doctor {

// One "PASS  name  reason" line per check, a "      fix: …" line under every WARN and
// FAIL, then "doctor: N PASS, N WARN, N FAIL".
std::string FormatText(const std::vector<CheckResult>& results);

// {"ok": bool (no FAIL), "summary": {"pass", "warn", "fail"}, "checks": [{"name",
// "status", "reason", "fix" (string or null), "device" (per-device results only)}]}.
nlohmann::ordered_json ToJson(const std::vector<CheckResult>& results);

}  // namespace hcashare::doctor
