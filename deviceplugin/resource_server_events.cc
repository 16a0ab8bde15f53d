// ResourceServer, what reaches it from outside the supervisor: restart requests, the kubelet's
// socket appearing, its own socket checked, stream and registration events, and standing by
// for another instance. The supervisor and its incarnations are in resource_server.cc.
#include <chrono>

#include "common/log.h"
#include "deviceplugin/resource_server.h"
#include "node/socket_files.h"

namespace hcashare::dp {

using Clock = std::chrono::steady_clock;

bool ResourceServer::displaced() const {
  std::lock_guard<std::mutex> lock(mu_);
  return standby_;
}

void ResourceServer::RequestRestart(const std::string& reason) { Request(reason, false); }

void ResourceServer::Request(const std::string& reason, bool unless_healthy) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (standby_ || shutdown_) return;
    if (!restart_pending_) {
      restart_reason_ = reason;
      restart_unless_healthy_ = unless_healthy;
    } else {
      restart_unless_healthy_ = restart_unless_healthy_ && unless_healthy;
    }
    restart_pending_ = true;
  }
  cv_.notify_all();
}

void ResourceServer::KubeletSocketAppeared() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    backoff_ = opts_.backoff_initial;
  }
  // Conditional: a restart that is already under way (its trigger also removed our
  // socket) may have registered with this very kubelet by the time this is handled.
  Request("kubelet.sock created (kubelet restarted)", /*unless_healthy=*/true);
}

bool ResourceServer::HealthyLocked() const {
  if (public_path_.empty() || public_inode_ == 0 || public_inode_ != node::InodeOf(public_path_)) {
    return false;
  }
  if (active_mode_ == RegistrationMode::kPluginsRegistry) return true;
  return registered_.load() && registered_kubelet_inode_ != 0 &&
         registered_kubelet_inode_ == node::InodeOf(opts_.KubeletSocket());
}

void ResourceServer::ScheduleCheck(std::chrono::milliseconds delay) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    check_at_ = std::min(check_at_, Clock::now() + delay);
  }
  cv_.notify_all();
}

void ResourceServer::CheckSocket() {
  std::string path;
  ino_t ours;
  ino_t now;
  {
    // stat under the lock: DoRestart renames and records the inode under it too, so a
    // check can never see our own fresh socket as someone else's.
    std::lock_guard<std::mutex> lock(mu_);
    if (standby_ || shutdown_ || restart_pending_ || public_path_.empty()) return;
    path = public_path_;
    ours = public_inode_;
    now = node::InodeOf(path);
  }
  if (now == 0) {
    Request("socket " + path + " was removed", /*unless_healthy=*/true);
  } else if (now != ours) {
    EnterStandby("socket " + path + " was replaced by another instance");
  }
}

ServerInfo ResourceServer::info() const {
  ServerInfo i;
  i.serving = serving_.load();
  i.registered = registered_.load();
  i.registrations = registrations_.load();
  i.streams = streams_.load();
  std::lock_guard<std::mutex> lock(mu_);
  i.standby = standby_;
  i.socket_path = public_path_;
  i.mode = active_mode_;
  return i;
}

void ResourceServer::OnStreamChanged(int delta, bool by_peer) {
  const int open = streams_ += delta;
  if (delta >= 0 || !by_peer) return;
  // The kubelet ended our last ListAndWatch (it died, or dropped the endpoint): it no longer
  // lists this resource, whatever kubelet.sock's inode says (a dead kubelet leaves the file
  // behind). Not registered until the next registration, which the stream check starts.
  if (open == 0 && registered_.exchange(false)) {
    if (opts_.metrics != nullptr) opts_.metrics->Unregistered(full_name_);
    LogInfo("not registered: the kubelet ended ListAndWatch", {{"resource", full_name_}});
  }
  ScheduleCheck(opts_.stream_check_delay);
}

void ResourceServer::OnRegistrationStatus(bool ok, const std::string& error) {
  if (ok) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      settled_mode_ = RegistrationMode::kPluginsRegistry;
    }
    registered_ = true;
    ++registrations_;
    if (opts_.metrics != nullptr) opts_.metrics->Registered(full_name_);
    LogInfo("registered with kubelet", {{"resource", full_name_}, {"mode", "plugins-registry"}});
    return;
  }
  registered_ = false;
  if (opts_.metrics != nullptr) opts_.metrics->Unregistered(full_name_);
  LogError("kubelet rejected registration; will retry",
           {{"resource", full_name_}, {"error", error}});
  std::lock_guard<std::mutex> lock(mu_);
  // Retry after a back-off, not at once: a rejection usually repeats.
  retry_at_ = std::min(retry_at_, Clock::now() + backoff_);
  backoff_ = std::min(backoff_ * 2, opts_.backoff_max);
  cv_.notify_all();
}

void ResourceServer::EnterStandby(const std::string& why) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (standby_) return;
    standby_ = true;
    restart_pending_ = false;
    retry_at_ = Clock::time_point::max();
  }
  registered_ = false;
  if (opts_.metrics != nullptr) opts_.metrics->Unregistered(full_name_);
  LogWarn("another hcashare instance serves this resource; standing by until exit",
          {{"resource", full_name_}, {"why", why}});
  cv_.notify_all();
}

void ResourceServer::DoStreamCheck() {
  if (streams_.load() > 0) return;
  std::string path;
  ino_t ours;
  ino_t now;
  RegistrationMode mode;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (standby_ || public_path_.empty()) return;
    path = public_path_;
    ours = public_inode_;
    now = node::InodeOf(path);
    mode = active_mode_;
  }
  if (now != 0 && now != ours) {
    EnterStandby("socket " + path + " now belongs to another instance");
  } else if (now == 0) {
    RequestRestart("socket " + path + " was removed");
  } else if (mode == RegistrationMode::kKubelet) {
    RequestRestart("no ListAndWatch stream open after registration");
  } else {
    RequestRestart("kubelet ended ListAndWatch");
  }
}

}  // namespace hcashare::dp
