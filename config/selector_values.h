// Normalisation of selector values (vendor/device IDs, link types, PCI addresses).
// Internal to the config module.
#pragma once

#include <string>

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

}  // namespace hcashare::config
