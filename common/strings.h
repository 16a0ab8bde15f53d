// Small string helpers shared across modules.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace hcashare {

// Joins `parts` with `sep` between them ("" for no parts).
std::string Join(const std::vector<std::string>& parts, const std::string& sep = ",");

// `text` cut at every `sep`, empty pieces kept ("a,,b" -> {"a", "", "b"}; "" -> {""}).
std::vector<std::string> SplitOn(std::string_view text, char sep);

// ASCII lower-case copy of `s` (other bytes are kept).
std::string ToLowerAscii(std::string_view s);

// `s` without its leading and trailing whitespace (isspace in the C locale).
std::string_view TrimSpace(std::string_view s);

// `s` with every character that appears in `chars` replaced by `with`.
std::string ReplaceAny(std::string s, const std::string& chars, char with);

// A path as one file-name component, reversibly: letters, digits, '.' and '-' are kept,
// '/' becomes '_', every other byte %XX ("/var/lib/kubelet" -> "_var_lib_kubelet").
std::string PathAsFileName(const std::string& path);

// The offset of the first byte of `s` that does not begin or continue a well-formed UTF-8
// sequence (overlong forms, surrogates, code points past U+10FFFF and sequences cut short
// are ill-formed), or std::string_view::npos when all of `s` is UTF-8.
size_t FirstNonUtf8Byte(std::string_view s);

}  // namespace hcashare
