#include "cni/node_config.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <vector>

#include "cni/error.h"
#include "cni/syntax.h"
#include "common/safe_file.h"
#include "config/names.h"
#include "config/suggest.h"
#include "interop/pool_info.h"
#include "json/fields.h"

namespace hcashare::cni {
namespace {

using jsonin::FieldReader;
using nlohmann::json;

const std::vector<std::string>& NodeKeys() {
  static const std::vector<std::string> kKeys = {"hostRoot",        "stateDir",    "kubeletRootDir",
                                                 "devicePluginDir", "poolInfoDir", "logFile",
                                                 "checkAllocation", "draDriver",   "deviceInfoDir"};
  return kKeys;
}

Status NodeFileError(const std::string& path, const std::string& problem) {
  return CniStatus(kErrInvalidNetConf, "refusing the node configuration " + path,
                   problem +
                       "; it sets hcashare-cni's host paths, so only root may write it (the "
                       "installer writes it; see docs/security.md)");
}

// Who may change a file or directory: root only, and nobody else may write it.
std::string OwnershipProblem(const struct stat& st, const char* what) {
  if (st.st_uid != 0) {
    return std::string(what) + " is owned by uid " + std::to_string(st.st_uid) + ", not root";
  }
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    char mode[8];
    std::snprintf(mode, sizeof(mode), "%04o", static_cast<unsigned>(st.st_mode & 07777));
    return std::string(what) + " is writable by its group or by others (mode " + mode + ")";
  }
  return "";
}

// The node file's text. NotFound when it does not exist; any other problem is a code-7
// error naming it.
Result<std::string> ReadNodeFile(const std::string& path) {
  const std::string dir = std::filesystem::path(path).parent_path().string();
  struct stat dir_st {};
  if (::stat(dir.empty() ? "/" : dir.c_str(), &dir_st) != 0) {
    if (errno == ENOENT) return Status::NotFound(path);
    return NodeFileError(path, "cannot stat its directory: " + ErrnoStatus(errno, dir).message());
  }
  SafeReadOptions read;
  read.max_bytes = kMaxNodeConfigBytes;
  read.root_owned = true;
  read.what = "node configuration";
  Result<std::string> text = ReadFileSafely(path, read);
  if (!text.ok()) {
    if (text.status().IsNotFound()) return text.status();
    return NodeFileError(path, text.status().message());
  }
  // Whoever may write the directory could replace the file.
  if (std::string p = OwnershipProblem(dir_st, "its directory"); !p.empty()) {
    return NodeFileError(path, p);
  }
  return text;
}

}  // namespace

NodeSettings DefaultNodeSettings() {
  NodeSettings s;
  s.pool_info_dir = PoolInfoDirFor(s.kubelet_root_dir);
  return s;
}

Result<NodeSettings> ParseNodeSettings(std::string_view text, const std::string& source) {
  Result<json> root = jsonin::DecodeJson(text, "node configuration " + source);
  if (!root.ok()) return WithCniCode(root.status(), kErrInvalidNetConf);
  if (!root->is_object()) {
    return CniStatus(kErrInvalidNetConf, "invalid node configuration " + source,
                     "must be a JSON object, got " + jsonin::DescribeValue(*root));
  }
  jsonin::IssueList errors;
  FieldReader top(*root, "", &errors);
  NodeSettings s;
  s.source = source;
  const auto path = [&](std::string_view key) -> std::optional<std::string> {
    std::optional<std::string> value = top.String(key);
    if (!value) return std::nullopt;
    if (Problem problem = CheckAbsolutePath(*value)) {
      top.Fail(key, *problem + ", got " + jsonin::Quote(*value));
      return std::nullopt;
    }
    return value;
  };
  if (auto v = path("hostRoot")) s.host_root = *v;
  if (auto v = path("stateDir")) s.state_dir = *v;
  if (auto v = path("kubeletRootDir")) s.kubelet_root_dir = *v;
  if (auto v = path("devicePluginDir")) s.device_plugin_dir = *v;
  s.pool_info_dir = path("poolInfoDir").value_or(PoolInfoDirFor(s.kubelet_root_dir));
  s.log_file = path("logFile");
  if (auto v = path("deviceInfoDir")) s.device_info_dir = *v;
  s.check_allocation = top.Bool("checkAllocation").value_or(true);
  if (std::optional<std::string> driver = top.String("draDriver")) {
    // A directory name under <kubeletRootDir>/plugins: a DNS subdomain, as the API says.
    std::string problem =
        driver->size() > 63 ? "longer than 63 characters" : config::ResourcePrefixProblem(*driver);
    if (problem.empty()) {
      s.dra_driver = *driver;
    } else {
      top.Fail("draDriver",
               "not a DRA driver name (" + problem + "), got " + jsonin::Quote(*driver));
    }
  }
  for (const auto& item : root->items()) {
    const auto& known = NodeKeys();
    if (std::find(known.begin(), known.end(), item.key()) != known.end()) continue;
    std::string problem = "unknown key";
    if (auto suggestion = config::SuggestKey(item.key(), known)) {
      problem += "; did you mean " + jsonin::Quote(*suggestion) + "?";
    } else {
      problem +=
          " (known: hostRoot, stateDir, kubeletRootDir, devicePluginDir, poolInfoDir, "
          "logFile, checkAllocation, draDriver, deviceInfoDir)";
    }
    errors.push_back({jsonin::JoinKey("", item.key()), problem});
  }
  if (!errors.empty()) {
    return CniStatus(kErrInvalidNetConf, "invalid node configuration " + source,
                     jsonin::JoinIssues(errors));
  }
  return s;
}

Result<NodeSettings> LoadNodeSettings(const EnvMap& env) {
  const auto named = env.find(std::string(kNodeConfigEnv));
  const bool explicit_path = named != env.end() && !named->second.empty();
  const std::string path = explicit_path ? named->second : std::string(kDefaultNodeConfigPath);
  if (Problem problem = CheckAbsolutePath(path)) {
    return CniStatus(kErrInvalidEnv, std::string(kNodeConfigEnv) + " is invalid",
                     *problem + ", got " + jsonin::Quote(path));
  }
  Result<std::string> text = ReadNodeFile(path);
  if (!text.ok()) {
    if (!text.status().IsNotFound()) return text.status();
    if (explicit_path) {
      return CniStatus(kErrInvalidNetConf, "the node configuration " + path + " does not exist",
                       std::string(kNodeConfigEnv) + " names it; create it or unset " +
                           std::string(kNodeConfigEnv) + " to use " +
                           std::string(kDefaultNodeConfigPath));
    }
    return DefaultNodeSettings();
  }
  return ParseNodeSettings(*text, path);
}

}  // namespace hcashare::cni
