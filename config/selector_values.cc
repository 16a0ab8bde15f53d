#include "config/selector_values.h"

#include <cctype>
#include <string_view>

#include "config/document.h"

namespace hcashare::config {
namespace {

std::string ToLowerAscii(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

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

}  // namespace

std::string KeepAsIs(const std::string& value, std::string* normalized) {
  *normalized = value;
  return "";
}

std::string NormalizeHexId(const std::string& value, std::string* normalized) {
  std::string_view digits = value;
  if (digits.size() > 2 && digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X')) {
    digits.remove_prefix(2);
  }
  if (digits.size() != 4 || !IsHex(digits)) {
    return Quote(value) + " is not a PCI ID: expected 4 hex digits, e.g. \"15b3\" or \"0x15b3\"";
  }
  *normalized = ToLowerAscii(digits);
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

}  // namespace hcashare::config
