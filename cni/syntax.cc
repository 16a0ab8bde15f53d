#include "cni/syntax.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "common/strings.h"
#include "config/names.h"

namespace hcashare::cni {

namespace {

// Longest device name accepted (PCI addresses are 12 bytes; aux names are short too).
constexpr size_t kMaxDeviceNameLength = 128;

bool IsControlOrSpace(char c) {
  const auto u = static_cast<unsigned char>(c);
  return u <= 0x20 || u == 0x7f;
}

bool IsHex(char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; }

bool IsWordChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

bool AllOf(std::string_view s, bool (*pred)(char)) {
  for (char c : s) {
    if (!pred(c)) return false;
  }
  return true;
}

int HexValue(std::string_view s) { return std::stoi(std::string(s), nullptr, 16); }

// "a.b.c" -> {"a", "b", "c"}.
std::vector<std::string_view> SplitDots(std::string_view s) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (true) {
    const size_t dot = s.find('.', start);
    parts.push_back(s.substr(start, dot == std::string_view::npos ? dot : dot - start));
    if (dot == std::string_view::npos) return parts;
    start = dot + 1;
  }
}

// "DDDD:BB:DD.F" -> normalised, or std::nullopt.
std::optional<std::string> ParsePciAddress(std::string_view s) {
  if (s.size() == 7) return ParsePciAddress("0000:" + std::string(s));
  if (s.size() != 12 || s[4] != ':' || s[7] != ':' || s[10] != '.') return std::nullopt;
  const std::string_view domain = s.substr(0, 4), bus = s.substr(5, 2), dev = s.substr(8, 2);
  const char function = s[11];
  if (!AllOf(domain, IsHex) || !AllOf(bus, IsHex) || !AllOf(dev, IsHex)) return std::nullopt;
  if (HexValue(dev) > 0x1f || function < '0' || function > '7') return std::nullopt;
  return ToLowerAscii(s);
}

// "mlx5_core.sf.4": at least three dot-separated words, the last one decimal.
bool IsAuxDeviceName(std::string_view s) {
  const std::vector<std::string_view> parts = SplitDots(s);
  if (parts.size() < 3) return false;
  for (std::string_view part : parts) {
    if (part.empty() || !AllOf(part, IsWordChar)) return false;
  }
  return AllOf(parts.back(), [](char c) { return c >= '0' && c <= '9'; });
}

}  // namespace

Problem CheckIdentifier(std::string_view s) {
  if (s.empty()) return "is empty";
  if (s.size() > kMaxIdentifierLength) {
    return "is longer than " + std::to_string(kMaxIdentifierLength) + " bytes";
  }
  if (!std::isalnum(static_cast<unsigned char>(s[0]))) return "must start with a letter or digit";
  for (char c : s) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '.' && c != '-') {
      return "may contain only letters, digits, '_', '.' and '-'";
    }
  }
  return std::nullopt;
}

Problem CheckIfName(std::string_view s) {
  std::string problem = config::IfNameProblem(s);
  if (problem.empty()) return std::nullopt;
  return problem;
}

Problem CheckUtf8(std::string_view s) {
  if (FirstNonUtf8Byte(s) == std::string_view::npos) return std::nullopt;
  return "is not valid UTF-8";
}

Problem CheckResourceName(std::string_view s) {
  std::string problem = config::ExtendedResourceNameProblem(s);
  if (problem.empty()) return std::nullopt;
  return problem;
}

Problem CheckAbsolutePath(std::string_view s) {
  if (s.empty() || s[0] != '/') return "must be an absolute path";
  if (s.size() > kMaxPathLength) {
    return "is longer than " + std::to_string(kMaxPathLength) + " bytes";
  }
  if (Problem problem = CheckUtf8(s)) return problem;
  for (char c : s) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
      return "must not contain control characters";
    }
  }
  size_t start = 0;
  while (start <= s.size()) {
    size_t slash = s.find('/', start);
    if (slash == std::string_view::npos) slash = s.size();
    if (s.substr(start, slash - start) == "..") return "must not contain a \"..\" component";
    start = slash + 1;
  }
  return std::nullopt;
}

Problem CheckPluginName(std::string_view s) {
  if (s.empty()) return "is empty";
  if (s == "." || s == "..") return "must not be \".\" or \"..\"";
  for (char c : s) {
    if (c == '/') return "must be a plugin name, not a path";
    if (IsControlOrSpace(c)) return "must not contain whitespace or control characters";
  }
  return std::nullopt;
}

std::optional<DeviceName> ParseDeviceName(std::string_view s) {
  if (s.size() > kMaxDeviceNameLength) return std::nullopt;
  if (auto pci = ParsePciAddress(s)) return DeviceName{DeviceKind::kPciFunction, *pci};
  if (IsAuxDeviceName(s)) return DeviceName{DeviceKind::kAuxDevice, std::string(s)};
  return std::nullopt;
}

std::optional<std::vector<uint8_t>> ParseHardwareAddress(std::string_view s) {
  // The octet written as two hex digits at `s[at]`.
  const auto octet = [s](size_t at) -> std::optional<uint8_t> {
    if (at + 2 > s.size() || !IsHex(s[at]) || !IsHex(s[at + 1])) return std::nullopt;
    return static_cast<uint8_t>(HexValue(s.substr(at, 2)));
  };
  const auto valid_count = [](size_t n) { return n == 6 || n == 8 || n == 20; };
  if (s.size() < 14) return std::nullopt;
  // Octets (`per_group` of them) in groups of `stride` characters, each group but the last
  // followed by `separator`.
  const auto groups = [&](char separator, size_t per_group) -> std::optional<std::vector<uint8_t>> {
    const size_t stride = per_group * 2 + 1;
    if ((s.size() + 1) % stride != 0) return std::nullopt;
    if (!valid_count((s.size() + 1) / stride * per_group)) return std::nullopt;
    std::vector<uint8_t> out;
    for (size_t at = 0; at < s.size(); at += stride) {
      for (size_t i = 0; i < per_group; ++i) {
        const std::optional<uint8_t> b = octet(at + 2 * i);
        if (!b) return std::nullopt;
        out.push_back(*b);
      }
      if (at + stride - 1 < s.size() && s[at + stride - 1] != separator) return std::nullopt;
    }
    return out;
  };
  if (s[2] == ':' || s[2] == '-') return groups(s[2], 1);
  if (s[4] == '.') return groups('.', 2);
  return std::nullopt;
}

std::optional<std::string> ParseUnicastMac(std::string_view s, std::string* problem) {
  auto fail = [problem](const char* why) -> std::optional<std::string> {
    if (problem) *problem = why;
    return std::nullopt;
  };
  const std::optional<std::vector<uint8_t>> mac = ParseHardwareAddress(s);
  if (!mac || mac->size() != 6) {
    return fail(
        "must be six hex octets, as 02:00:00:00:00:01, 02-00-00-00-00-01 or 0200.0000.0001");
  }
  if ((*mac)[0] & 1) return fail("must be a unicast address");
  if (std::all_of(mac->begin(), mac->end(), [](uint8_t b) { return b == 0; })) {
    return fail("must not be all zeros");
  }
  char text[18];
  std::snprintf(text, sizeof text, "%02x:%02x:%02x:%02x:%02x:%02x", (*mac)[0], (*mac)[1], (*mac)[2],
                (*mac)[3], (*mac)[4], (*mac)[5]);
  return std::string(text);
}

}  // namespace hcashare::cni
