// The parsers of sysfs attribute values: each attribute hcashare reads is parsed here and
// nowhere else (docs/architecture.md, "One reader").
//
// sysfs files hold one value and a newline. These parse strictly: a file that is missing,
// empty or holds anything but the expected value reads as "unknown", never as 0, so a
// truncated or odd attribute cannot pose as NUMA node 0 or VF 0.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/host.h"
#include "hostfacts/facts.h"

namespace hcashare::hostfacts {

// Parses a whole sysfs value as an integer in `base` (10 or 16; base 16 takes an optional
// "0x"). Surrounding whitespace is allowed, anything else is not. nullopt when the text
// is empty, malformed or out of range for int64_t.
std::optional<int64_t> ParseSysfsInt(std::string_view text, int base = 10);

// The integer in file `path` (see ParseSysfsInt), or nullopt when unreadable or malformed.
std::optional<int64_t> ReadSysfsInt(const Host& host, const std::string& path, int base = 10);

// The one rule for a PCI vendor or device ID: an optional "0x" and exactly 4 hex digits,
// returned as 4 lower-case digits ("0x15B3" -> "15b3"); "" for anything else. Config
// selectors (config/selector_values.cc) and sysfs files use it alike.
std::string ParsePciId(std::string_view text);

// A sysfs vendor or device file's value ("0x15b3\n" -> "15b3"): ParsePciId after the
// surrounding whitespace is removed.
std::string ParseHexId(const std::string& text);

// A `class` file's value ("0x020700\n" -> 0x020700); -1 unless it is a 24-bit hex value.
int32_t ParseClassCode(std::string_view text);

// True for the class code of a PCI-to-PCI bridge (0x0604xx: a root port or a switch port).
inline bool IsPciBridgeClass(int32_t class_code) {
  return class_code >= 0 && class_code >> 8 == 0x0604;
}

// A non-negative int attribute (numa_node, sriov_numvfs, sfnum, a link width); -1 when it
// is negative (the kernel's "none"), malformed or out of range.
int ParseNonNegative(std::string_view text);

// The non-negative int in file `path` (see ParseNonNegative); -1 when unreadable.
int ReadNonNegative(const Host& host, const std::string& path);

// The NUMA node in file `path` (a device's numa_node), or -1 when the kernel reports none
// (-1), or the file is missing or malformed.
int ReadNumaNode(const Host& host, const std::string& path);

// The index N of a `virtfnN` entry name ("virtfn12" -> 12); -1 for any other name.
int VirtfnIndex(std::string_view entry);

// A link speed attribute in GT/s: both kernel forms ("16.0 GT/s PCIe", older "8 GT/s");
// -1 for "Unknown", "Unknown speed" or anything else.
double ParseLinkSpeedGts(std::string_view text);

// An RDMA port's `rate` ("100 Gb/sec (4X EDR)", "2.5 Gb/sec (1X SDR)") as whole Gb/s (100;
// 2): the leading decimal number with its fraction dropped, followed by " Gb/sec". -1 for
// anything else, or past 1,000,000 Gb/s.
int ParsePortRateGbps(std::string_view text);

// The IOMMU parameters of a kernel command line (/proc/cmdline): the tokens `iommu=...`,
// `iommu.*=...`, `intel_iommu=...` and `amd_iommu=...`, in order.
std::vector<std::string> ParseIommuCmdline(std::string_view text);

// True when the first line of /proc/driver/nvidia/version names the open kernel module
// ("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64 ...").
bool IsNvidiaOpenModule(std::string_view version_line);

// The (major, minor) of a kernel release ("6.1.0-18-amd64" -> {6, 1}); {-1, -1} when it
// does not start with "<major>.<minor>".
std::pair<int, int> ParseKernelRelease(std::string_view release);

// The ACS Control register in a PCI function's config space (the bytes of its sysfs
// `config`). The extended capability list is walked from 0x100 as the kernel walks it
// (u32 little-endian headers, ID = bits 15:0, next = (header >> 20) & 0xffc; at most 480
// steps, so a looped list ends) for ACS (ID 0x000D), whose Control register is the u16 at
// +6. kAcsUnread when the extended config space is not all there (a read without
// CAP_SYS_ADMIN returns 64 bytes, a device without ECAM 256) or reads as all ones;
// kAcsAbsent when the list ends without ACS.
int ParseAcsCtrl(std::string_view config);

// ParseAcsCtrl of the `config` of the PCI function at sysfs dir `dir`; kAcsUnread when the
// file is unreadable.
int ReadAcsCtrl(const Host& host, const std::string& dir);

// The identity of the first CPU of /proc/cpuinfo (x86: vendor_id, cpu family, model).
struct CpuIdentity {
  std::string vendor;  // `vendor_id`; "" when absent (e.g. on arm64)
  int family = -1;     // `cpu family`; -1 when absent or malformed
  int model = -1;      // `model` (not `model name`); -1 when absent or malformed
};

// Parses the first processor block of /proc/cpuinfo ("key<tabs>: value" lines up to the
// first blank line or the next `processor` line).
CpuIdentity ParseCpuInfo(std::string_view cpuinfo);

// The CPU architecture from /sys/devices/system/cpu/modalias ("cpu:type:x86,ven...",
// "cpu:type:aarch64:feature:..."), for kernels before 6.1 that lack /proc/sys/kernel/arch:
// "x86_64" for type x86 (the only x86 NCCL runs on), "aarch64"; "" for anything else.
std::string ParseCpuModaliasArch(std::string_view modalias);

// Parses /proc/driver/nvidia/gpus/<address>/information ("Key:<whitespace>value" lines):
// `Model`, `GPU UUID` and `Device Minor`. The result's `address` is left empty.
NvidiaGpu ParseNvidiaGpuInformation(std::string_view information);

}  // namespace hcashare::hostfacts
