#include "cni/version.h"

#include <algorithm>

#include "cni/error.h"
#include "common/strings.h"
#include "json/fields.h"

namespace hcashare::cni {

using nlohmann::json;

namespace {

// Most digits in one version part (keeps the int far from overflow).
constexpr size_t kMaxPartDigits = 6;

// Parses one decimal part of a version.
std::optional<int> ParsePart(std::string_view part) {
  if (part.empty() || part.size() > kMaxPartDigits) return std::nullopt;
  int value = 0;
  for (char c : part) {
    if (c < '0' || c > '9') return std::nullopt;
    value = value * 10 + (c - '0');
  }
  return value;
}

}  // namespace

const std::vector<std::string>& SupportedVersions() {
  static const std::vector<std::string> kVersions = {"0.3.0", "0.3.1", "0.4.0", "1.0.0", "1.1.0"};
  return kVersions;
}

bool IsSupportedVersion(std::string_view version) {
  const auto& all = SupportedVersions();
  return std::find(all.begin(), all.end(), version) != all.end();
}

std::optional<SemVer> ParseSemVer(std::string_view version) {
  const size_t dot1 = version.find('.');
  if (dot1 == std::string_view::npos) return std::nullopt;
  const size_t dot2 = version.find('.', dot1 + 1);
  if (dot2 == std::string_view::npos) return std::nullopt;
  const auto major = ParsePart(version.substr(0, dot1));
  const auto minor = ParsePart(version.substr(dot1 + 1, dot2 - dot1 - 1));
  const auto patch = ParsePart(version.substr(dot2 + 1));
  if (!major || !minor || !patch) return std::nullopt;
  return SemVer{*major, *minor, *patch};
}

int Compare(const SemVer& a, const SemVer& b) {
  if (a.major != b.major) return a.major < b.major ? -1 : 1;
  if (a.minor != b.minor) return a.minor < b.minor ? -1 : 1;
  if (a.patch != b.patch) return a.patch < b.patch ? -1 : 1;
  return 0;
}

bool VersionAtLeast(std::string_view version, std::string_view minimum) {
  const auto v = ParseSemVer(version);
  const auto m = ParseSemVer(minimum);
  return v && m && Compare(*v, *m) >= 0;
}

std::string_view MinimumVersionFor(Verb verb) {
  switch (verb) {
    case Verb::kCheck:
      return "0.4.0";
    case Verb::kStatus:
    case Verb::kGc:
      return "1.1.0";
    case Verb::kAdd:
    case Verb::kDel:
    case Verb::kVersion:
      break;
  }
  return "0.1.0";
}

Status CheckConfigVersion(const std::optional<std::string>& cni_version, Verb verb) {
  if (verb == Verb::kVersion) return Status::Ok();
  if (!cni_version) {
    return CniStatus(kErrInvalidNetConf, "invalid network configuration", "cniVersion: required");
  }
  if (!IsSupportedVersion(*cni_version)) {
    return CniStatus(kErrIncompatibleVersion,
                     "unsupported cniVersion " + jsonin::Quote(*cni_version),
                     "supported versions: " + Join(SupportedVersions(), ", "));
  }
  const std::string_view minimum = MinimumVersionFor(verb);
  if (!VersionAtLeast(*cni_version, minimum)) {
    return CniStatus(
        kErrIncompatibleVersion,
        std::string(VerbName(verb)) + " is not supported by cniVersion " +
            jsonin::Quote(*cni_version),
        std::string(VerbName(verb)) + " needs cniVersion " + std::string(minimum) + " or later");
  }
  return Status::Ok();
}

std::string RequestedVersion(std::string_view version_stdin) {
  // Runtimes may send nothing; that is not an error worth decoding (a static binary's
  // first exception costs milliseconds).
  if (version_stdin.find_first_not_of(" \t\r\n") == std::string_view::npos) {
    return std::string(kLatestVersion);
  }
  const Result<json> request = jsonin::DecodeJson(version_stdin, "VERSION request");
  if (request.ok() && request->is_object()) {
    const auto it = request->find("cniVersion");
    if (it != request->end() && it->is_string() && IsSupportedVersion(it->get<std::string>())) {
      return it->get<std::string>();
    }
  }
  return std::string(kLatestVersion);
}

json VersionResult(std::string_view cni_version) {
  return {{"cniVersion", std::string(cni_version)}, {"supportedVersions", SupportedVersions()}};
}

}  // namespace hcashare::cni
