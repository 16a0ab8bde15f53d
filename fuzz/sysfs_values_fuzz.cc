// Fuzzes the parsers of values read from sysfs and the kernel, and the selector values
// that are compared with them: ParseHexId (PCI vendor/device files), ParseSysfsInt
// (numa_node, class, sfnum), ParseUevent (kernel uevents that trigger rescans), and the
// config normalisers NormalizeHexId,
// NormalizePciAddress, NormalizeLinkType and ParsePfNameSelectors (pfNames VF ranges).
// Invariants beyond "no crash":
//  - ParseHexId gives "" or 4 lower-case hex digits, is idempotent, and agrees with
//    NormalizeHexId wherever that accepts the value;
//  - ParseSysfsInt accepts only signs and digits (base 10) around whitespace, and a value
//    it returns, rendered back (decimal, or hex with 0x), parses to the same value;
//  - each normaliser accepts its own output unchanged (idempotent);
//  - NormalizePciAddress agrees with the CNI's ParseDeviceName on PCI addresses;
//  - pfNames: each selector has a 1..15-character name and 0 <= first <= last <= 4095
//    (or no range), and rendering the selectors back parses to the same selectors;
//  - a parsed uevent has a non-empty action and devpath, and its env agrees with them;
//  - ParseAcsCtrl gives kAcsUnread, kAcsAbsent or a 16-bit register; ParseCpuInfo and
//    ParseNvidiaGpuInformation give -1 or a non-negative number for their numbers;
//    ParseCpuModaliasArch gives "", "x86_64" or "aarch64".
#include <cctype>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "cni/syntax.h"
#include "common/uevent.h"
#include "config/selector_values.h"
#include "fuzz/fuzz_check.h"
#include "hostfacts/attrs.h"

namespace {

namespace config = hcashare::config;

void FuzzHexId(const std::string& text) {
  const std::string id = hcashare::hostfacts::ParseHexId(text);
  if (!id.empty()) {
    FUZZ_CHECK(id.size() == 4);
    for (char c : id) FUZZ_CHECK(std::isxdigit(static_cast<unsigned char>(c)) && !std::isupper(c));
    FUZZ_CHECK(hcashare::hostfacts::ParseHexId(id) == id);
  }
  std::string normalized;
  if (config::NormalizeHexId(text, &normalized).empty()) FUZZ_CHECK(normalized == id);
}

// `v` as base-16 text with a sign and a 0x prefix.
std::string ToHex(int64_t v) {
  const uint64_t magnitude = v < 0 ? 0 - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%s0x%llx", v < 0 ? "-" : "",
                static_cast<unsigned long long>(magnitude));
  return buf;
}

void FuzzSysfsInt(const std::string& text) {
  const auto value = hcashare::hostfacts::ParseSysfsInt(text);
  if (value) {
    const size_t first = text.find_first_not_of(" \t\n\r");
    const size_t last = text.find_last_not_of(" \t\n\r");
    std::string core = text.substr(first, last - first + 1);
    if (core[0] == '+') core.erase(0, 1);
    // Leading zeros are accepted ("007"), so compare the value, then the rendering.
    FUZZ_CHECK(hcashare::hostfacts::ParseSysfsInt(std::to_string(*value)) == value);
    FUZZ_CHECK(core.find_first_not_of("-0123456789") == std::string::npos);
  }
  const auto hex = hcashare::hostfacts::ParseSysfsInt(text, 16);
  if (hex) FUZZ_CHECK(hcashare::hostfacts::ParseSysfsInt(ToHex(*hex), 16) == hex);
}

// Checks that `normalize` accepts its own output unchanged; returns whether it accepted.
bool CheckIdempotent(config::Normalizer normalize, const std::string& text,
                     std::string* normalized) {
  if (!normalize(text, normalized).empty()) return false;
  std::string again;
  FUZZ_CHECK(normalize(*normalized, &again).empty());
  FUZZ_CHECK(again == *normalized);
  return true;
}

void FuzzPciAddress(const std::string& text) {
  std::string pci;
  const bool ok = CheckIdempotent(config::NormalizePciAddress, text, &pci);
  const auto device = hcashare::cni::ParseDeviceName(text);
  const bool cni_pci = device && device->kind == hcashare::cni::DeviceKind::kPciFunction;
  FUZZ_CHECK(ok == cni_pci);
  if (ok) FUZZ_CHECK(device->value == pci);
}

void FuzzPfNames(const std::string& text) {
  std::vector<config::PfNameSelector> selectors;
  if (!config::ParsePfNameSelectors(text, &selectors).empty()) {
    FUZZ_CHECK(selectors.empty());
    return;
  }
  FUZZ_CHECK(!selectors.empty());
  std::string rendered = selectors[0].pf;
  for (size_t i = 0; i < selectors.size(); ++i) {
    const config::PfNameSelector& s = selectors[i];
    FUZZ_CHECK(s.pf == selectors[0].pf);
    FUZZ_CHECK(!s.pf.empty() && s.pf.size() <= config::kMaxNetdevNameLength);
    if (s.first_vf < 0) {
      FUZZ_CHECK(selectors.size() == 1 && s.last_vf == -1);
      continue;
    }
    FUZZ_CHECK(s.first_vf <= s.last_vf && s.last_vf <= config::kMaxVfIndex);
    rendered += (i == 0 ? "#" : ",") + std::to_string(s.first_vf);
    if (s.last_vf != s.first_vf) rendered += "-" + std::to_string(s.last_vf);
  }
  std::vector<config::PfNameSelector> again;
  FUZZ_CHECK(config::ParsePfNameSelectors(rendered, &again).empty());
  FUZZ_CHECK(again == selectors);
}

void FuzzUevent(const std::string& text) {
  const auto ev = hcashare::ParseUevent(text.data(), text.size());
  if (!ev.ok()) return;
  FUZZ_CHECK(!ev->action.empty() && !ev->devpath.empty());
  const auto action = ev->env.find("ACTION");
  if (action != ev->env.end()) FUZZ_CHECK(action->second == ev->action);
  const auto devpath = ev->env.find("DEVPATH");
  if (devpath != ev->env.end()) FUZZ_CHECK(devpath->second == ev->devpath);
  const auto subsystem = ev->env.find("SUBSYSTEM");
  FUZZ_CHECK(ev->subsystem == (subsystem == ev->env.end() ? "" : subsystem->second));
}

}  // namespace

// The parsers of the GPU <-> NIC path facts (config space, /proc/cpuinfo, NVIDIA procfs).
void FuzzPlatformFacts(const std::string& text) {
  namespace hostfacts = hcashare::hostfacts;
  const int acs = hostfacts::ParseAcsCtrl(text);
  FUZZ_CHECK(acs == hostfacts::kAcsUnread || acs == hostfacts::kAcsAbsent ||
             (acs >= 0 && acs <= 0xffff));
  const hostfacts::CpuIdentity cpu = hostfacts::ParseCpuInfo(text);
  FUZZ_CHECK(cpu.family >= -1 && cpu.model >= -1);
  FUZZ_CHECK(hostfacts::ParseNvidiaGpuInformation(text).minor >= -1);
  const std::string arch = hostfacts::ParseCpuModaliasArch(text);
  FUZZ_CHECK(arch.empty() || arch == "x86_64" || arch == "aarch64");
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  FuzzHexId(text);
  FuzzSysfsInt(text);
  FuzzPciAddress(text);
  std::string link_type;
  CheckIdempotent(config::NormalizeLinkType, text, &link_type);
  FuzzPfNames(text);
  FuzzUevent(text);
  FuzzPlatformFacts(text);
  return 0;
}
