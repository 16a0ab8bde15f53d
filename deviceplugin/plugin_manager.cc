#include "deviceplugin/plugin_manager.h"

#include <set>

#include "common/log.h"
#include "common/strings.h"
#include "deviceplugin/socket_files.h"

namespace hcashare::dp {
namespace {

using Clock = std::chrono::steady_clock;

constexpr uint32_t kDirMask =
    IN_CREATE | IN_MOVED_TO | IN_DELETE | IN_MOVED_FROM | IN_DELETE_SELF | IN_MOVE_SELF;

}  // namespace

PluginManager::PluginManager(ManagerOptions opts, const Host& host, RdmaSystem& rdma)
    : opts_(std::move(opts)),
      host_(host),
      rdma_(rdma),
      discoverer_(host),
      registrar_(opts_.server.KubeletSocket()) {}

PluginManager::~PluginManager() { Stop(); }

Status PluginManager::Start(const config::PluginConfig& cfg) {
  ASSIGN_OR_RETURN(inotify_, InotifyWatcher::Create());
  EnsureWatches();
  kubelet_sock_inode_ = InodeOf(opts_.server.KubeletSocket());
  ApplyConfig(cfg);
  loop_ = std::thread([this] { Loop(); });
  return Status::Ok();
}

void PluginManager::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stop_) return;
    stop_ = true;
  }
  if (inotify_) inotify_->Wake();
  if (loop_.joinable()) loop_.join();
  std::map<std::string, std::unique_ptr<ResourceServer>> servers;
  {
    std::lock_guard<std::mutex> lock(mu_);
    servers.swap(servers_);
  }
  for (auto& [name, s] : servers) s->Stop();
}

void PluginManager::Reload(const config::PluginConfig& cfg) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    pending_config_ = cfg;
  }
  if (inotify_) inotify_->Wake();
}

void PluginManager::RescanNow() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    rescan_requested_ = true;
  }
  if (inotify_) inotify_->Wake();
}

std::map<std::string, ServerInfo> PluginManager::Servers() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::map<std::string, ServerInfo> out;
  for (const auto& [name, s] : servers_) out[s->resource_name()] = s->info();
  return out;
}

std::shared_ptr<const Snapshot> PluginManager::SnapshotOf(const std::string& full_name) const {
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& [name, s] : servers_) {
    if (s->resource_name() == full_name) return s->state().Current();
  }
  return nullptr;
}

std::string PluginManager::BlockedReason() {
  auto mode = rdma_.GetNetnsMode();
  std::string warning;
  std::string blocked;
  if (!mode.ok()) {
    warning = mode.status().code() == StatusCode::kUnavailable
                  ? "RDMA netlink unavailable; assuming the kernel default netns mode \"shared\""
                  : "cannot read RDMA netns mode; assuming \"shared\"";
    if (warning != last_rdma_warning_) {
      LogWarn(warning, {{"error", mode.status().message()}});
    }
  } else if (*mode == RdmaNetnsMode::kExclusive) {
    blocked =
        "the RDMA subsystem is in exclusive netns mode, so RDMA devices cannot be shared "
        "across pods (run `rdma system set netns shared`, or use exclusive-mode resources)";
  }
  last_rdma_warning_ = warning;
  if (blocked != last_blocked_) {
    if (!blocked.empty())
      LogError("shared pools advertise 0 devices", {{"reason", blocked}});
    else if (!last_blocked_.empty())
      LogInfo("RDMA netns mode is shared again");
    last_blocked_ = blocked;
  }
  return blocked;
}

void PluginManager::Rescan(bool force_resend) {
  std::string blocked = BlockedReason();
  inventory_ = discoverer_.Scan();
  exclusions_.Report(inventory_.excluded);
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& rc : config_.resources) {
    auto it = servers_.find(rc.resource_name);
    if (it == servers_.end()) continue;
    // Exclusive pools work in either RDMA netns mode; only shared pools are blocked.
    const bool shared = rc.mode == config::PoolMode::kShared;
    auto previous = it->second->state().Current();
    PoolState pool = BuildPool(rc, inventory_, shared ? blocked : "", &previous->pool);
    const size_t n = pool.hcas.size();
    auto names = pool.RdmaNames();
    if (it->second->state().Publish(rc, std::move(pool), force_resend)) {
      LogInfo("pool changed", {{"resource", rc.FullName()},
                               {"hcas", std::to_string(n)},
                               {"rdma_devices", Join(names)}});
    }
  }
  ++scans_;
}

void PluginManager::ApplyConfig(const config::PluginConfig& cfg) {
  std::vector<std::unique_ptr<ResourceServer>> retired;
  std::vector<ResourceServer*> added;
  {
    std::lock_guard<std::mutex> lock(mu_);
    std::set<std::string> wanted;
    for (const auto& rc : cfg.resources) wanted.insert(rc.resource_name);
    for (auto it = servers_.begin(); it != servers_.end();) {
      const config::ResourceConfig* next = nullptr;
      for (const auto& rc : cfg.resources) {
        if (rc.resource_name == it->first) next = &rc;
      }
      // A server keeps its registration unless its kubelet-visible name changes.
      if (next == nullptr || next->FullName() != it->second->resource_name()) {
        retired.push_back(std::move(it->second));
        it = servers_.erase(it);
      } else {
        ++it;
      }
    }
    for (const auto& rc : cfg.resources) {
      if (servers_.count(rc.resource_name)) continue;
      auto s = std::make_unique<ResourceServer>(rc, opts_.server, host_, registrar_);
      added.push_back(s.get());
      servers_[rc.resource_name] = std::move(s);
    }
    config_ = cfg;
  }
  for (auto& s : retired) {
    LogInfo("removing resource", {{"resource", s->resource_name()}});
    s->Stop();
  }
  // Publish before starting so that the first ListAndWatch message is the full list.
  Rescan(/*force_resend=*/false);
  for (auto* s : added) s->Start();
  LogInfo("config applied",
          {{"resources", std::to_string(cfg.resources.size())},
           {"periodic_update_seconds", std::to_string(cfg.periodic_update_seconds)}});
}

void PluginManager::EnsureWatches() {
  if (dp_wd_ < 0) {
    auto wd = inotify_->AddWatch(opts_.server.DevicePluginDir(), kDirMask);
    if (wd.ok()) dp_wd_ = *wd;
  }
  if (reg_wd_ < 0) {
    auto wd = inotify_->AddWatch(opts_.server.RegistryDir(), kDirMask);
    if (wd.ok()) reg_wd_ = *wd;
  }
}

void PluginManager::HandleEvents(const std::vector<InotifyEvent>& events) {
  bool kubelet_appeared = false;
  std::set<std::string> removed;
  for (const auto& ev : events) {
    if (ev.mask & (IN_IGNORED | IN_DELETE_SELF | IN_MOVE_SELF)) {
      if (ev.wd == dp_wd_) dp_wd_ = -1;
      if (ev.wd == reg_wd_) reg_wd_ = -1;
      continue;
    }
    if (ev.wd == dp_wd_ && ev.name == "kubelet.sock" && (ev.mask & (IN_CREATE | IN_MOVED_TO))) {
      kubelet_appeared = true;
    }
    if (ev.mask & (IN_DELETE | IN_MOVED_FROM)) removed.insert(ev.name);
  }
  if (kubelet_appeared) {
    kubelet_sock_inode_ = InodeOf(opts_.server.KubeletSocket());
    LogInfo("kubelet.sock created; re-registering every resource");
  }
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& [name, s] : servers_) {
    if (kubelet_appeared) {
      s->KubeletSocketAppeared();
    } else if (removed.count(name + ".sock")) {
      s->CheckSocket();
    }
  }
}

void PluginManager::CheckKubeletSocket() {
  EnsureWatches();
  ino_t now = InodeOf(opts_.server.KubeletSocket());
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

void PluginManager::Loop() {
  auto interval = [this] { return std::chrono::seconds(config_.periodic_update_seconds); };
  auto next_rescan = Clock::now() + interval();
  auto next_check = Clock::now() + opts_.socket_check_interval;
  for (;;) {
    auto now = Clock::now();
    auto deadline = next_check;
    if (config_.periodic_update_seconds > 0) deadline = std::min(deadline, next_rescan);
    // While a kubelet directory is not watched yet, poll for it more often.
    if (dp_wd_ < 0 || reg_wd_ < 0)
      deadline = std::min(deadline, now + std::chrono::milliseconds(500));
    auto timeout = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now);
    auto events = inotify_->Wait(std::max(timeout, std::chrono::milliseconds(0)));
    std::optional<config::PluginConfig> reload;
    bool rescan = false;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stop_) return;
      reload.swap(pending_config_);
      rescan = std::exchange(rescan_requested_, false);
    }
    if (events.ok() && !events->empty()) HandleEvents(*events);
    if (reload) {
      ApplyConfig(*reload);
      next_rescan = Clock::now() + interval();
    }
    if (rescan) Rescan(false);
    now = Clock::now();
    if (config_.periodic_update_seconds > 0 && now >= next_rescan) {
      // Resend even when nothing changed, so a kubelet that drifted is corrected.
      Rescan(/*force_resend=*/true);
      next_rescan = now + interval();
    }
    if (now >= next_check || dp_wd_ < 0 || reg_wd_ < 0) {
      CheckKubeletSocket();
      next_check = now + opts_.socket_check_interval;
    }
  }
}

}  // namespace hcashare::dp
