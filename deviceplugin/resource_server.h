// ResourceServer: the life cycle of one resource's gRPC endpoint and its registration.
//
// A supervisor thread owns the gRPC server. Each (re)start is a fresh incarnation: the
// server binds a private, dot-prefixed socket, which is then renamed atomically onto the
// public name "<resourceName>.sock" and registered (classic Register on kubelet.sock, or by
// its presence in plugins_registry). Because gRPC unlinks its bound path on shutdown and
// the bound path is the private one, an instance never removes a socket it does not own;
// on final Stop the public name is unlinked only if it still holds our inode.
//
// Recovery: a restart is requested when kubelet.sock is (re)created, when our socket
// vanishes, when the kubelet ends ListAndWatch and opens no new stream, or when the
// kubelet reports a failed registration; failures retry with exponential back-off. When
// another instance has taken the public name (a DaemonSet rollout overlap), this instance
// stands by for good and never fights for it.
//
// All public methods are thread-safe and, except Stop(), non-blocking.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "common/host.h"
#include "config/config.h"
#include "deviceplugin/device_info.h"
#include "deviceplugin/dp_metrics.h"
#include "deviceplugin/kubelet_client.h"
#include "deviceplugin/plugin_service.h"
#include "deviceplugin/plugin_state.h"

namespace hcashare::dp {

enum class RegistrationMode { kAuto, kKubelet, kPluginsRegistry };

// The kubelet's device-plugin directory: kubelet.sock, and our sockets in kubelet mode. The
// kubelet hard-codes it (pluginapi.DevicePluginPath, /var/lib/kubelet/device-plugins/): it
// does not follow the kubelet's --root-dir, unlike plugins_registry/ and pod-resources/
// (/work/shared/reference/kubelet-apis.md §1.4). Distributions that patch the kubelet may
// move it, so it is configured on its own (--device-plugin-dir), never derived.
inline constexpr const char* kDefaultDevicePluginDir = "/var/lib/kubelet/device-plugins";

// Parses "auto", "kubelet", "plugins-registry". InvalidArgument otherwise.
Result<RegistrationMode> ParseRegistrationMode(const std::string& s);
const char* RegistrationModeName(RegistrationMode m);

struct ServerOptions {
  // The kubelet's --root-dir: plugins_registry/ is under it.
  std::string kubelet_root = "/var/lib/kubelet";
  // The device-plugin directory (kDefaultDevicePluginDir), independent of kubelet_root.
  std::string device_plugin_dir = kDefaultDevicePluginDir;
  RegistrationMode mode = RegistrationMode::kAuto;
  // Where exclusive allocations write Multus device-info files (a host path, as given).
  std::string device_info_dir = kDefaultDeviceInfoDir;
  // Allocate answers with CDI names (cdi_devices + annotation) instead of DeviceSpecs.
  bool use_cdi = false;
  // Where allocations and registrations are counted; null for none. Must outlive the server.
  DpMetrics* metrics = nullptr;
  std::chrono::milliseconds connect_timeout{10000};
  std::chrono::milliseconds register_timeout{30000};
  std::chrono::milliseconds backoff_initial{50};
  std::chrono::milliseconds backoff_max{5000};
  // How long after a stream ended (or a registration) to check that a stream is open.
  std::chrono::milliseconds stream_check_delay{2000};
  // A ListAndWatch stream whose write has been pending this long is dropped at the next
  // publish (see ListWatchStream): the kubelet reads at once.
  std::chrono::milliseconds stream_stall_limit{10000};

  std::string DevicePluginDir() const { return device_plugin_dir; }
  std::string KubeletSocket() const { return DevicePluginDir() + "/kubelet.sock"; }
  std::string RegistryDir() const { return kubelet_root + "/plugins_registry"; }
};

// A point-in-time view of a server, for logs, probes and tests.
struct ServerInfo {
  bool serving = false;
  bool registered = false;
  bool standby = false;
  uint64_t registrations = 0;
  int streams = 0;
  std::string socket_path;  // public path of the current incarnation ("" if none)
  RegistrationMode mode = RegistrationMode::kAuto;  // mode of the current incarnation
};

class ResourceServer {
 public:
  // `host` and `registrar` (used in kubelet mode) must outlive the server.
  ResourceServer(const config::ResourceConfig& rc, ServerOptions opts, const Host& host,
                 KubeletRegistrar& registrar);
  ~ResourceServer();
  ResourceServer(const ResourceServer&) = delete;
  ResourceServer& operator=(const ResourceServer&) = delete;

  // Starts the supervisor; serving and registration happen asynchronously.
  void Start();
  // Stops serving and joins the supervisor. Removes the public socket only if it is ours;
  // when another instance holds it, the server ends displaced. Idempotent.
  void Stop();

  // The published device state (for the discovery loop).
  PluginState& state() { return state_; }
  const std::string& resource_name() const { return full_name_; }

  // Asks for a fresh incarnation and registration. Ignored in standby.
  void RequestRestart(const std::string& reason);
  // kubelet.sock was (re)created: restart now, with the back-off reset.
  void KubeletSocketAppeared();
  // Checks the public socket: restarts when it is gone, stands by when another instance
  // owns it. Called on directory events and periodically.
  void CheckSocket();

  ServerInfo info() const;
  // True once another instance has taken the resource's socket over (standby, or found at
  // Stop): the resource's shared files (CDI spec, pool description) are that instance's.
  bool displaced() const;

 private:
  struct Incarnation;

  void Supervise();
  bool DoRestart(const std::string& reason);
  // `grace`: how long RPCs in flight may finish before they are cancelled.
  void StopIncarnation(std::chrono::milliseconds grace = std::chrono::milliseconds(500));
  void DoStreamCheck();
  void EnterStandby(const std::string& why);
  void OnStreamChanged(int delta, bool by_peer);
  void OnRegistrationStatus(bool ok, const std::string& error);
  void ScheduleCheck(std::chrono::milliseconds delay);
  // Queues a restart. With `unless_healthy`, the supervisor drops it if, when it gets to
  // it, the current incarnation is registered with the current kubelet.sock and owns its
  // socket (an earlier restart already handled the same event).
  void Request(const std::string& reason, bool unless_healthy);
  // REQUIRES: mu_ held.
  bool HealthyLocked() const;
  // Logs a (re)start failure once per distinct message; returns false.
  bool Fail(const std::string& message);

  const ServerOptions opts_;
  const Host& host_;
  KubeletRegistrar& registrar_;
  RegisterCancel register_cancel_;  // Stop() ends a registration in flight
  const std::string full_name_;
  const std::string socket_name_;  // "<resourceName>.sock"
  PluginState state_;
  ServiceEvents events_;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool shutdown_ = false;                                   // guarded by mu_
  bool restart_pending_ = false;                            // guarded by mu_
  std::string restart_reason_;                              // guarded by mu_
  bool restart_unless_healthy_ = false;                     // guarded by mu_
  std::chrono::steady_clock::time_point retry_at_;          // guarded by mu_; max() = none
  std::chrono::steady_clock::time_point check_at_;          // guarded by mu_; max() = none
  std::chrono::milliseconds backoff_;                       // guarded by mu_
  bool standby_ = false;                                    // guarded by mu_
  std::string public_path_;                                 // guarded by mu_
  ino_t public_inode_ = 0;                                  // guarded by mu_
  ino_t registered_kubelet_inode_ = 0;                      // guarded by mu_
  RegistrationMode active_mode_ = RegistrationMode::kAuto;  // guarded by mu_
  // In auto mode, the mode the kubelet last accepted: kept across restarts, so that a
  // kubelet restart (which removes kubelet.sock for a while) never flips the mode.
  RegistrationMode settled_mode_ = RegistrationMode::kAuto;  // guarded by mu_

  std::unique_ptr<Incarnation> inc_;  // touched only by the supervisor (or Stop after join)
  std::string last_failure_;          // supervisor thread only
  std::atomic<bool> serving_{false};
  std::atomic<bool> registered_{false};
  std::atomic<uint64_t> registrations_{0};
  std::atomic<int> streams_{0};
  std::thread supervisor_;
  bool started_ = false;  // guarded by mu_
};

}  // namespace hcashare::dp
