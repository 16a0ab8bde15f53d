// ControlLoop: the daemon's control loop, which applies the config to both kubelet
// front-ends.
//
// Data flows one way: host (sysfs via Discoverer, RDMA netlink) -> Inventory -> one
// PoolState per resource -> ResourceServer (the device plugin's gRPC + registration), and
// each published view -> ControlLoopOptions::view_observer (the DRA front-end). One loop thread
// owns discovery, the config and the set of servers; it wakes on the periodic timer, on inotify
// events in the kubelet directories (kubelet restarts, vanished sockets), and on requests
// (Reload, RescanNow) posted from other threads. A second thread turns kernel uevents
// into rescan requests. Between scans, device health is polled cheaply and debounced.
//
// Public methods are thread-safe.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "common/host.h"
#include "common/inotify.h"
#include "common/uevent.h"
#include "config/config.h"
#include "daemon/published_files.h"
#include "deviceplugin/cdi.h"
#include "deviceplugin/kubelet_client.h"
#include "deviceplugin/resource_server.h"
#include "nl/link_events.h"
#include "nl/rdma_netlink.h"
#include "node/discovery.h"
#include "node/health.h"

namespace hcashare::daemon {

struct ControlLoopOptions {
  dp::ServerOptions server;
  // How often the health inputs (RDMA port states, netdev operstate) are re-read between
  // scans; sysfs attributes cannot be watched. 0 disables the poll.
  std::chrono::milliseconds health_poll_interval{500};
  // Re-read device health at once on rtnetlink link events (carrier and up/down changes of
  // netdevs in the daemon's network namespace), instead of only at the next poll.
  bool watch_links = false;
  // A device's health changes after its first are held this long (see HealthDebouncer).
  std::chrono::milliseconds health_debounce{2000};
  // When set, this file is watched (including a ConfigMap's "..data" symlink swap) and a
  // valid new version is applied; an invalid one is logged and the running config kept.
  std::string config_path;
  // Reads config_path; config::LoadConfigFile when empty (a seam: tests make reads slow).
  std::function<config::ParseOutcome(const std::string& path)> load_config;
  // With server.use_cdi: where each resource's CDI spec is written (a host path as given).
  std::string cdi_spec_dir = node::kDefaultCdiSpecDir;
  // Where shared pools' descriptions are published for hcashare-cni's macvlan mode (a
  // host path as given); "" publishes none.
  std::string pool_info_dir;
  // Called on the loop thread after every publish with the config, the inventory with its
  // debounced health, and the snapshot of the last scan: the DRA front-end's view of the
  // host (the same scan, never a second one). Must not block.
  std::function<void(const config::PluginConfig&, const node::Inventory&,
                     const hostfacts::HostSnapshot&)>
      view_observer;
  // Sockets and kubelet.sock are also re-checked with stat() on every health poll and
  // rescan, in case inotify is silent (e.g. a stale bind mount of a re-created directory);
  // there is no separate timer, so an idle daemon wakes only for those two.
};

class ControlLoop {
 public:
  // `host`, `rdma` and `uevents` (may be null: periodic rescans only) must outlive the
  // manager. The manager is the only reader of `uevents`.
  ControlLoop(ControlLoopOptions opts, const Host& host, RdmaSystem& rdma,
              UeventSource* uevents = nullptr);
  ~ControlLoop();
  ControlLoop(const ControlLoop&) = delete;
  ControlLoop& operator=(const ControlLoop&) = delete;

  // Scans, publishes every pool, then starts the servers and the loop.
  Status Start(const config::PluginConfig& cfg);
  // Stops the loop and every server (sockets we own are removed); the CDI specs and pool
  // descriptions stay for the next instance (PublishedFiles::HandOver). Idempotent.
  void Stop();
  // As Stop(), but waits at most `grace` for the loop: when it is stuck (e.g. in a read
  // that does not return), the servers are stopped without it and false is returned; the
  // caller then exits the process (or, in a test, unblocks the loop and calls Stop again).
  bool Stop(std::chrono::milliseconds grace);

  // Applies a new, already validated config: servers are added, removed or updated in
  // place. Asynchronous (runs on the loop thread).
  void Reload(const config::PluginConfig& cfg);
  // Re-reads ControlLoopOptions::config_path and applies it if it is valid and different
  // (SIGHUP and file changes). Asynchronous; the outcome is logged and counted.
  void ReloadFromFile();
  // Requests an immediate scan. Asynchronous.
  void RescanNow();

  // Server views keyed by full resource name. Never waits for the loop (probes call it).
  std::map<std::string, dp::ServerInfo> Servers() const;
  // How long the loop has been busy with its current step (zero while it waits for
  // work), and what the step is. Never waits for the loop (the liveness probe calls it).
  std::pair<std::chrono::milliseconds, std::string> LoopBusy() const;
  // The current snapshot of resource `full_name`, or null.
  std::shared_ptr<const dp::Snapshot> SnapshotOf(const std::string& full_name) const;
  // Number of completed scans.
  uint64_t scans() const { return scans_.load(); }
  // Config reloads applied / rejected so far.
  uint64_t reloads_ok() const { return reloads_ok_.load(); }
  uint64_t reloads_failed() const { return reloads_failed_.load(); }

 private:
  void Loop();
  // Records that the loop starts `step` (nullptr: it waits for work again).
  void Busy(const char* step);
  // Publishes servers_ as the view Servers() reads. REQUIRES: mu_ held.
  void UpdateView();
  // The view UpdateView published last (may be null before the first).
  std::shared_ptr<const std::vector<std::shared_ptr<dp::ResourceServer>>> CurrentView() const;
  void EventLoop();
  void LinkLoop();
  void Rescan();
  void RefreshHealth();
  // Builds every resource's pool from inventory_ (with debounced health) and publishes
  // the pools that changed (only those: the others' streams get nothing).
  void Publish();
  void LoadAndApplyConfigFile();
  void ApplyConfig(const config::PluginConfig& cfg);
  std::string BlockedReason();
  dp::DpMetrics* Metrics() const { return opts_.server.metrics; }
  void EnsureWatches();
  std::string ConfigDir() const;
  void HandleEvents(const std::vector<InotifyEvent>& events);
  void CheckKubeletSocket();

  const ControlLoopOptions opts_;
  const Host& host_;
  RdmaSystem& rdma_;
  node::Discoverer discoverer_;
  node::ExclusionReporter exclusions_;
  node::HealthDebouncer debouncer_;
  PublishedFiles files_;  // CDI specs and pool descriptions; loop thread (Start/Stop: ours)
  UeventSource* uevents_;
  std::unique_ptr<InotifyWatcher> inotify_;
  dp::KubeletRegistrar registrar_;  // shared by the servers; outlives them

  // Loop-thread state.
  config::PluginConfig config_;
  node::Inventory inventory_;
  hostfacts::HostSnapshot snapshot_;  // of the last scan, kept for view_observer only
  int dp_wd_ = -1;
  int reg_wd_ = -1;
  int config_wd_ = -1;
  // The directory of the file the config path resolves to, when that is another directory
  // (a symlink to a file kept elsewhere), and the file's name there; re-resolved after
  // every config change, since the link may have been re-pointed.
  int target_wd_ = -1;
  std::string target_name_;
  std::chrono::steady_clock::time_point health_due_ = std::chrono::steady_clock::time_point::max();
  ino_t kubelet_sock_inode_ = 0;
  std::string last_blocked_;
  std::string last_rdma_warning_;

  mutable std::mutex mu_;
  std::map<std::string, std::shared_ptr<dp::ResourceServer>>
      servers_;                                         // guarded by mu_ (key: resourceName)
  std::optional<config::PluginConfig> pending_config_;  // guarded by mu_
  bool rescan_requested_ = false;                       // guarded by mu_
  bool reload_file_requested_ = false;                  // guarded by mu_
  bool health_requested_ = false;                       // guarded by mu_
  bool stop_ = false;                                   // guarded by mu_

  // What Servers() reads: a copy of servers_, replaced whole under view_mu_, which is never
  // held across anything that can block (mu_ is, while files are written).
  mutable std::mutex view_mu_;
  std::shared_ptr<const std::vector<std::shared_ptr<dp::ResourceServer>>> view_;  // view_mu_
  // Since when (steady clock, ns; 0 while waiting) the loop is busy, and with what.
  std::atomic<int64_t> busy_since_ns_{0};
  std::atomic<const char*> busy_step_{""};
  std::atomic<bool> loop_exited_{false};
  std::mutex stop_mu_;    // one Stop() at a time
  bool stopped_ = false;  // guarded by stop_mu_: Stop() completed
  std::mutex exit_mu_;
  std::condition_variable exit_cv_;  // loop_exited_ became true

  std::atomic<uint64_t> scans_{0};
  std::atomic<uint64_t> reloads_ok_{0};
  std::atomic<uint64_t> reloads_failed_{0};
  std::atomic<bool> events_stop_{false};
  std::thread loop_;
  std::thread events_;
  std::unique_ptr<LinkEvents> links_;  // with watch_links
  std::thread links_thread_;
};

}  // namespace hcashare::daemon
