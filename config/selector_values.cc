#include "config/selector_values.h"

#include <algorithm>
#include <cctype>
#include <string_view>
#include <utility>

#include "common/strings.h"
#include "config/json_fields.h"
#include "hostfacts/attrs.h"

namespace hcashare::config {
namespace {

bool IsHex(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!std::isxdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

// Parses exactly `width` hex digits into *value.
bool ParseHexField(std::string_view s, size_t width, unsigned* value) {
  if (s.size() != width || !IsHex(s)) return false;
  *value = 0;
  for (char c : s) {
    const int digit = std::isdigit(static_cast<unsigned char>(c))
                          ? c - '0'
                          : std::tolower(static_cast<unsigned char>(c)) - 'a' + 10;
    *value = *value * 16 + static_cast<unsigned>(digit);
  }
  return true;
}

// The accepted `pfNames` forms, appended to syntax errors.
constexpr const char* kPfNameForms =
    "(want NAME, NAME#N or NAME#N-M with N <= M, or a comma-separated list of ranges as in "
    "NAME#0,2-7)";

// Parses a VF index: one or more decimal digits. Values above kMaxVfIndex are stored as
// kMaxVfIndex + 1, so long digit strings cannot overflow. False when `s` is not digits.
bool ParseVfIndex(std::string_view s, int* value) {
  if (s.empty()) return false;
  *value = 0;
  for (char c : s) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
    *value = std::min(*value * 10 + (c - '0'), kMaxVfIndex + 1);
  }
  return true;
}

// Why `name`, the part of the `pfNames` entry `value` before any '#', is not a netdev
// name, or "" when it is.
std::string PfNameProblem(std::string_view name, const std::string& value) {
  if (name.empty()) return Quote(value) + " has no PF name before '#' " + kPfNameForms;
  const std::string quoted = Quote(std::string(name));
  if (name.size() > kMaxNetdevNameLength) {
    return "PF name " + quoted + " is " + std::to_string(name.size()) +
           " characters long; interface names have at most " + std::to_string(kMaxNetdevNameLength);
  }
  for (char c : name) {
    if (c == '/' || std::isspace(static_cast<unsigned char>(c))) {
      return "PF name " + quoted + " may not contain '/' or whitespace";
    }
  }
  return "";
}

// Parses `range`, one range of the `pfNames` entry `value` after '#' ("N" or "N-M"), into
// *first and *last. Returns "" on success, else a message naming `value`.
std::string VfRangeProblem(std::string_view range, const std::string& value, int* first,
                           int* last) {
  const size_t dash = range.find('-');
  const std::string_view first_text = range.substr(0, dash);
  const std::string_view last_text =
      dash == std::string_view::npos ? first_text : range.substr(dash + 1);
  if (!ParseVfIndex(first_text, first) || !ParseVfIndex(last_text, last) || *first > *last) {
    return "invalid VF range " + Quote(value) + " " + kPfNameForms;
  }
  if (*last > kMaxVfIndex) {
    return "invalid VF range " + Quote(value) + ": VF indexes go up to " +
           std::to_string(kMaxVfIndex);
  }
  return "";
}

}  // namespace

std::string KeepAsIs(const std::string& value, std::string* normalized) {
  *normalized = value;
  return "";
}

std::string NormalizeHexId(const std::string& value, std::string* normalized) {
  // The same rule as the sysfs vendor and device files (hostfacts/attrs.h).
  std::string id = hostfacts::ParsePciId(value);
  if (id.empty()) {
    return Quote(value) + " is not a PCI ID: expected 4 hex digits, e.g. \"15b3\" or \"0x15b3\"";
  }
  *normalized = std::move(id);
  return "";
}

std::string NormalizeLinkType(const std::string& value, std::string* normalized) {
  const std::string lower = ToLowerAscii(value);
  if (lower == "ether" || lower == "eth" || lower == "ethernet") {
    *normalized = "ether";
  } else if (lower == "infiniband" || lower == "ib") {
    *normalized = "infiniband";
  } else {
    return "unknown link type " + Quote(value) +
           "; accepted values: \"ether\" (or \"eth\", \"ethernet\"), \"infiniband\" (or \"ib\")";
  }
  return "";
}

std::string NormalizePciAddress(const std::string& value, std::string* normalized) {
  const std::string error = Quote(value) +
                            " is not a PCI address: expected \"DDDD:BB:DD.F\" or \"BB:DD.F\" "
                            "in hex, e.g. \"0000:3b:00.0\"";
  std::string_view rest = value;
  std::string_view domain = "0000";
  // With a domain: 4 + 1 + 2 + 1 + 2 + 1 + 1 = 12 characters; without: 7.
  if (rest.size() == 12) {
    if (rest[4] != ':') return error;
    domain = rest.substr(0, 4);
    rest.remove_prefix(5);
  }
  if (rest.size() != 7 || rest[2] != ':' || rest[5] != '.') return error;
  unsigned domain_num = 0, bus = 0, device = 0, function = 0;
  if (!ParseHexField(domain, 4, &domain_num) || !ParseHexField(rest.substr(0, 2), 2, &bus) ||
      !ParseHexField(rest.substr(3, 2), 2, &device) ||
      !ParseHexField(rest.substr(6, 1), 1, &function)) {
    return error;
  }
  if (device > 0x1f) {
    return Quote(value) + " has device number 0x" + ToLowerAscii(rest.substr(3, 2)) +
           "; the maximum is 0x1f";
  }
  if (function > 7) {
    return Quote(value) + " has function number " + std::string(rest.substr(6, 1)) +
           "; the maximum is 7";
  }
  *normalized = ToLowerAscii(domain) + ":" + ToLowerAscii(rest);
  return "";
}

std::string ParsePfNameSelectors(const std::string& value, std::vector<PfNameSelector>* out) {
  const size_t hash = value.find('#');
  const std::string_view name = std::string_view(value).substr(0, hash);
  std::string problem = PfNameProblem(name, value);
  if (!problem.empty()) return problem;
  std::vector<PfNameSelector> selectors;
  if (hash == std::string::npos) {
    selectors.push_back({std::string(name), -1, -1});
  } else {
    // "NAME#R[,R...]": each comma-separated range is one selector.
    std::string_view ranges = std::string_view(value).substr(hash + 1);
    for (;;) {
      const size_t comma = ranges.find(',');
      PfNameSelector selector{std::string(name), -1, -1};
      problem =
          VfRangeProblem(ranges.substr(0, comma), value, &selector.first_vf, &selector.last_vf);
      if (!problem.empty()) return problem;
      selectors.push_back(std::move(selector));
      if (comma == std::string_view::npos) break;
      ranges.remove_prefix(comma + 1);
    }
  }
  out->insert(out->end(), selectors.begin(), selectors.end());
  return "";
}

}  // namespace hcashare::config
