// Kubelet restart storms: restarts the fake kubelet over and over (as tools/fake_kubelet.h
// Restart() does: stop, wipe the sockets, serve a new kubelet.sock) and measures how long
// the device plugin takes to re-register and deliver its full device list each time. Used
// by tests/dp_storm_test.cc (assertions) and bench/dp_storm_bench.cc (the distribution).
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "testing/fake_kubelet.h"

namespace hcashare::fake {

struct StormOptions {
  std::string resource;  // full resource name, e.g. "rdma/hca_a"
  size_t devices = 0;    // the full list: IDs "0".."devices-1", every one Healthy
  int restarts = 100;
  // Pause before each restart, drawn uniformly from [min_pause, max_pause]. Without
  // `overlapping` it starts once the previous restart ended re-registered; with it, the
  // next restart does not wait (restarts hit the plugin while it is still re-registering),
  // and only the last restart is waited for.
  std::chrono::milliseconds min_pause{0};
  std::chrono::milliseconds max_pause{0};
  bool overlapping = false;
  // How long one restart may take to end re-registered before it counts as failed.
  std::chrono::milliseconds timeout{10000};
  // Ends the storm at the first failure (tests: bounds the run time).
  bool stop_on_failure = false;
  unsigned seed = 1;
};

struct StormResult {
  // Per waited-for restart: from the Restart() call until the kubelet received the full
  // list on the new registration, in milliseconds.
  std::vector<double> reregister_ms;
  // How long each FakeKubelet::Restart() call itself took (stop, wipe, serve), in ms.
  std::vector<double> restart_call_ms;
  int failed = 0;             // waited-for restarts not re-registered with the full list in time
  int lost_devices = 0;       // over the failed ones: IDs missing or not Healthy in the last list
  std::string first_failure;  // what the first failure looked like
};

// Runs the storm. The plugin must already be registered with `kubelet`.
StormResult RunRestartStorm(FakeKubelet& kubelet, const StormOptions& opts);

}  // namespace hcashare::fake
