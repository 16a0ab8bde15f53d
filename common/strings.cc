#include "common/strings.h"

#include <cctype>
#include <cstdio>

namespace hcashare {

std::string Join(const std::vector<std::string>& parts, const std::string& sep) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) out += sep;
    out += parts[i];
  }
  return out;
}

std::string ToLowerAscii(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string ReplaceAny(std::string s, const std::string& chars, char with) {
  for (auto& c : s) {
    if (chars.find(c) != std::string::npos) c = with;
  }
  return s;
}

std::string PathAsFileName(const std::string& path) {
  std::string out;
  for (unsigned char c : path) {
    if (std::isalnum(c) || c == '.' || c == '-') {
      out += static_cast<char>(c);
    } else if (c == '/') {
      out += '_';
    } else {
      char hex[4];
      std::snprintf(hex, sizeof hex, "%%%02X", c);
      out += hex;
    }
  }
  return out;
}

}  // namespace hcashare
