#include "common/sysfs_attr.h"

#include <cerrno>
#include <cstdlib>
#include <limits>

namespace hcashare {

namespace {

constexpr std::string_view kSpace = " \t\n\r";
constexpr const char* kPciDevices = "/sys/bus/pci/devices/";

}  // namespace

std::optional<int64_t> ParseSysfsInt(std::string_view text, int base) {
  const size_t first = text.find_first_not_of(kSpace);
  if (first == std::string_view::npos) return std::nullopt;
  text = text.substr(first, text.find_last_not_of(kSpace) - first + 1);
  bool negative = false;
  if (text[0] == '-' || text[0] == '+') {
    negative = text[0] == '-';
    text.remove_prefix(1);
  }
  if (base == 16 && text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
    text.remove_prefix(2);
  }
  if (text.empty()) return std::nullopt;
  // Accumulate as a negative number so INT64_MIN parses too.
  int64_t value = 0;
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  for (char c : text) {
    int digit;
    if (c >= '0' && c <= '9') {
      digit = c - '0';
    } else if (base == 16 && c >= 'a' && c <= 'f') {
      digit = c - 'a' + 10;
    } else if (base == 16 && c >= 'A' && c <= 'F') {
      digit = c - 'A' + 10;
    } else {
      return std::nullopt;
    }
    if (digit >= base || value < (kMin + digit) / base) return std::nullopt;
    value = value * base - digit;
  }
  if (negative) return value;
  if (value == kMin) return std::nullopt;
  return -value;
}

std::optional<int64_t> ReadSysfsInt(const Host& host, const std::string& path, int base) {
  auto text = host.ReadFile(path);
  if (!text.ok()) return std::nullopt;
  return ParseSysfsInt(*text, base);
}

int ReadNumaNode(const Host& host, const std::string& path) {
  const std::optional<int64_t> node = ReadSysfsInt(host, path);
  if (!node || *node < 0 || *node > std::numeric_limits<int>::max()) return -1;
  return static_cast<int>(*node);
}

int ReadVfIndex(const Host& host, const std::string& pf, const std::string& vf) {
  const std::string dir = kPciDevices + pf;
  auto entries = host.ListDir(dir);
  if (!entries.ok()) return -1;
  for (const auto& e : *entries) {
    if (e.rfind("virtfn", 0) != 0 || e.size() == 6 || e[6] < '0' || e[6] > '9') continue;
    const std::optional<int64_t> index = ParseSysfsInt(std::string_view(e).substr(6));
    if (!index || *index < 0 || *index > std::numeric_limits<int>::max()) continue;
    auto target = host.ReadLink(dir + "/" + e);
    if (target.ok() && BaseName(*target) == vf) return static_cast<int>(*index);
  }
  return -1;
}

}  // namespace hcashare
