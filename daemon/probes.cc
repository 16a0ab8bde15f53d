#include "daemon/probes.h"

#include <cstdio>

namespace hcashare::daemon {

HttpResponse ProbeEndpoint(const std::string& path, const metrics::Registry& registry,
                           const ControlLoop& manager, std::chrono::milliseconds stall_limit,
                           const ExtraReadiness& extra) {
  HttpResponse r;
  if (path == "/metrics") {
    r.content_type = "text/plain; version=0.0.4; charset=utf-8";
    r.body = registry.Render();
  } else if (path == "/healthz") {
    const auto [busy, step] = manager.LoopBusy();
    if (busy > stall_limit) {
      char seconds[32];
      std::snprintf(seconds, sizeof(seconds), "%.1f", busy.count() / 1000.0);
      r.status = 503;
      r.body = "control loop stuck for " + std::string(seconds) + " s: " + step + "\n";
    } else {
      r.body = "ok\n";
    }
  } else if (path == "/readyz") {
    std::string missing;
    const auto servers = manager.Servers();
    for (const auto& [name, info] : servers) {
      if (!info.registered) missing += name + (info.standby ? " (standby)" : "") + "\n";
    }
    const std::optional<std::string> more = extra ? extra() : std::nullopt;
    if (servers.empty() && !more) missing = "starting\n";  // no resource served yet
    if (more) missing += *more;
    r.status = missing.empty() ? 200 : 503;
    r.body = missing.empty() ? "ready\n" : "not ready:\n" + missing;
  } else {
    r.status = 404;
    r.body = "not found\n";
  }
  return r;
}

HttpServerOptions ProbeServerOptions() {
  HttpServerOptions opts;
  opts.worker_paths = {"/metrics"};
  return opts;
}

}  // namespace hcashare::daemon
