#include "cni/ipam.h"

#include <unistd.h>

#include "cni/error.h"
#include "cni/version.h"
#include "common/log.h"
#include "common/process.h"
#include "common/strings.h"
#include "json/dump.h"

namespace hcashare::cni {

namespace {

// CNI_ARGS for a delegate: the runtime's, with IgnoreUnknown=1 so that plugins which
// reject unknown keys (host-local does) accept the Kubernetes ones.
std::string DelegateArgs(const CniEnv& env) {
  if (!env.Arg(kArgIgnoreUnknown).empty()) return env.args;
  const std::string ignore = std::string(kArgIgnoreUnknown) + "=1";
  return env.args.empty() ? ignore : ignore + ";" + env.args;
}

// Runs the plugin at `path` once with CNI_COMMAND `command`; returns its stdout, or the
// error it printed (with its own code).
Result<std::string> Exec(const CniEnv& env, const std::string& path, const std::string& type,
                         const std::string& command, const nlohmann::json& input) {
  const std::vector<std::string> child_env = {"CNI_COMMAND=" + command,
                                              "CNI_CONTAINERID=" + env.container_id,
                                              "CNI_NETNS=" + env.netns,
                                              "CNI_IFNAME=" + env.ifname,
                                              "CNI_ARGS=" + DelegateArgs(env),
                                              "CNI_PATH=" + env.path,
                                              "PATH=/usr/sbin:/usr/bin:/sbin:/bin"};
  LogDebug("running IPAM plugin", {{"plugin", path}, {"command", command}});
  auto out = Execute(path, {path}, child_env, DumpJson(input), kIpamTimeout);
  if (!out.ok()) return Summarize(out.status(), "IPAM plugin " + type + " failed to run");
  if (out->exit_code == 0) return std::move(out->out);
  auto j = nlohmann::json::parse(out->out, nullptr, false);
  const std::optional<CniError> err = j.is_discarded() ? std::nullopt : ParseErrorJson(j);
  if (!err) {
    return CniStatus(kErrIo, "IPAM plugin " + type + " " + command + " failed",
                     "exit " + std::to_string(out->exit_code) + ": " + out->err + out->out);
  }
  return CniStatus(err->code, "IPAM plugin " + type + ": " + err->msg, err->details);
}

// Runs `command` and decodes what it answers.
Result<std::optional<CniResult>> Run(const CniEnv& env, const std::string& path,
                                     const std::string& type, const std::string& command,
                                     const nlohmann::json& netconf) {
  ASSIGN_OR_RETURN(const std::string out, Exec(env, path, type, command, netconf));
  if (command != "ADD") return std::optional<CniResult>();
  auto result = ParseResultText(out);
  if (!result.ok()) {
    return result.status().WithContext("IPAM plugin " + type + " returned a bad result");
  }
  return std::optional<CniResult>(std::move(result).value());
}

// The newest version the plugin supports (its VERSION answer) that hcashare supports too
// and that is not newer than `config_version`; "" when there is none.
std::string CommonVersion(const CniEnv& env, const std::string& path, const std::string& type,
                          const std::string& config_version) {
  auto out = Exec(env, path, type, "VERSION", {{"cniVersion", config_version}});
  if (!out.ok()) return "";
  auto j = nlohmann::json::parse(*out, nullptr, false);
  if (j.is_discarded() || !j.contains("supportedVersions") || !j["supportedVersions"].is_array()) {
    return "";
  }
  std::string best;
  for (const auto& v : j["supportedVersions"]) {
    if (!v.is_string()) continue;
    const std::string version = v.get<std::string>();
    if (!IsSupportedVersion(version) || !VersionAtLeast(config_version, version)) continue;
    if (best.empty() || VersionAtLeast(version, best)) best = version;
  }
  return best;
}

}  // namespace

Result<std::optional<CniResult>> RunIpam(const CniEnv& env, const std::string& command,
                                         const nlohmann::json& netconf, const std::string& type) {
  std::string path;
  for (const auto& dir : env.PathDirs()) {
    const std::string candidate = dir + "/" + type;
    if (::access(candidate.c_str(), X_OK) == 0) {
      path = candidate;
      break;
    }
  }
  if (path.empty() && command == "DEL") {
    // A plugin that cannot run holds nothing this DEL could release; failing here would
    // strand the VF, its state and the pod's teardown on a missing binary.
    LogWarn("IPAM plugin not found; nothing to release",
            {{"plugin", type}, {"searched", Join(env.PathDirs())}});
    return std::optional<CniResult>();
  }
  if (path.empty()) {
    return CniStatus(kErrInvalidNetConf, "IPAM plugin \"" + type + "\" not found",
                     "searched CNI_PATH: " + Join(env.PathDirs()));
  }
  auto first = Run(env, path, type, command, netconf);
  if (first.ok() || CniCodeOf(first.status()) != kErrIncompatibleVersion) return first;
  // An older IPAM plugin (e.g. one that predates spec 1.1.0): speak the newest version it
  // supports; the caller converts the result back to the configuration's version.
  const std::string config_version = netconf.value("cniVersion", "");
  const std::string common = CommonVersion(env, path, type, config_version);
  if (common.empty()) return first;
  LogInfo("IPAM plugin does not support the configuration's version; using an older one",
          {{"plugin", type}, {"config", config_version}, {"using", common}});
  nlohmann::json downgraded = netconf;
  downgraded["cniVersion"] = common;
  return Run(env, path, type, command, downgraded);
}

}  // namespace hcashare::cni
