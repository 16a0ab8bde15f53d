// Small string helpers shared across modules.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace hcashare {

// Joins `parts` with `sep` between them ("" for no parts).
std::string Join(const std::vector<std::string>& parts, const std::string& sep = ",");

// ASCII lower-case copy of `s` (other bytes are kept).
std::string ToLowerAscii(std::string_view s);

// `s` with every character that appears in `chars` replaced by `with`.
std::string ReplaceAny(std::string s, const std::string& chars, char with);

// A path as one file-name component, reversibly: letters, digits, '.' and '-' are kept,
// '/' becomes '_', every other byte %XX ("/var/lib/kubelet" -> "_var_lib_kubelet").
std::string PathAsFileName(const std::string& path);

}  // namespace hcashare
