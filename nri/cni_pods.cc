#include "nri/cni_pods.h"

#include <dirent.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include <iostream>

#include "cni/dra_devices.h"
#include "cni/env.h"
#include "common/log.h"
#include "common/process.h"

namespace hcashare::nri {
namespace {

using json = nlohmann::json;

constexpr size_t kMaxArgValue = 253;
constexpr size_t kMaxPath = 4096;

bool Exists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

// The sandbox ID: containerd's and CRI-O's are 64 hex digits; anything of [A-Za-z0-9_.-].
Status CheckSandboxId(const std::string& id) {
  if (id.empty() || id.size() > kMaxArgValue) {
    return Status::InvalidArgument("pod sandbox ID \"" + id.substr(0, 64) +
                                   "\" is empty or too long");
  }
  for (const char c : id) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '.' || c == '-';
    if (!ok) return Status::InvalidArgument("pod sandbox ID \"" + id + "\" has a bad character");
  }
  return Status::Ok();
}

Status CheckPod(const Pod& pod) {
  RETURN_IF_ERROR(CheckSandboxId(pod.id));
  RETURN_IF_ERROR(CheckArgValue("pod namespace", pod.namespace_name));
  RETURN_IF_ERROR(CheckArgValue("pod name", pod.name));
  RETURN_IF_ERROR(CheckArgValue("pod UID", pod.uid));
  if (!pod.netns.empty() && (pod.netns[0] != '/' || pod.netns.size() > kMaxPath)) {
    return Status::InvalidArgument("pod " + pod.namespace_name + "/" + pod.name +
                                   ": network namespace path is not absolute or too long");
  }
  return Status::Ok();
}

std::string PodKey(const Pod& pod) { return pod.namespace_name + "/" + pod.name; }

}  // namespace

Status CheckArgValue(const std::string& what, const std::string& value) {
  if (value.empty() || value.size() > kMaxArgValue) {
    return Status::InvalidArgument(what + " is empty or longer than " +
                                   std::to_string(kMaxArgValue) + " bytes");
  }
  for (const char c : value) {
    if (c == ';' || c == '=' || static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
      return Status::InvalidArgument(what + " \"" + value + "\" holds ';', '=' or a control " +
                                     "character, which CNI_ARGS cannot carry");
    }
  }
  return Status::Ok();
}

Result<json> StepNetConf(const json& base, const std::string& config) {
  json out = base.is_object() ? base : json::object();
  if (!config.empty()) {
    json extra = json::parse(config, nullptr, false);
    if (!extra.is_object()) {
      return Status::InvalidArgument("the NRI plugin configuration is not a JSON object");
    }
    for (auto it = extra.begin(); it != extra.end(); ++it) out[it.key()] = it.value();
  }
  for (const auto& [key, want] :
       {std::pair<const char*, const char*>{"type", "hcashare-cni"}, {"mode", "dra"}}) {
    if (out.contains(key) && out[key] != want) {
      return Status::InvalidArgument(std::string("$.") + key + ": must be \"" + want +
                                     "\" (or left out)");
    }
    out[key] = want;
  }
  if (!out.contains("cniVersion")) out["cniVersion"] = "1.1.0";
  if (!out.contains("name")) out["name"] = "hcashare-nri";
  return out;
}

void SetNodeChecks(const std::string& state_dir, const std::string& dra_checkpoint,
                   CniPodsOptions* options) {
  options->may_have_claims = [dra_checkpoint](const Pod& pod) {
    Result<dra::Checkpoint> cp = dra::Checkpoint::Load(dra_checkpoint);
    return !cp.ok() || cni::HasClaimsIn(*cp, pod.namespace_name);
  };
  // Attachment files are named <container>-<ifname>.json (cni/state.h).
  options->may_have_attachments = [dir = state_dir + "/attachments"](const Pod& pod) {
    DIR* d = ::opendir(dir.c_str());
    if (d == nullptr) return errno != ENOENT;
    const std::string prefix = pod.id + "-";
    bool found = false;
    while (dirent* e = ::readdir(d)) {
      if (std::strncmp(e->d_name, prefix.c_str(), prefix.size()) == 0) {
        found = true;
        break;
      }
    }
    ::closedir(d);
    return found;
  };
}

CniPods::CniPods(CniPodsOptions options) : options_(std::move(options)) {
  auto conf = StepNetConf(options_.netconf, "");
  netconf_ = conf.ok() ? *conf : json::object();
}

Status CniPods::Run(const std::string& verb, const Pod* pod, const json& netconf) {
  std::vector<std::string> env = options_.env;
  env.push_back("CNI_COMMAND=" + verb);
  env.push_back("CNI_PATH=" + options_.cni_path);
  if (pod != nullptr) {
    env.push_back("CNI_CONTAINERID=" + pod->id);
    env.push_back("CNI_IFNAME=" + options_.ifname);
    // A namespace already gone (CRI-O removes it before it tells of the stop) is left out,
    // as the CNI spec has DEL called without one.
    if (!pod->netns.empty() && (verb == "ADD" || Exists(pod->netns))) {
      env.push_back("CNI_NETNS=" + pod->netns);
    }
    env.push_back("CNI_ARGS=IgnoreUnknown=1;" + std::string(cni::kArgPodNamespace) + "=" +
                  pod->namespace_name + ";" + std::string(cni::kArgPodName) + "=" + pod->name +
                  ";" + std::string(cni::kArgPodInfraContainerId) + "=" + pod->id + ";" +
                  std::string(cni::kArgPodUid) + "=" + pod->uid);
  }
  auto out =
      Execute(options_.cni_bin, {options_.cni_bin}, env, netconf.dump(), options_.timeout, 1 << 20);
  if (!out.ok()) {
    return Status(out.status().code(),
                  "cannot run " + options_.cni_bin + ": " + out.status().message());
  }
  // The CNI's own log lines (its stderr, unless its node file names a logFile) join ours.
  if (!out->err.empty()) std::cerr << out->err << std::flush;
  if (out->exit_code == 0) return Status::Ok();
  const json error = json::parse(out->out, nullptr, false);
  std::string why;
  if (error.is_object() && error.contains("msg") && error["msg"].is_string()) {
    why = error["msg"].get<std::string>();
    if (error.contains("details") && error["details"].is_string() &&
        !error["details"].get<std::string>().empty()) {
      why += " (" + error["details"].get<std::string>() + ")";
    }
    if (error.contains("code")) why = "code " + error["code"].dump() + ": " + why;
  } else {
    why = "exit code " + std::to_string(out->exit_code) + ": " + out->err.substr(0, 2048);
  }
  return Status::Unavailable("hcashare-cni " + verb + " failed: " + why);
}

Status CniPods::Configure(const std::string& config) {
  ASSIGN_OR_RETURN(json conf, StepNetConf(options_.netconf, config));
  // A new connection: what the last one left is its next synchronization's to redo.
  catching_up_ = false;
  gc_due_ = false;
  catch_up_.clear();
  RETURN_IF_ERROR(Run("STATUS", nullptr, conf));
  netconf_ = std::move(conf);
  return Status::Ok();
}

Status CniPods::Started(const Pod& pod) {
  if (pod.netns.empty()) return Status::Ok();  // host network: nothing can enter it
  if (Status st = CheckPod(pod); !st.ok()) {
    return Status::InvalidArgument("NRI pod refused: " + st.message());
  }
  live_.insert(pod.id);
  if (options_.may_have_claims && !options_.may_have_claims(pod)) return Status::Ok();
  Status st = Run("ADD", &pod, netconf_);
  if (!st.ok()) {
    LogError("cannot attach the pod's DRA devices",
             {{"pod", PodKey(pod)}, {"sandbox", pod.id}, {"error", st.message()}});
  }
  return st;
}

Status CniPods::Stopped(const Pod& pod) {
  if (Status st = CheckPod(pod); !st.ok()) {
    return Status::InvalidArgument("NRI pod refused: " + st.message());
  }
  // Not caught up any more, and what a failed DEL leaves the next GC collects.
  live_.erase(pod.id);
  if (options_.may_have_attachments && !options_.may_have_attachments(pod)) {
    return Status::Ok();
  }
  Status st = Run("DEL", &pod, netconf_);
  if (!st.ok()) {
    LogError(
        "cannot detach the pod's DRA devices (the next stop, remove or synchronize "
        "retries)",
        {{"pod", PodKey(pod)}, {"sandbox", pod.id}, {"error", st.message()}});
  }
  return st;
}

void CniPods::Synchronize(const std::vector<Pod>& pods) {
  live_.clear();
  catch_up_.clear();
  caught_up_ = 0;
  for (const Pod& pod : pods) {
    if (!CheckPod(pod).ok()) continue;  // never ours: such a pod cannot have been started
    live_.insert(pod.id);
    // Checked one by one in the background: even the cheap checks, over a node's pods,
    // cost more than the answer may take.
    if (!pod.netns.empty()) catch_up_.push_back(pod);
  }
  gc_due_ = true;
  catching_up_ = true;
  LogInfo("synchronized with the runtime; catching up in the background", {{"pods", pods.size()}});
}

bool CniPods::Background() {
  if (!catching_up_) return false;
  if (gc_due_) {
    // First, so that the devices of pods gone while the plugin was away are free again
    // for the pods caught up next.
    gc_due_ = false;
    json valid = json::array();
    for (const std::string& id : live_) {
      valid.push_back({{"containerID", id}, {"ifname", options_.ifname}});
    }
    json gc = netconf_;
    gc["cni.dev/valid-attachments"] = std::move(valid);
    if (Status st = Run("GC", nullptr, gc); !st.ok()) {
      LogError("cannot collect the attachments of pods the runtime no longer has",
               {{"error", st.message()}});
    }
  } else if (!catch_up_.empty()) {
    const Pod pod = std::move(catch_up_.front());
    catch_up_.pop_front();
    // A pod stopped since the synchronization, or without claims, is left alone; so is one
    // that has attachments: it was attached when it started (an ADD attaches all of a pod's
    // devices or none), so a reconnection costs a CNI run only for pods that started while
    // the plugin was away.
    const bool due = live_.count(pod.id) != 0 && Exists(pod.netns) &&
                     (!options_.may_have_claims || options_.may_have_claims(pod)) &&
                     !(options_.may_have_attachments && options_.may_have_attachments(pod));
    if (due) {
      ++caught_up_;
      if (Status st = Run("ADD", &pod, netconf_); !st.ok()) {
        LogError("cannot attach a running pod's DRA devices",
                 {{"pod", PodKey(pod)}, {"sandbox", pod.id}, {"error", st.message()}});
      }
    }
  }
  catching_up_ = gc_due_ || !catch_up_.empty();
  if (!catching_up_) LogInfo("caught up with the runtime", {{"pods_attached", caught_up_}});
  return catching_up_;
}

}  // namespace hcashare::nri
