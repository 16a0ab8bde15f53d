#include "hostfacts/container_runtime.h"

#include <cctype>
#include <optional>
#include <utility>

#include "common/strings.h"

namespace hcashare::hostfacts {
namespace {

constexpr size_t kMaxRuntimeChars = 128;

// The leading decimal number of `s` (consumed), or nullopt.
std::optional<int> TakeNumber(std::string_view* s) {
  int n = 0;
  size_t i = 0;
  while (i < s->size() && i < 6 && std::isdigit(static_cast<unsigned char>((*s)[i]))) {
    n = n * 10 + ((*s)[i] - '0');
    ++i;
  }
  if (i == 0) return std::nullopt;
  s->remove_prefix(i);
  return n;
}

RuntimeCdi With(RuntimeCdi r, CdiSupport s, std::string why) {
  r.support = s;
  r.why = std::move(why);
  return r;
}

// The value of a `key = value` line with its comment cut, or nullopt for another key.
std::optional<std::string_view> ValueOf(std::string_view line, std::string_view key) {
  if (line.substr(0, key.size()) != key) return std::nullopt;
  std::string_view rest = TrimSpace(line.substr(key.size()));
  if (rest.empty() || rest.front() != '=') return std::nullopt;
  rest = rest.substr(1);
  const size_t hash = rest.find('#');
  if (hash != std::string_view::npos) rest = rest.substr(0, hash);
  return TrimSpace(rest);
}

}  // namespace

const char* CdiSupportName(CdiSupport s) {
  switch (s) {
    case CdiSupport::kNone:
      return "none";
    case CdiSupport::kWhenEnabled:
      return "when-enabled";
    case CdiSupport::kDefault:
      return "default";
    default:
      return "unknown";
  }
}

RuntimeCdi ClassifyContainerRuntime(std::string_view runtime_version) {
  RuntimeCdi r;
  r.runtime = std::string(runtime_version.substr(0, kMaxRuntimeChars));
  const size_t sep = runtime_version.find("://");
  if (sep == std::string_view::npos) {
    return With(std::move(r), CdiSupport::kUnknown, "not a <runtime>://<version> string");
  }
  const std::string_view name = runtime_version.substr(0, sep);
  std::string_view version = runtime_version.substr(sep + 3);
  if (!version.empty() && version.front() == 'v') version.remove_prefix(1);
  const std::optional<int> major = TakeNumber(&version);
  std::optional<int> minor;
  if (major && !version.empty() && version.front() == '.') {
    version.remove_prefix(1);
    minor = TakeNumber(&version);
  }
  if (!major || !minor) {
    return With(std::move(r), CdiSupport::kUnknown, "a version this driver cannot read");
  }
  const int v = *major * 1000 + *minor;
  if (name == "containerd") {
    if (v < 1007) {
      return With(std::move(r), CdiSupport::kNone,
                  "containerd before 1.7 cannot give a container CDI devices");
    }
    if (v < 2000) {
      return With(std::move(r), CdiSupport::kWhenEnabled,
                  "containerd 1.7 gives containers CDI devices only with enable_cdi = true in "
                  "its CRI plugin's config");
    }
    return With(std::move(r), CdiSupport::kDefault, "containerd 2 applies CDI by default");
  }
  if (name == "cri-o") {
    if (v < 1023) {
      return With(std::move(r), CdiSupport::kNone,
                  "CRI-O before 1.23 cannot give a container CDI devices");
    }
    return With(std::move(r), CdiSupport::kDefault, "CRI-O applies CDI from 1.23");
  }
  return With(std::move(r), CdiSupport::kUnknown,
              "a runtime whose CDI support this driver does not know");
}

ContainerdCdiConfig ParseContainerdConfig(std::string_view toml) {
  ContainerdCdiConfig out;
  enum class Table { kTop, kCri, kOther } table = Table::kTop;
  while (!toml.empty()) {
    const size_t nl = toml.find('\n');
    const std::string_view line = TrimSpace(toml.substr(0, nl));
    toml = nl == std::string_view::npos ? std::string_view() : toml.substr(nl + 1);
    if (line.empty() || line.front() == '#') continue;
    if (line.front() == '[') {
      std::string header;  // without brackets, quotes and blanks
      for (char c : line.substr(0, line.find(']') + 1)) {
        if (c != '[' && c != ']' && c != '"' && c != '\'' && c != ' ' && c != '\t') header += c;
      }
      table = header == "plugins.io.containerd.grpc.v1.cri" ||
                      header == "plugins.io.containerd.cri.v1.runtime"
                  ? Table::kCri
                  : Table::kOther;
      continue;
    }
    if (table == Table::kTop) {
      if (auto v = ValueOf(line, "version")) {
        std::string_view digits = *v;
        if (auto n = TakeNumber(&digits); n && digits.empty()) out.version = *n;
      } else if (auto i = ValueOf(line, "imports"); i && *i != "[]") {
        out.imports = true;
      }
    } else if (table == Table::kCri) {
      if (auto v = ValueOf(line, "enable_cdi"); v && (*v == "true" || *v == "false")) {
        out.enable_cdi = std::string(*v);
      }
    }
  }
  return out;
}

}  // namespace hcashare::hostfacts
