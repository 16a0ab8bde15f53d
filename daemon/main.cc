// hcashare-device-plugin: advertises RDMA HCAs to the kubelet as shared, counted resources.
//
// Exit codes: 0 after SIGTERM/SIGINT, 1 on a start-up failure, 2 on an invalid config or
// command line. With --uninstall: 0 once the files are removed, 1 when they cannot be
// (a daemon of this kubelet root still runs).
#include <grpc/support/log.h>
#include <malloc.h>
#include <signal.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <iostream>

#include <CLI/CLI.hpp>

#include "common/host.h"
#include "common/log.h"
#include "common/uevent.h"
#include "common/version.h"
#include "config/config.h"
#include "daemon/control_loop.h"
#include "daemon/flags.h"
#include "daemon/probes.h"
#include "daemon/published_files.h"
#include "deviceplugin/allocation.h"
#include "deviceplugin/dp_metrics.h"
#include "dra/frontend.h"
#include "http/server.h"
#include "interop/pool_info.h"
#include "metrics/registry.h"
#include "nl/rdma_netlink.h"

namespace hcashare::daemon {
namespace {

struct Flags {
  std::string config = "/k8s-rdma-shared-dev-plugin/config.json";
  std::string kubelet_root = "/var/lib/kubelet";
  std::string device_plugin_dir = dp::kDefaultDevicePluginDir;
  std::string host_root = "/";
  std::string registration = "auto";
  std::string log_level = "info";
  std::string log_format = "text";
  std::string device_info_dir = dp::kDefaultDeviceInfoDir;
  double health_poll_interval = 0.5;
  bool use_cdi = false;
  std::string metrics_address;
  std::string cdi_spec_dir = node::kDefaultCdiSpecDir;
  std::string pool_info_dir = kDefaultPoolInfoDir;
  double health_debounce = 2.0;
  double liveness_stall = static_cast<double>(kDefaultLivenessStall.count());
  bool version = false;
  bool uninstall = false;
  // DRA resources only (issue 27): the API server's configuration (in-cluster when empty)
  // and this node's name (NODE_NAME when empty, as the DaemonSet sets it).
  std::string kubeconfig;
  std::string node_name;
};

// How long SIGTERM waits for a busy control loop before the daemon leaves without it
// (the kubelet's grace period is 30 s; a wedged loop must not use it up).
constexpr std::chrono::milliseconds kStopGrace{500};

// Seconds (fractional) as milliseconds.
std::chrono::milliseconds Millis(double seconds) {
  return std::chrono::milliseconds(static_cast<long>(seconds * 1000.0));
}

// Everything the kubelet and the node can see is cleaned up: leave at once instead of
// freeing the pools' memory and running gRPC's global teardown (tens of ms with large pools;
// SIGTERM must end the daemon within 100 ms). Sanitized builds return normally so that the
// leak check still runs.
void ExitAfterShutdown() {
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  std::_Exit(0);
#endif
}

// A command-line error: a log record under --log-format json (wherever it is on the
// command line), else a plain line.
void UsageError(const std::string& error, const std::string& flag = "") {
  if (GetLogFormat() == LogFormat::kJson) {
    if (flag.empty()) {
      LogError("invalid command line", {{"error", error}});
    } else {
      LogError("invalid command line", {{"flag", flag}, {"error", error}});
    }
  } else {
    std::cerr << "hcashare-device-plugin: " << error << "\n";
  }
}

// gRPC's own messages (errors only, unless GRPC_VERBOSITY says otherwise) as log records,
// so that JSON output stays one object per line.
void GrpcLog(gpr_log_func_args* args) {
  const LogLevel level = args->severity == GPR_LOG_SEVERITY_ERROR  ? LogLevel::kError
                         : args->severity == GPR_LOG_SEVERITY_INFO ? LogLevel::kInfo
                                                                   : LogLevel::kDebug;
  const std::string message = args->message != nullptr ? args->message : "";
  if (level == LogLevel::kError) {
    Log(level, "grpc", {{"error", message}, {"file", args->file}, {"line", args->line}});
  } else {
    Log(level, "grpc: " + message, {{"file", args->file}, {"line", args->line}});
  }
}

// Loads and validates the config; logs warnings and what it configures. Returns nullopt
// (after reporting every error) when it is invalid.
std::optional<config::PluginConfig> LoadConfig(const std::string& path) {
  config::ParseOutcome out = config::LoadConfigFile(path);
  for (const auto& w : out.warnings) {
    LogWarn("config warning", {{"json_path", w.path}, {"warning", w.message}});
  }
  if (!out.ok()) {
    const bool json = GetLogFormat() == LogFormat::kJson;
    if (!json) std::cerr << "invalid config " << path << ":\n" << config::FormatIssues(out);
    std::vector<std::string> errors;
    for (const auto& e : out.errors) {
      LogError("config error", {{"file", path}, {"json_path", e.path}, {"error", e.ToString()}});
      errors.push_back(e.ToString());
    }
    if (json) {
      LogError("invalid config",
               {{"file", path},
                {"error", std::to_string(errors.size()) + " error(s) in the config"},
                {"errors", std::move(errors)}});
    }
    return std::nullopt;
  }
  const config::PluginConfig& cfg = *out.config;
  LogInfo("config loaded", {{"file", path},
                            {"resources", cfg.resources.size()},
                            {"periodic_update_seconds", cfg.periodic_update_seconds},
                            {"warnings", out.warnings.size()}});
  for (const auto& rc : cfg.resources) {
    LogInfo("resource configured", {{"resource", rc.FullName()},
                                    {"api", config::ResourceApiName(rc.api)},
                                    {"mode", config::PoolModeName(rc.mode)},
                                    {"rdma_hca_max", rc.rdma_hca_max},
                                    {"topology_aware", rc.topology_aware},
                                    {"exclude_topology", rc.exclude_topology},
                                    {"rdma_devices_env", dp::RdmaDevicesEnvNames(rc)}});
  }
  return out.config;
}

// --uninstall: the daemon leaves its files to its successor on SIGTERM, so removing them
// for good is this separate step.
int Uninstall(const Flags& f) {
  auto removed = PublishedFiles::Uninstall({f.kubelet_root, f.cdi_spec_dir, true, f.pool_info_dir});
  if (!removed.ok()) {
    LogError("cannot uninstall", {{"error", removed.status().message()}});
    return 1;
  }
  LogInfo("uninstalled", {{"kubelet_root", f.kubelet_root},
                          {"cdi_spec_dir", f.cdi_spec_dir},
                          {"pool_info_dir", f.pool_info_dir},
                          {"removed", *removed}});
  return 0;
}

int Run(int argc, char** argv) {
  Flags f;
  CLI::App app{"hcashare-device-plugin: shared RDMA HCAs for Kubernetes pods"};
  app.add_option("--config,--config-file", f.config, "config file (JSON or YAML)")
      ->capture_default_str();
  app.add_option("--kubelet-root-dir", f.kubelet_root,
                 "the kubelet's --root-dir (plugins_registry/ is under it)")
      ->capture_default_str();
  app.add_option("--device-plugin-dir", f.device_plugin_dir,
                 "the kubelet's device-plugin directory (kubelet.sock); the kubelet does not "
                 "move it with --root-dir")
      ->capture_default_str();
  app.add_option("--host-root", f.host_root, "root under which /sys, /dev and /proc are read")
      ->capture_default_str();
  app.add_option("--registration", f.registration, "auto, kubelet or plugins-registry")
      ->capture_default_str();
  app.add_option("--device-info-dir", f.device_info_dir,
                 "where exclusive allocations write Multus device-info files")
      ->capture_default_str();
  app.add_flag("--use-cdi", f.use_cdi,
               "write CDI specs and answer Allocate with CDI names (also the annotation)");
  app.add_option("--cdi-spec-dir", f.cdi_spec_dir, "where CDI specs are written")
      ->capture_default_str();
  CLI::Option* pool_info_dir = app.add_option(
      "--pool-info-dir", f.pool_info_dir,
      "where shared pools are described for hcashare-cni's macvlan mode (\"\": off); default "
      "/var/run/hcashare/pools, or a kubelet-<root> subdirectory for another --kubelet-root-dir");
  app.add_option("--metrics-address", f.metrics_address,
                 "serve /metrics, /healthz and /readyz on HOST:PORT or :PORT (default off)");
  app.add_option("--health-poll-interval", f.health_poll_interval,
                 "seconds between port-state polls (fractional; 0 disables)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  app.add_option("--health-debounce", f.health_debounce,
                 "seconds a device's repeated health changes are held")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  app.add_option("--liveness-stall-seconds", f.liveness_stall,
                 "/healthz fails while one control-loop step has run longer than this")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--log-level", f.log_level, "debug, info, warn or error")->capture_default_str();
  app.add_option("--log-format", f.log_format, "text or json")->capture_default_str();
  app.add_option("--kubeconfig", f.kubeconfig,
                 "kubeconfig for the API server (DRA resources only; default: in-cluster)");
  app.add_option("--node-name", f.node_name,
                 "this node's name, for DRA ResourceSlices (default: $NODE_NAME)");
  app.add_flag("-v,--version", f.version, "print the version and exit");
  app.add_flag("--uninstall", f.uninstall,
               "remove the CDI specs and pool descriptions the daemons of this kubelet root left "
               "for their successors (same directory flags as the daemon), then exit");

  std::vector<std::string> args(argv + 1, argv + argc);
  args = NormalizeLegacyFlags(args);
  if (WantsJsonLogs(args)) SetLogFormat(LogFormat::kJson);
  std::reverse(args.begin(), args.end());  // CLI11 takes a reversed vector
  try {
    app.parse(args);
  } catch (const CLI::ParseError& e) {
    // --help and the like print to stdout and exit 0: output the user asked for.
    if (e.get_exit_code() == 0 || GetLogFormat() != LogFormat::kJson) {
      return app.exit(e) == 0 ? 0 : 2;
    }
    UsageError(e.what());
    return 2;
  }
  // One directory per kubelet root: two daemons on one host never share a file.
  if (pool_info_dir->count() == 0) f.pool_info_dir = PoolInfoDirFor(f.kubelet_root);
  if (f.version) {
    std::cout << "hcashare-device-plugin " << VersionString() << "\n";
    return 0;
  }
  auto level = ParseLogLevel(f.log_level);
  auto format = ParseLogFormat(f.log_format);
  auto mode = dp::ParseRegistrationMode(f.registration);
  const Status address =
      f.metrics_address.empty() ? Status::Ok() : HttpServer::CheckAddress(f.metrics_address);
  const std::pair<const char*, Status> checks[] = {{"--log-level", level.status()},
                                                   {"--log-format", format.status()},
                                                   {"--registration", mode.status()},
                                                   {"--metrics-address", address}};
  for (const auto& [flag, s] : checks) {
    if (!s.ok()) {
      UsageError(s.message(), flag);
      return 2;
    }
  }
  SetLogLevel(*level);
  SetLogFormat(*format);
  if (*format == LogFormat::kJson) gpr_set_log_function(GrpcLog);
  if (f.uninstall) return Uninstall(f);

  // Signals are taken synchronously by this thread; block them before any thread starts.
  sigset_t sigs;
  sigemptyset(&sigs);
  sigaddset(&sigs, SIGTERM);
  sigaddset(&sigs, SIGINT);
  sigaddset(&sigs, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &sigs, nullptr);

  LogInfo("starting hcashare-device-plugin",
          {{"version", VersionString()},
           {"config", f.config},
           {"kubelet_root", f.kubelet_root},
           {"device_plugin_dir", f.device_plugin_dir},
           {"host_root", f.host_root},
           {"registration", f.registration},
           {"use_cdi", f.use_cdi},
           {"pool_info_dir", f.pool_info_dir},
           {"health_poll_interval_seconds", f.health_poll_interval},
           {"health_debounce_seconds", f.health_debounce},
           {"liveness_stall_seconds", f.liveness_stall},
           {"metrics_address", f.metrics_address}});
  auto cfg = LoadConfig(f.config);
  if (!cfg) return 2;

  auto host = NewRootedHost(f.host_root);
  auto rdma = NewRdmaNetlink();
  ControlLoopOptions opts;
  opts.server.kubelet_root = f.kubelet_root;
  opts.server.device_plugin_dir = f.device_plugin_dir;
  opts.server.mode = *mode;
  opts.server.device_info_dir = f.device_info_dir;
  opts.health_poll_interval = Millis(f.health_poll_interval);
  opts.health_debounce = Millis(f.health_debounce);
  opts.config_path = f.config;
  opts.watch_links = true;
  opts.server.use_cdi = f.use_cdi;
  metrics::Registry registry;
  dp::DpMetrics dp_metrics(registry);
  opts.server.metrics = &dp_metrics;
  opts.cdi_spec_dir = f.cdi_spec_dir;
  opts.pool_info_dir = f.pool_info_dir;
  // Kernel uevents make hot-plug visible at once; without them, periodic rescans remain.
  auto uevents = NewKernelUeventSource();
  if (!uevents.ok()) {
    LogWarn("no kernel uevents; hot-plug is seen at the next periodic rescan",
            {{"error", uevents.status().ToString()}});
  }
  // DRA resources (issue 27): the same loop's view of the host, rendered for the DRA driver,
  // which starts with the first config that has any.
  dra::DriverOptions dra_opts;
  dra_opts.node_name = f.node_name;
  if (dra_opts.node_name.empty()) {
    const char* env = std::getenv("NODE_NAME");
    dra_opts.node_name = env != nullptr ? env : "";
  }
  dra_opts.kubeconfig = f.kubeconfig;
  dra_opts.kubelet_root = f.kubelet_root;
  dra_opts.cdi_dir = f.cdi_spec_dir;
  dra_opts.owner = CanonicalPath(f.kubelet_root);
  dra::DraFrontEnd dra_front(dra_opts, &registry);
  opts.view_observer = [&dra_front](const config::PluginConfig& c, const node::Inventory& inv,
                                    const hostfacts::HostSnapshot& snap) {
    dra_front.OnView(c, inv, snap);
  };
  ControlLoop manager(opts, *host, *rdma, uevents.ok() ? uevents->get() : nullptr);
  // The listener first: a port that cannot be bound fails before any file is written.
  std::unique_ptr<HttpServer> http;
  if (!f.metrics_address.empty()) {
    const auto stall = Millis(f.liveness_stall);
    auto started = HttpServer::Start(
        f.metrics_address,
        [&registry, &manager, &dra_front, stall](const std::string& path) {
          return ProbeEndpoint(path, registry, manager, stall,
                               [&dra_front] { return dra_front.Readiness(); });
        },
        ProbeServerOptions());
    if (!started.ok()) {
      LogError("cannot serve metrics",
               {{"address", f.metrics_address}, {"error", started.status().ToString()}});
      return 1;
    }
    http = std::move(started).value();
    LogInfo("serving metrics and probes", {{"address", f.metrics_address}, {"port", http->port()}});
  }
  if (Status st = manager.Start(*cfg); !st.ok()) {
    LogError("cannot start", {{"error", st.ToString()}});
    return 1;
  }
  for (;;) {
    int sig = 0;
    if (sigwait(&sigs, &sig) != 0) continue;
    if (sig == SIGHUP) {
      LogInfo("SIGHUP: reloading config", {{"config", f.config}});
      manager.ReloadFromFile();
      continue;
    }
    LogInfo("shutting down", {{"signal", sig == SIGTERM ? "SIGTERM" : "SIGINT"}});
    http.reset();
    if (!manager.Stop(kStopGrace)) {
      // The loop is stuck (logged): its servers are stopped; leave without it.
      dra_front.Stop();
      std::fflush(nullptr);
      std::_Exit(0);
    }
    dra_front.Stop();  // its sockets go; slices, CDI specs and checkpoint stay for the successor
    LogInfo("stopped");
    ExitAfterShutdown();
    return 0;
  }
}

}  // namespace
}  // namespace hcashare::daemon

int main(int argc, char** argv) {
  // One malloc arena: the daemon allocates little, and per-thread arenas (one per gRPC
  // thread) would each keep pages resident.
  mallopt(M_ARENA_MAX, 1);
  // gRPC's client-channel backup poller wakes every 5 s to cover lost wake-ups in pollers
  // the daemon does not use (epoll1 has none); the only client channel is kubelet.sock.
  // An idle daemon should not wake for it. An operator's own setting wins.
  setenv("GRPC_CLIENT_CHANNEL_BACKUP_POLL_INTERVAL_MS", "0", /*overwrite=*/0);
  return hcashare::daemon::Run(argc, argv);
}
