#include "daemon/control_loop.h"

#include <malloc.h>

#include <set>

#include "common/host.h"
#include "common/log.h"
#include "common/strings.h"
#include "node/dra_owned.h"
#include "node/socket_files.h"

namespace hcashare::daemon {
namespace {

using Clock = std::chrono::steady_clock;

}  // namespace

ControlLoop::ControlLoop(ControlLoopOptions opts, const Host& host, RdmaSystem& rdma,
                         UeventSource* uevents)
    : opts_(std::move(opts)),
      host_(host),
      rdma_(rdma),
      discoverer_(host),
      debouncer_(opts_.health_debounce),
      files_({opts_.server.kubelet_root, opts_.cdi_spec_dir, opts_.server.use_cdi,
              opts_.pool_info_dir},
             opts_.server.metrics),
      uevents_(uevents),
      registrar_(opts_.server.KubeletSocket()) {}

ControlLoop::~ControlLoop() { Stop(); }

Status ControlLoop::Start(const config::PluginConfig& cfg) {
  ASSIGN_OR_RETURN(inotify_, InotifyWatcher::Create());
  EnsureWatches();
  kubelet_sock_inode_ = node::InodeOf(opts_.server.KubeletSocket());
  // Files an earlier run left (for us, or by a SIGKILL) of resources that are gone.
  files_.Reclaim(node::DevicePluginResources(cfg.resources));
  ApplyConfig(cfg);
  loop_ = std::thread([this] { Loop(); });
  if (uevents_ != nullptr) events_ = std::thread([this] { EventLoop(); });
  if (opts_.watch_links) {
    auto links = LinkEvents::Open();
    if (links.ok()) {
      links_ = std::move(links).value();
      links_thread_ = std::thread([this] { LinkLoop(); });
    } else {
      LogWarn("no rtnetlink link events; health follows the poll only",
              {{"error", links.status().ToString()}});
    }
  }
  return Status::Ok();
}

void ControlLoop::LinkLoop() {
  while (!events_stop_.load()) {
    auto changed = links_->Wait(std::chrono::hours(1));
    if (!changed.ok()) {
      LogWarn("rtnetlink link events failed", {{"error", changed.status().ToString()}});
      return;
    }
    if (!*changed) continue;
    {
      std::lock_guard<std::mutex> lock(mu_);
      health_requested_ = true;  // coalesces bursts
    }
    inotify_->Wake();
  }
}

void ControlLoop::EventLoop() {
  while (!events_stop_.load()) {
    auto events = uevents_->Wait(std::chrono::hours(1));
    if (!events.ok()) {
      LogWarn("uevent source failed; relying on periodic rescans",
              {{"error", events.status().ToString()}});
      return;
    }
    for (const auto& ev : *events) {
      if (!IsRelevantForRdma(ev)) continue;
      LogDebug("uevent: rescanning",
               {{"action", ev.action}, {"subsystem", ev.subsystem}, {"devpath", ev.devpath}});
      RescanNow();  // requests coalesce: a burst of events is one scan
      break;
    }
  }
}

void ControlLoop::Stop() { Stop(std::chrono::milliseconds::max()); }

bool ControlLoop::Stop(std::chrono::milliseconds grace) {
  std::lock_guard<std::mutex> stopping_lock(stop_mu_);
  if (stopped_) return true;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  if (inotify_) inotify_->Wake();
  if (loop_.joinable()) {
    std::unique_lock<std::mutex> lock(exit_mu_);
    const bool exited =
        grace == std::chrono::milliseconds::max()
            ? (exit_cv_.wait(lock, [this] { return loop_exited_.load(); }), true)
            : exit_cv_.wait_for(lock, grace, [this] { return loop_exited_.load(); });
    lock.unlock();
    if (!exited) {
      // The loop may hold mu_ (it does while files are written): stop the servers through
      // the view, so that the kubelet sees the sockets go, and leave the rest as it is.
      const auto [busy, step] = LoopBusy();
      LogError("control loop stuck; stopping the servers without it",
               {{"step", step}, {"busy_seconds", busy.count() / 1000.0}});
      const auto view = CurrentView();
      std::vector<std::thread> stopping;
      if (view) {
        for (const auto& s : *view) stopping.emplace_back([s] { s->Stop(); });
      }
      for (auto& t : stopping) t.join();
      return false;
    }
    loop_.join();
  }
  events_stop_ = true;
  if (uevents_ != nullptr) uevents_->Wake();
  if (events_.joinable()) events_.join();
  if (links_) links_->Wake();
  if (links_thread_.joinable()) links_thread_.join();
  std::map<std::string, std::shared_ptr<dp::ResourceServer>> servers;
  {
    std::lock_guard<std::mutex> lock(mu_);
    servers.swap(servers_);
    UpdateView();
  }
  // In parallel: each server's shutdown waits on its own gRPC threads.
  std::vector<std::thread> stopping;
  for (auto& [name, s] : servers) stopping.emplace_back([&server = *s] { server.Stop(); });
  for (auto& t : stopping) t.join();
  for (auto& [name, s] : servers) {
    // A newer instance serves the resource now: its CDI spec and pool description too.
    if (s->displaced()) files_.Disown(s->state().Current()->rc);
  }
  // A rollout: the successor finds valid files (no moment without them) and owns them
  // again; an uninstall removes them (hcashare-device-plugin --uninstall).
  files_.HandOver(node::DevicePluginResources(config_.resources));
  stopped_ = true;
  return true;
}

void ControlLoop::Reload(const config::PluginConfig& cfg) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    pending_config_ = cfg;
  }
  if (inotify_) inotify_->Wake();
}

void ControlLoop::ReloadFromFile() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    reload_file_requested_ = true;
  }
  if (inotify_) inotify_->Wake();
}

void ControlLoop::RescanNow() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    rescan_requested_ = true;
  }
  if (inotify_) inotify_->Wake();
}

void ControlLoop::UpdateView() {
  auto view = std::make_shared<std::vector<std::shared_ptr<dp::ResourceServer>>>();
  for (const auto& [name, s] : servers_) view->push_back(s);
  std::lock_guard<std::mutex> lock(view_mu_);
  view_ = std::move(view);
}

std::shared_ptr<const std::vector<std::shared_ptr<dp::ResourceServer>>> ControlLoop::CurrentView()
    const {
  std::lock_guard<std::mutex> lock(view_mu_);
  return view_;
}

std::map<std::string, dp::ServerInfo> ControlLoop::Servers() const {
  const auto view = CurrentView();
  std::map<std::string, dp::ServerInfo> out;
  if (view) {
    for (const auto& s : *view) out[s->resource_name()] = s->info();
  }
  return out;
}

std::shared_ptr<const dp::Snapshot> ControlLoop::SnapshotOf(const std::string& full_name) const {
  const auto view = CurrentView();
  if (view) {
    for (const auto& s : *view) {
      if (s->resource_name() == full_name) return s->state().Current();
    }
  }
  return nullptr;
}

void ControlLoop::Busy(const char* step) {
  busy_step_ = step == nullptr ? "" : step;
  busy_since_ns_ =
      step == nullptr ? 0 : std::max<int64_t>(1, Clock::now().time_since_epoch().count());
}

std::pair<std::chrono::milliseconds, std::string> ControlLoop::LoopBusy() const {
  const int64_t since = busy_since_ns_.load();
  if (since == 0) return {std::chrono::milliseconds(0), ""};
  const auto busy = Clock::now() - Clock::time_point(Clock::duration(since));
  return {std::chrono::duration_cast<std::chrono::milliseconds>(busy), busy_step_.load()};
}

std::string ControlLoop::BlockedReason() {
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
    if (!blocked.empty()) {
      LogError("shared pools advertise 0 devices", {{"error", blocked}});
    } else if (!last_blocked_.empty()) {
      LogInfo("RDMA netns mode is shared again");
    }
  }
  return blocked;
}

void ControlLoop::Rescan() {
  const auto start = std::chrono::steady_clock::now();
  last_blocked_ = BlockedReason();
  inventory_ = discoverer_.Scan(opts_.view_observer ? &snapshot_ : nullptr);
  if (Metrics()) {
    Metrics()->Rescanned(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  exclusions_.Report(inventory_.excluded);
  Publish();
  ++scans_;
  // A scan and a publish allocate and free a lot of small objects; hand the freed pages
  // back so that idle RSS reflects what is live.
  malloc_trim(0);
}

void ControlLoop::RefreshHealth() {
  for (auto& fn : inventory_.functions) discoverer_.RefreshHealth(&fn);
  Publish();
}

void ControlLoop::Publish() {
  // inventory_ keeps the raw health; the pools get the debounced one.
  node::Inventory inv = inventory_;
  health_due_ = debouncer_.Apply(&inv.functions, std::chrono::steady_clock::now());
  // A function a DRA resource offers is never offered by a device-plugin pool too.
  const node::DraOwners dra_owned = node::DraOwnedFunctions(config_, inv);
  if (opts_.view_observer) opts_.view_observer(config_, inv, snapshot_);
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& rc : config_.resources) {
    auto it = servers_.find(rc.resource_name);
    if (it == servers_.end()) continue;
    // Exclusive pools work in either RDMA netns mode; only shared pools are blocked.
    const bool shared = rc.mode == config::PoolMode::kShared;
    auto previous = it->second->state().Current();
    node::PoolState pool = node::BuildPool(rc, inv, shared ? last_blocked_ : "", &previous->pool);
    node::RefuseDraOwned(dra_owned, &pool);
    // Check first whether another instance has taken the socket (and so the shared files)
    // over: rewriting its files would make them ours, and our exit would delete them.
    it->second->CheckSocket();
    const bool displaced = it->second->displaced();
    if (displaced) {
      files_.Disown(rc);
    } else {
      files_.Write(rc, &pool);
    }
    const size_t n = pool.hcas.size();
    auto names = pool.RdmaNames();
    const std::vector<node::Exclusion> refused = pool.refused;
    if (it->second->state().Publish(rc, std::move(pool))) {
      LogInfo("pool changed",
              {{"resource", rc.FullName()}, {"hcas", n}, {"rdma_devices", Join(names)}});
      for (const auto& r : refused) {
        LogWarn("device not offered",
                {{"resource", rc.FullName()}, {"pci", r.address}, {"reason", r.reason}});
      }
    }
    if (Metrics()) {
      auto snap = it->second->state().Current();
      Metrics()->Published(rc.FullName(), snap->devices, snap->healthy_devices);
    }
  }
}

void ControlLoop::ApplyConfig(const config::PluginConfig& cfg) {
  std::vector<std::shared_ptr<dp::ResourceServer>> retired;
  std::vector<dp::ResourceServer*> added;
  {
    std::lock_guard<std::mutex> lock(mu_);
    std::set<std::string> wanted;
    for (const auto& rc : cfg.resources) wanted.insert(rc.resource_name);
    for (auto it = servers_.begin(); it != servers_.end();) {
      const config::ResourceConfig* next = nullptr;
      for (const auto& rc : cfg.resources) {
        // A resource that moved to DRA loses its device-plugin server.
        if (rc.resource_name == it->first && rc.api != config::ResourceApi::kDra) next = &rc;
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
      // DRA resources are the DRA driver's (dra/): no kubelet device-plugin server.
      if (rc.api == config::ResourceApi::kDra || servers_.count(rc.resource_name)) continue;
      auto s = std::make_shared<dp::ResourceServer>(rc, opts_.server, host_, registrar_);
      added.push_back(s.get());
      servers_[rc.resource_name] = std::move(s);
    }
    config_ = cfg;
    UpdateView();
  }
  for (auto& s : retired) {
    LogInfo("removing resource", {{"resource", s->resource_name()}});
    s->Stop();
    files_.Remove(s->state().Current()->rc);
    if (Metrics()) Metrics()->Forget(s->resource_name());
  }
  // Publish before starting so that the first ListAndWatch message is the full list.
  Rescan();
  for (auto* s : added) s->Start();
  LogInfo("config applied", {{"resources", cfg.resources.size()},
                             {"periodic_update_seconds", cfg.periodic_update_seconds}});
}

void ControlLoop::Loop() {
  using std::chrono::milliseconds;
  // However the loop ends, Stop() learns it.
  struct Exited {
    ControlLoop* m;
    ~Exited() {
      m->Busy(nullptr);
      std::lock_guard<std::mutex> lock(m->exit_mu_);
      m->loop_exited_ = true;
      m->exit_cv_.notify_all();
    }
  } exited{this};
  auto interval = [this] { return std::chrono::seconds(config_.periodic_update_seconds); };
  auto next_rescan = Clock::now() + interval();
  const bool poll_health = opts_.health_poll_interval.count() > 0;
  auto next_health = Clock::now() + opts_.health_poll_interval;
  for (;;) {
    auto now = Clock::now();
    auto deadline = health_due_;
    if (config_.periodic_update_seconds > 0) deadline = std::min(deadline, next_rescan);
    if (poll_health) deadline = std::min(deadline, next_health);
    // While the device-plugins directory is not watched yet, look for it more often.
    if (dp_wd_ < 0) deadline = std::min(deadline, now + milliseconds(500));
    auto timeout = std::chrono::duration_cast<milliseconds>(deadline - now);
    Busy(nullptr);
    auto events = inotify_->Wait(std::max(timeout, milliseconds(0)));
    Busy("handling events");
    std::optional<config::PluginConfig> reload;
    bool rescan = false;
    bool reload_file = false;
    bool health_now = false;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stop_) return;
      health_now = std::exchange(health_requested_, false);
      reload.swap(pending_config_);
      rescan = std::exchange(rescan_requested_, false);
      reload_file = std::exchange(reload_file_requested_, false);
    }
    if (events.ok() && !events->empty()) HandleEvents(*events);
    if (reload_file) {
      Busy("reloading the config file");
      LoadAndApplyConfigFile();
    }
    if (reload) {
      Busy("applying a config");
      ApplyConfig(*reload);
      next_rescan = Clock::now() + interval();
    }
    Busy("rescanning");
    if (rescan) Rescan();
    now = Clock::now();
    bool tick = dp_wd_ < 0;  // a periodic wake-up: also re-check the sockets
    if (config_.periodic_update_seconds > 0 && now >= next_rescan) {
      // Sends only to the pools that changed: the kubelet keeps the last list of an open
      // stream, and a re-sent unchanged list is only churn for it.
      Rescan();
      next_rescan = now + interval();
      tick = true;
    }
    const bool poll_due = poll_health && now >= next_health;
    Busy("refreshing health");
    if (health_now || poll_due) {
      RefreshHealth();
      next_health = now + opts_.health_poll_interval;
      tick = tick || poll_due;
    } else if (now >= health_due_) {
      Publish();  // a held health change is due
    }
    Busy("checking the sockets");
    if (tick) CheckKubeletSocket();
  }
}

}  // namespace hcashare::daemon
