// DraFrontEnd: how hcashare-device-plugin runs its DRA resources (issue 27). The device
// plugin's control loop hands it every view of the host it has just published from (the
// config, the inventory with its debounced health, the scan's snapshot); it renders the DRA
// pool from the same view (dra/devices.h, dra/render.h) and gives it to the DraDriver. The
// driver is made and started on the first config with DRA resources, so a daemon without any
// never contacts the API server.
#pragma once

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>

#include "config/config.h"
#include "dra/devices.h"
#include "dra/driver.h"
#include "hostfacts/facts.h"
#include "node/discovery.h"

namespace hcashare::metrics {
class Registry;
}

namespace hcashare::dra {

class DraFrontEnd {
 public:
  // `base` is every DriverOptions but the driver name, which comes from the config.
  // `registry` (may be null) gets the DRA metrics; it must outlive the front-end.
  DraFrontEnd(DriverOptions base, metrics::Registry* registry);
  // Stop().
  ~DraFrontEnd();
  DraFrontEnd(const DraFrontEnd&) = delete;
  DraFrontEnd& operator=(const DraFrontEnd&) = delete;

  // The control loop's view (ControlLoop's view_observer). Loop thread only; never waits
  // for the network.
  void OnView(const config::PluginConfig& cfg, const node::Inventory& inv,
              const hostfacts::HostSnapshot& snap);
  // For /readyz: nullopt without a DRA driver, "" when ready, else what it waits for.
  std::optional<std::string> Readiness() const;
  // Stops the driver (its sockets go; the published slices, specs and checkpoint stay).
  void Stop();

 private:
  // Makes and starts the driver for `driver_name`; logs a failure once per distinct error.
  std::shared_ptr<DraDriver> Ensure(const std::string& driver_name);
  // The entries of the health stream.
  static std::vector<DeviceHealthEntry> Health(
      const std::string& pool, const std::vector<std::pair<std::string, bool>>& healthy,
      const std::map<std::string, std::string>& reasons);
  void Collect();  // the metrics, at scrape time

  const DriverOptions base_;
  metrics::Registry* const registry_;
  std::string last_error_;                 // loop thread
  std::atomic<bool> start_failed_{false};  // the last attempt to start the driver failed
  std::string last_refused_;               // loop thread: the refusals last logged
  bool warned_rename_ = false;
  DraInventory previous_;   // loop thread: the devices last rendered (KeepDevicesInUse)
  TaintTimes taint_times_;  // loop thread: since when each tainted device is so

  mutable std::mutex mu_;
  std::shared_ptr<DraDriver> driver_;  // guarded by mu_
};

}  // namespace hcashare::dra
