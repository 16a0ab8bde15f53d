// Typed reads of sysfs attributes through the Host seam.
//
// sysfs files hold one value and a newline. These helpers parse them strictly: a file
// that is missing, empty or holds anything but the expected number reads as "unknown",
// never as 0, so a truncated or odd attribute cannot pose as NUMA node 0 or VF 0.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/host.h"

namespace hcashare {

// Parses a whole sysfs value as an integer in `base` (10 or 16; base 16 takes an optional
// "0x"). Surrounding whitespace is allowed, anything else is not. nullopt when the text
// is empty, malformed or out of range for int64_t.
std::optional<int64_t> ParseSysfsInt(std::string_view text, int base = 10);

// The integer in file `path` (see ParseSysfsInt), or nullopt when unreadable or malformed.
std::optional<int64_t> ReadSysfsInt(const Host& host, const std::string& path, int base = 10);

// The NUMA node in file `path` (a device's numa_node), or -1 when the kernel reports none
// (-1), or the file is missing or malformed.
int ReadNumaNode(const Host& host, const std::string& path);

// The index N of the `virtfnN` link under PCI function `pf` that points at function `vf`
// (both PCI addresses), or -1 when `pf` has no such link.
int ReadVfIndex(const Host& host, const std::string& pf, const std::string& vf);

}  // namespace hcashare
