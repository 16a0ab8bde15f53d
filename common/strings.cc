#include "common/strings.h"

namespace hcashare {

std::string Join(const std::vector<std::string>& parts, const std::string& sep) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) out += sep;
    out += parts[i];
  }
  return out;
}

std::string ReplaceAny(std::string s, const std::string& chars, char with) {
  for (auto& c : s) {
    if (chars.find(c) != std::string::npos) c = with;
  }
  return s;
}

}  // namespace hcashare
