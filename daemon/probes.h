// The device plugin's HTTP endpoints: /metrics, /healthz (liveness) and /readyz
// (readiness), as answers of an HttpServer handler.
//
// The probes never wait for the control loop: /healthz reads the loop's heartbeat and
// /readyz the servers' registration through ControlLoop's lock-free view. /metrics
// renders every series, which can take long; the server runs it on its worker thread
// (ProbeServerOptions).
#pragma once

#include <functional>
#include <optional>
#include <string>

#include <chrono>
#include <string>

#include "daemon/control_loop.h"
#include "http/server.h"
#include "metrics/registry.h"

namespace hcashare::daemon {

// The default of --liveness-stall-seconds: a control-loop step that runs longer than this
// (a config read, a scan or a file write that does not return) fails liveness, so that the
// kubelet restarts a wedged daemon. A scan at the 400k-ID cap takes well under a second.
inline constexpr std::chrono::seconds kDefaultLivenessStall{20};

// Answers `path`: /metrics (Prometheus text of `registry`), /healthz (200, or 503 naming
// the step the loop has been stuck in for more than `stall_limit`), /readyz (200 when every
// resource is registered with the kubelet and `extra` is ready; 503 lists what is not), else
// 404.
// Readiness beyond the device-plugin servers (the DRA driver): nullopt while there is none,
// "" when it is ready, else what it waits for, a line each. Must not block.
using ExtraReadiness = std::function<std::optional<std::string>()>;

HttpResponse ProbeEndpoint(const std::string& path, const metrics::Registry& registry,
                           const ControlLoop& manager, std::chrono::milliseconds stall_limit,
                           const ExtraReadiness& extra = {});

// The HttpServer options for ProbeEndpoint: /metrics on the worker thread.
HttpServerOptions ProbeServerOptions();

}  // namespace hcashare::daemon
