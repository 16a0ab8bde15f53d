// ControlLoop, what its loop watches: the config file (in place, through a ConfigMap's
// "..data" link, or through a symlink's target in another directory) and the kubelet's
// directories and socket. The loop itself is in control_loop.cc.
#include <filesystem>
#include <set>

#include "common/log.h"
#include "common/strings.h"
#include "daemon/control_loop.h"
#include "node/socket_files.h"

namespace hcashare::daemon {
namespace {

constexpr uint32_t kDirMask =
    IN_CREATE | IN_MOVED_TO | IN_DELETE | IN_MOVED_FROM | IN_DELETE_SELF | IN_MOVE_SELF;

}  // namespace

void ControlLoop::LoadAndApplyConfigFile() {
  if (opts_.config_path.empty()) return;
  config::ParseOutcome out = opts_.load_config ? opts_.load_config(opts_.config_path)
                                               : config::LoadConfigFile(opts_.config_path);
  if (!out.ok()) {
    ++reloads_failed_;
    if (Metrics()) Metrics()->Reloaded(false);
    for (const auto& e : out.errors) {
      LogError("config error",
               {{"file", opts_.config_path}, {"json_path", e.path}, {"error", e.ToString()}});
    }
    LogError("new config rejected; keeping the running config",
             {{"file", opts_.config_path},
              {"errors", out.errors.size()},
              {"error", std::to_string(out.errors.size()) + " error(s) in the new config"}});
    return;
  }
  for (const auto& w : out.warnings) {
    LogWarn("config warning", {{"json_path", w.path}, {"warning", w.message}});
  }
  if (*out.config == config_) {  // draDriver and draNumaNode included
    LogDebug("config file unchanged", {{"file", opts_.config_path}});
    return;
  }
  LogInfo("config file changed; applying", {{"file", opts_.config_path}});
  ApplyConfig(*out.config);
  ++reloads_ok_;
  if (Metrics()) Metrics()->Reloaded(true);
}

// Adds whichever watch is missing (a watched directory that was removed or replaced drops
// its watch; the next call adds it again).
void ControlLoop::EnsureWatches() {
  if (dp_wd_ < 0) {
    auto wd = inotify_->AddWatch(opts_.server.DevicePluginDir(), kDirMask);
    if (wd.ok()) dp_wd_ = *wd;
  }
  if (reg_wd_ < 0) {
    auto wd = inotify_->AddWatch(opts_.server.RegistryDir(), kDirMask);
    if (wd.ok()) reg_wd_ = *wd;
  }
  if (config_wd_ < 0 && !opts_.config_path.empty()) {
    // The directory, not the file: editors and ConfigMap updates replace the file (or the
    // "..data" symlink) rather than writing it in place.
    auto wd = inotify_->AddWatch(ConfigDir(), kDirMask | IN_CLOSE_WRITE);
    if (wd.ok()) config_wd_ = *wd;
  }
  if (target_wd_ < 0 && !opts_.config_path.empty()) {
    // A symlink to a file in another directory: that file is replaced or written there.
    // (A ConfigMap's target is a "..data" version directory next to the link, which the
    // link's watch covers; watching it too only adds a harmless second event.)
    std::error_code ec;
    const std::filesystem::path target = std::filesystem::canonical(opts_.config_path, ec);
    const std::filesystem::path link_dir = std::filesystem::weakly_canonical(ConfigDir(), ec);
    if (!ec && !target.empty() && target.parent_path() != link_dir) {
      auto wd = inotify_->AddWatch(target.parent_path().string(), kDirMask | IN_CLOSE_WRITE);
      if (wd.ok()) {
        target_wd_ = *wd;
        target_name_ = target.filename().string();
      }
    }
  }
}

std::string ControlLoop::ConfigDir() const {
  size_t slash = opts_.config_path.rfind('/');
  return slash == std::string::npos ? "." : (slash == 0 ? "/" : opts_.config_path.substr(0, slash));
}

void ControlLoop::HandleEvents(const std::vector<InotifyEvent>& events) {
  bool kubelet_appeared = false;
  std::set<std::string> changed;  // removed or replaced entries
  bool config_changed = false;
  const std::string config_name = BaseName(opts_.config_path);
  for (const auto& ev : events) {
    if (ev.mask & (IN_IGNORED | IN_DELETE_SELF | IN_MOVE_SELF)) {
      if (ev.wd == dp_wd_) dp_wd_ = -1;
      if (ev.wd == reg_wd_) reg_wd_ = -1;
      if (ev.wd == config_wd_) config_wd_ = -1;
      if (ev.wd == target_wd_) target_wd_ = -1;
      continue;
    }
    if (ev.wd == target_wd_) {
      if (ev.name == target_name_ && (ev.mask & (IN_CREATE | IN_MOVED_TO | IN_CLOSE_WRITE))) {
        config_changed = true;
      }
      continue;
    }
    if (ev.wd == config_wd_) {
      // "..data" is the symlink a ConfigMap volume swaps atomically on update.
      if ((ev.name == config_name || ev.name == "..data") &&
          (ev.mask & (IN_CREATE | IN_MOVED_TO | IN_CLOSE_WRITE))) {
        config_changed = true;
      }
      continue;
    }
    if (ev.wd == dp_wd_ && ev.name == "kubelet.sock" && (ev.mask & (IN_CREATE | IN_MOVED_TO))) {
      kubelet_appeared = true;
    }
    // IN_MOVED_TO: another instance renamed its socket over ours (a rollout overlap).
    if (ev.mask & (IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO)) changed.insert(ev.name);
  }
  if (config_changed) {
    // The link may point elsewhere now: watch its target afresh.
    if (target_wd_ >= 0) inotify_->RemoveWatch(target_wd_);
    target_wd_ = -1;
    EnsureWatches();
    Busy("reloading the config file");
    LoadAndApplyConfigFile();
  }
  if (kubelet_appeared) {
    kubelet_sock_inode_ = node::InodeOf(opts_.server.KubeletSocket());
    LogInfo("kubelet.sock created; re-registering every resource");
    if (Metrics()) Metrics()->KubeletRestarted();
  }
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& [name, s] : servers_) {
    if (kubelet_appeared) {
      s->KubeletSocketAppeared();
    } else if (changed.count(name + ".sock")) {
      s->CheckSocket();
    }
  }
}

void ControlLoop::CheckKubeletSocket() {
  EnsureWatches();
  ino_t now = node::InodeOf(opts_.server.KubeletSocket());
  bool appeared = now != 0 && now != kubelet_sock_inode_;
  kubelet_sock_inode_ = now;
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& [name, s] : servers_) {
    if (appeared)
      s->KubeletSocketAppeared();
    else
      s->CheckSocket();
  }
}

}  // namespace hcashare::daemon
