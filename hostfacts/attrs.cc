#include "hostfacts/attrs.h"

#include <cctype>
#include <cstdlib>
#include <limits>

namespace hcashare::hostfacts {

namespace {

constexpr std::string_view kSpace = " \t\n\r";

// PCIe extended configuration space (include/uapi/linux/pci_regs.h).
constexpr size_t kExtCapBase = 0x100;  // PCI_CFG_SPACE_SIZE: the first extended capability
constexpr int kExtCapMaxSteps = (4096 - 256) / 8;  // the kernel's ttl
constexpr uint32_t kAcsCapId = 0x000d;             // PCI_EXT_CAP_ID_ACS
constexpr size_t kAcsCtrlOffset = 6;               // PCI_ACS_CTRL

std::string_view Trim(std::string_view text) {
  const size_t first = text.find_first_not_of(kSpace);
  if (first == std::string_view::npos) return {};
  return text.substr(first, text.find_last_not_of(kSpace) - first + 1);
}

// The little-endian integer of `bytes` bytes at `at` of `data`. REQUIRES: it is in range.
uint32_t LittleEndian(std::string_view data, size_t at, int bytes) {
  uint32_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) {
    v = (v << 8) | static_cast<unsigned char>(data[at + static_cast<size_t>(i)]);
  }
  return v;
}

// Calls `fn(key, value)` for each "key:value" line of `text` (both trimmed; lines without
// ':' are skipped, a blank line is passed as an empty key and value) until it returns false.
template <typename F>
void ForEachKeyValue(std::string_view text, F fn) {
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(start, end - start);
    start = end + 1;
    const size_t colon = line.find(':');
    if (Trim(line).empty()) {
      if (!fn(std::string_view(), std::string_view())) return;
    } else if (colon != std::string_view::npos) {
      if (!fn(Trim(line.substr(0, colon)), Trim(line.substr(colon + 1)))) return;
    }
  }
}

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

std::string ParsePciId(std::string_view text) {
  if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
    text.remove_prefix(2);
  }
  if (text.size() != 4) return "";
  std::string out(text);
  for (char& c : out) {
    if (!std::isxdigit(static_cast<unsigned char>(c))) return "";
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return out;
}

std::string ParseHexId(const std::string& text) { return ParsePciId(Trim(text)); }

int32_t ParseClassCode(std::string_view text) {
  const std::optional<int64_t> code = ParseSysfsInt(text, 16);
  return code && *code >= 0 && *code <= 0xffffff ? static_cast<int32_t>(*code) : -1;
}

int ParseNonNegative(std::string_view text) {
  const std::optional<int64_t> v = ParseSysfsInt(text);
  if (!v || *v < 0 || *v > std::numeric_limits<int>::max()) return -1;
  return static_cast<int>(*v);
}

int ReadNonNegative(const Host& host, const std::string& path) {
  auto text = host.ReadFile(path);
  return text.ok() ? ParseNonNegative(*text) : -1;
}

int ReadNumaNode(const Host& host, const std::string& path) { return ReadNonNegative(host, path); }

int VirtfnIndex(std::string_view e) {
  if (e.rfind("virtfn", 0) != 0 || e.size() == 6 || e[6] < '0' || e[6] > '9') return -1;
  return ParseNonNegative(e.substr(6));
}

int ParsePortRateGbps(std::string_view text) {
  size_t i = 0;
  int64_t whole = 0;
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
    whole = whole * 10 + (text[i] - '0');
    if (whole > 1000000) return -1;
    ++i;
  }
  if (i == 0) return -1;
  if (i < text.size() && text[i] == '.') {
    const size_t fraction = ++i;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) ++i;
    if (i == fraction) return -1;
  }
  constexpr std::string_view kUnit = " Gb/sec";
  if (text.substr(i, kUnit.size()) != kUnit) return -1;
  return static_cast<int>(whole);
}

double ParseLinkSpeedGts(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) {
    text.remove_suffix(1);
  }
  for (std::string_view suffix : {" PCIe", " GT/s"}) {
    if (text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix) {
      text.remove_suffix(suffix.size());
    } else if (suffix == std::string_view(" GT/s")) {
      return -1;
    }
  }
  // "16.0" or "8": digits, at most one '.', then digits.
  if (text.empty() || text.size() > 8 || !std::isdigit(static_cast<unsigned char>(text[0]))) {
    return -1;
  }
  double value = 0, scale = 0;
  for (char c : text) {
    if (c == '.' && scale == 0) {
      scale = 1;
    } else if (std::isdigit(static_cast<unsigned char>(c))) {
      if (scale == 0) {
        value = value * 10 + (c - '0');
      } else {
        scale /= 10;
        value += (c - '0') * scale;
      }
    } else {
      return -1;
    }
  }
  return value > 0 ? value : -1;
}

std::vector<std::string> ParseIommuCmdline(std::string_view text) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
    size_t end = i;
    while (end < text.size() && !std::isspace(static_cast<unsigned char>(text[end]))) ++end;
    const std::string_view tok = text.substr(i, end - i);
    for (std::string_view prefix : {"iommu=", "iommu.", "intel_iommu=", "amd_iommu="}) {
      if (tok.substr(0, prefix.size()) == prefix) {
        out.emplace_back(tok);
        break;
      }
    }
    i = end;
  }
  return out;
}

bool IsNvidiaOpenModule(std::string_view version_line) {
  return version_line.find("Open Kernel Module") != std::string_view::npos;
}

std::pair<int, int> ParseKernelRelease(std::string_view release) {
  int part[2] = {-1, -1};
  size_t i = 0;
  for (int k = 0; k < 2; ++k) {
    if (k == 1) {
      if (i >= release.size() || release[i] != '.') return {-1, -1};
      ++i;
    }
    const size_t start = i;
    int v = 0;
    while (i < release.size() && std::isdigit(static_cast<unsigned char>(release[i])) &&
           i - start < 4) {
      v = v * 10 + (release[i++] - '0');
    }
    if (i == start) return {-1, -1};
    part[k] = v;
  }
  return {part[0], part[1]};
}

int ParseAcsCtrl(std::string_view config) {
  size_t pos = kExtCapBase;
  for (int step = 0; step < kExtCapMaxSteps; ++step) {
    if (pos + 4 > config.size()) return kAcsUnread;
    const uint32_t header = LittleEndian(config, pos, 4);
    if (header == 0xffffffff) return kAcsUnread;  // the device did not answer
    if (header == 0) return kAcsAbsent;           // no extended capabilities
    if ((header & 0xffff) == kAcsCapId) {
      if (pos + kAcsCtrlOffset + 2 > config.size()) return kAcsUnread;
      return static_cast<int>(LittleEndian(config, pos + kAcsCtrlOffset, 2));
    }
    pos = (header >> 20) & 0xffc;
    if (pos < kExtCapBase) return kAcsAbsent;  // the end of the list
  }
  return kAcsAbsent;  // a looped list
}

int ReadAcsCtrl(const Host& host, const std::string& dir) {
  auto config = host.ReadFile(dir + "/config");
  return config.ok() ? ParseAcsCtrl(*config) : kAcsUnread;
}

CpuIdentity ParseCpuInfo(std::string_view cpuinfo) {
  CpuIdentity id;
  bool in_block = false;
  ForEachKeyValue(cpuinfo, [&](std::string_view key, std::string_view value) {
    if (key.empty() || key == "processor") {
      if (in_block) return false;  // the end of the first processor's block
      in_block = !key.empty();
      return true;
    }
    in_block = true;
    if (key == "vendor_id") id.vendor = std::string(value);
    if (key == "cpu family") id.family = ParseNonNegative(value);
    if (key == "model") id.model = ParseNonNegative(value);
    return true;
  });
  return id;
}

std::string ParseCpuModaliasArch(std::string_view modalias) {
  constexpr std::string_view kPrefix = "cpu:type:";
  if (modalias.substr(0, kPrefix.size()) != kPrefix) return "";
  const std::string_view rest = modalias.substr(kPrefix.size());
  const std::string_view type = rest.substr(0, rest.find_first_of(",:\n"));
  if (type == "x86") return "x86_64";
  if (type == "aarch64") return "aarch64";
  return "";
}

NvidiaGpu ParseNvidiaGpuInformation(std::string_view information) {
  NvidiaGpu gpu;
  ForEachKeyValue(information, [&gpu](std::string_view key, std::string_view value) {
    if (key == "Model") gpu.model = std::string(value);
    if (key == "GPU UUID") gpu.uuid = std::string(value);
    if (key == "Device Minor") gpu.minor = ParseNonNegative(value);
    return true;
  });
  return gpu;
}

}  // namespace hcashare::hostfacts
