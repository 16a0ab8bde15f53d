#include "daemon/flags.h"

#include <cctype>

namespace hcashare::daemon {

std::vector<std::string> NormalizeLegacyFlags(const std::vector<std::string>& args) {
  std::vector<std::string> out;
  out.reserve(args.size());
  bool only_values = false;
  for (const auto& a : args) {
    if (a == "--") only_values = true;
    // "-xy..." (a dash, then at least two letters, not a number) is a Go long flag.
    if (!only_values && a.size() > 2 && a[0] == '-' && a[1] != '-' &&
        std::isalpha(static_cast<unsigned char>(a[1])) &&
        (std::isalpha(static_cast<unsigned char>(a[2])) || a[2] == '-')) {
      out.push_back("-" + a);
    } else {
      out.push_back(a);
    }
    std::string& last = out.back();
    if (!only_values && last.size() > 3 && last.compare(0, 2, "--") == 0 &&
        last.find('=') == last.size() - 1) {
      last.pop_back();
      out.emplace_back();  // the empty value, as its own argument
    }
  }
  return out;
}

bool WantsJsonLogs(const std::vector<std::string>& args) {
  for (size_t i = 0; i < args.size() && args[i] != "--"; ++i) {
    if (args[i] == "--log-format=json") return true;
    if (args[i] == "--log-format" && i + 1 < args.size() && args[i + 1] == "json") return true;
  }
  return false;
}

}  // namespace hcashare::daemon
