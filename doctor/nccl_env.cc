#include "doctor/nccl_env.h"

#include <algorithm>
#include <cstdlib>

#include "doctor/check_util.h"

namespace hcashare::doctor {

std::string NcclHcaEntry::ToString() const {
  return port < 0 ? device : device + ":" + std::to_string(port);
}

NcclHcaFilter ParseNcclIbHca(const std::string& value) {
  NcclHcaFilter f;
  std::string s = value;
  if (!s.empty() && s[0] == '^') {
    f.exclude = true;
    s = s.substr(1);
  }
  if (!s.empty() && s[0] == '=') {
    f.exact = true;
    s = s.substr(1);
  }
  for (const std::string& item : SplitList(s)) {
    NcclHcaEntry e;
    const size_t colon = item.find(':');
    e.device = item.substr(0, colon);
    if (colon != std::string::npos) {
      char* rest = nullptr;
      const std::string port = item.substr(colon + 1);
      long n = std::strtol(port.c_str(), &rest, 10);
      e.port = port.empty() || *rest != '\0' || n < 0 ? 0 : static_cast<int>(n);  // 0: none
    }
    f.entries.push_back(std::move(e));
  }
  return f;
}

bool EntryMatches(const NcclHcaFilter& filter, const NcclHcaEntry& entry, const NcclPortRef& port) {
  const bool name = filter.exact ? port.device == entry.device
                                 : port.device.compare(0, entry.device.size(), entry.device) == 0;
  return name && (entry.port < 0 || entry.port == port.port);
}

std::vector<NcclPortRef> SelectPorts(const NcclHcaFilter& filter,
                                     const std::vector<NcclPortRef>& present) {
  std::vector<NcclPortRef> out;
  for (const auto& p : present) {
    const bool listed =
        std::any_of(filter.entries.begin(), filter.entries.end(),
                    [&](const NcclHcaEntry& e) { return EntryMatches(filter, e, p); });
    if (listed != filter.exclude) out.push_back(p);
  }
  return out;
}

std::vector<std::string> UnmatchedEntries(const NcclHcaFilter& filter,
                                          const std::vector<NcclPortRef>& present) {
  std::vector<std::string> out;
  for (const auto& e : filter.entries) {
    const bool hit = std::any_of(present.begin(), present.end(),
                                 [&](const NcclPortRef& p) { return EntryMatches(filter, e, p); });
    if (!hit) out.push_back(e.ToString());
  }
  return out;
}

}  // namespace hcashare::doctor
