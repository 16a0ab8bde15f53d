// CNI spec versions: the ones hcashare-cni speaks, semantic-version comparison, which
// verbs a version allows, and the reply to the VERSION verb.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "cni/verb.h"
#include "common/status.h"

namespace hcashare::cni {

// The newest version we speak; used when no version was requested.
inline constexpr std::string_view kLatestVersion = "1.1.0";

// "0.3.0", "0.3.1", "0.4.0", "1.0.0", "1.1.0", oldest first.
const std::vector<std::string>& SupportedVersions();

// True when `version` is exactly one of SupportedVersions().
bool IsSupportedVersion(std::string_view version);

// A parsed "MAJOR.MINOR.PATCH" (decimal numbers, nothing else).
struct SemVer {
  int major = 0;
  int minor = 0;
  int patch = 0;
};

// Parses "X.Y.Z" with each part 1..6 decimal digits. std::nullopt otherwise.
std::optional<SemVer> ParseSemVer(std::string_view version);

// <0, 0 or >0 as `a` is older than, equal to or newer than `b`.
int Compare(const SemVer& a, const SemVer& b);

// True when both parse and `version` >= `minimum`.
bool VersionAtLeast(std::string_view version, std::string_view minimum);

// The oldest spec version with `verb`: "0.4.0" for CHECK, "1.1.0" for STATUS and GC,
// "0.1.0" otherwise.
std::string_view MinimumVersionFor(Verb verb);

// Checks a configuration's cniVersion for `verb`: absent -> code 7 (VERSION needs no
// configuration and always passes); not supported -> code 1; older than
// MinimumVersionFor(verb) -> code 1.
Status CheckConfigVersion(const std::optional<std::string>& cni_version, Verb verb);

// The version a VERSION request asks for: its stdin's "cniVersion" when that is
// supported, else kLatestVersion (stdin may be empty or not JSON).
std::string RequestedVersion(std::string_view version_stdin);

// The VERSION reply: {"cniVersion": cni_version, "supportedVersions": [...]}.
nlohmann::json VersionResult(std::string_view cni_version);

}  // namespace hcashare::cni
