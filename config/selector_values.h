// Normalisation of selector values (vendor/device IDs, link types, PCI addresses, PF
// names with VF ranges). Internal to the config module.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "config/config.h"

namespace hcashare::config {

// Each normaliser checks one non-empty selector value. On success it stores the canonical
// form in *normalized and returns ""; otherwise it returns a message naming the value.
using Normalizer = std::string (*)(const std::string& value, std::string* normalized);

// Copies the value unchanged.
std::string KeepAsIs(const std::string& value, std::string* normalized);

// PCI vendor or device ID: optional "0x"/"0X", then exactly 4 hex digits -> "15b3".
std::string NormalizeHexId(const std::string& value, std::string* normalized);

// "ether"/"eth"/"ethernet" -> "ether", "infiniband"/"ib" -> "infiniband" (any case).
std::string NormalizeLinkType(const std::string& value, std::string* normalized);

// "DDDD:BB:DD.F" or "BB:DD.F" (domain 0000), hex, device <= 0x1f, function <= 7
// -> "0000:3b:00.0".
std::string NormalizePciAddress(const std::string& value, std::string* normalized);

// Longest network interface name (the kernel's IFNAMSIZ minus the terminating NUL).
inline constexpr size_t kMaxNetdevNameLength = 15;
// Largest VF index accepted in a `pfNames` range.
inline constexpr int kMaxVfIndex = 4095;

// One non-empty `pfNames` value: "NAME", or "NAME#" followed by a comma-separated list of
// VF ranges "N" or "N-M" with N <= M <= kMaxVfIndex (decimal), e.g. "ens1f0#0,2-7"; NAME is
// 1..15 characters without '/', '#' or whitespace. On success appends one selector per
// range to *out ("NAME" -> {NAME, -1, -1}, "NAME#N" -> {NAME, N, N}) and returns "";
// otherwise appends nothing and returns a message naming the value.
std::string ParsePfNameSelectors(const std::string& value, std::vector<PfNameSelector>* out);

}  // namespace hcashare::config
