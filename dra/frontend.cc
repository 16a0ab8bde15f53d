#include "dra/frontend.h"

#include <ctime>

#include <vector>

#include "common/log.h"
#include "common/strings.h"
#include "dra/devices.h"
#include "dra/render.h"
#include "metrics/registry.h"

namespace hcashare::dra {

DraFrontEnd::DraFrontEnd(DriverOptions base, metrics::Registry* registry)
    : base_(std::move(base)), registry_(registry) {
  if (registry_ != nullptr) registry_->AddCollector([this] { Collect(); });
}

DraFrontEnd::~DraFrontEnd() { Stop(); }

std::shared_ptr<DraDriver> DraFrontEnd::Ensure(const std::string& driver_name) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (driver_) {
      if (driver_->options().driver != driver_name && !warned_rename_) {
        LogWarn("draDriver changed; the new name takes effect when the daemon restarts",
                {{"running", driver_->options().driver}, {"configured", driver_name}});
        warned_rename_ = true;
      }
      return driver_;
    }
  }
  DriverOptions opts = base_;
  opts.driver = driver_name;
  Result<std::unique_ptr<DraDriver>> made = DraDriver::Create(opts);
  Status st = made.ok() ? (*made)->Start() : made.status();
  if (!st.ok()) {
    if (st.message() != last_error_) {
      LogError("cannot start the DRA driver; its resources are not offered",
               {{"driver", driver_name}, {"error", st.ToString()}});
      last_error_ = st.message();
    }
    start_failed_ = true;
    return nullptr;
  }
  last_error_.clear();
  start_failed_ = false;
  std::shared_ptr<DraDriver> d = std::move(*made);
  std::lock_guard<std::mutex> lock(mu_);
  driver_ = d;
  return d;
}

std::vector<DeviceHealthEntry> DraFrontEnd::Health(
    const std::string& pool, const std::vector<std::pair<std::string, bool>>& healthy,
    const std::map<std::string, std::string>& reasons) {
  std::vector<DeviceHealthEntry> out;
  for (const auto& [name, ok] : healthy) {
    DeviceHealthEntry e;
    e.pool = pool;
    e.device = name;
    e.health = ok ? DeviceHealthStatus::kHealthy : DeviceHealthStatus::kUnhealthy;
    if (!ok) {
      auto r = reasons.find(name);
      e.message = r == reasons.end() ? "" : r->second;
    }
    out.push_back(std::move(e));
  }
  return out;
}

void DraFrontEnd::OnView(const config::PluginConfig& cfg, const node::Inventory& inv,
                         const hostfacts::HostSnapshot& snap) {
  std::shared_ptr<DraDriver> driver;
  if (cfg.HasDra()) {
    driver = Ensure(cfg.dra_driver);
  } else {
    std::lock_guard<std::mutex> lock(mu_);
    driver = driver_;  // DRA resources removed: publish the empty pool
  }
  if (!driver) return;
  DraInventory dra = SelectDraDevices(cfg, inv, snap);
  KeepDevicesInUse(previous_, cfg, inv, &dra);
  // After a restart there is no previous view: the checkpoint says what pods hold.
  KeepHeldDevices(driver->HeldDevices(), cfg, inv, snap, &dra);
  MarkTaints(&dra, &taint_times_, static_cast<int64_t>(std::time(nullptr)));
  previous_ = dra;
  std::vector<std::string> refused;
  for (const auto& r : dra.refused)
    refused.push_back(r.resource + " " + r.address + ": " + r.reason);
  if (const std::string text = Join(refused, "; "); text != last_refused_) {
    for (const auto& r : dra.refused) {
      LogWarn("DRA device not offered",
              {{"resource", r.resource}, {"pci", r.address}, {"reason", r.reason}});
    }
    last_refused_ = text;
  }
  const std::string& node = driver->options().node_name;
  std::vector<PreparableDevice> devices;
  std::vector<std::pair<std::string, bool>> healthy;
  std::map<std::string, std::string> reasons;
  for (const DraDevice& d : dra.devices) {
    PreparableDevice p;
    p.name = d.name;
    p.resource_name = d.resource.FullName();
    p.pci_address = d.fn.address;
    p.numa_node = d.fn.numa_node;
    p.set_nccl_ib_hca = d.resource.set_nccl_ib_hca;
    for (const auto& r : d.fn.rdma) {
      p.rdma_devices.push_back(r.name);
      p.char_devices.insert(p.char_devices.end(), r.char_devices.begin(), r.char_devices.end());
    }
    // A function that vanished is published unhealthy (tainted NoExecute) until the next
    // scan drops it, or while a claim holds it; Prepare no longer hands it out.
    if (!d.fn.gone) devices.push_back(std::move(p));
    const bool ok = d.fn.healthy && !d.fn.gone;
    healthy.emplace_back(d.name, ok);
    if (!ok) reasons[d.name] = d.fn.health_reason;
  }
  driver->Update(RenderPool(dra, driver->options().driver, node, RenderOptionsOf(cfg)),
                 std::move(devices), Health(node, healthy, reasons));
}

std::optional<std::string> DraFrontEnd::Readiness() const {
  std::shared_ptr<DraDriver> driver;
  {
    std::lock_guard<std::mutex> lock(mu_);
    driver = driver_;
  }
  if (!driver) {
    if (!start_failed_) return std::nullopt;
    return "DRA driver not started (see the log)\n";
  }
  const DriverState s = driver->State();
  return s.why_not.empty() ? "" : s.why_not + "\n";
}

void DraFrontEnd::Stop() {
  std::shared_ptr<DraDriver> driver;
  {
    std::lock_guard<std::mutex> lock(mu_);
    driver = driver_;
  }
  if (driver) driver->Stop();
}

void DraFrontEnd::Collect() {
  std::shared_ptr<DraDriver> driver;
  {
    std::lock_guard<std::mutex> lock(mu_);
    driver = driver_;
  }
  if (!driver) return;
  const DriverState s = driver->State();
  const metrics::Labels l = {{"driver", driver->options().driver}};
  registry_->GetGauge("hcashare_dra_registered", "1 when the kubelet accepted the DRA driver", l)
      .Set(s.registered ? 1 : 0);
  registry_
      ->GetGauge("hcashare_dra_published", "1 when the API server holds the DRA pool last rendered",
                 l)
      .Set(s.published ? 1 : 0);
  registry_->GetGauge("hcashare_dra_pool_generation", "the DRA pool's ResourceSlice generation", l)
      .Set(static_cast<double>(s.generation));
  registry_
      ->GetGauge("hcashare_dra_publish_latency_seconds",
                 "from a change of the host's view to the API server's acknowledgement", l)
      .Set(static_cast<double>(s.publish_latency.count()) / 1e6);
  registry_
      ->GetGauge("hcashare_dra_shared_refused",
                 "1 when the API server cannot hold shared DRA devices (no consumable capacity)", l)
      .Set(s.shared_refused.empty() ? 0 : 1);
  // The runtime's name is in the log (a label would leave the old series behind on a change).
  registry_
      ->GetGauge("hcashare_dra_runtime_without_cdi",
                 "1 when the node's container runtime cannot give containers CDI devices (DRA "
                 "claims are refused)",
                 l)
      .Set(s.runtime_cdi == hostfacts::CdiSupport::kNone ? 1 : 0);
  registry_
      ->GetGauge("hcashare_dra_device_taints_refused",
                 "1 when the API server does not serve device taints (DRADeviceTaints): only "
                 "the DeviceClasses' healthy selector keeps new claims off unhealthy devices",
                 l)
      .Set(s.taints_refused.empty() ? 0 : 1);
  registry_
      ->GetGauge("hcashare_dra_checkpoint_rebuilt",
                 "1 when the DRA checkpoint could not be used at start and was rebuilt from the "
                 "kubelet (the old file is kept aside; see the log)",
                 l)
      .Set(s.checkpoint_kept_aside.empty() ? 0 : 1);
  registry_->GetGauge("hcashare_dra_prepared_claims", "claims the DRA checkpoint holds", l)
      .Set(static_cast<double>(s.prepared_claims));
  registry_
      ->GetCounter("hcashare_dra_collected_claims_total",
                   "checkpoint entries removed because no pod holds them and their claim is gone",
                   l)
      .RaiseTo(static_cast<double>(s.collected_claims));
  registry_
      ->GetCounter("hcashare_dra_claim_status_writes_total",
                   "claims' device status (networkData) written to the API server", l)
      .RaiseTo(static_cast<double>(s.claim_status_written));
  registry_
      ->GetGauge("hcashare_dra_claim_status_refused",
                 "1 when the API server refused the last claim device status write (403: RBAC "
                 "or DRAResourceClaimDeviceStatus)",
                 l)
      .Set(s.claim_status_refused ? 1 : 0);
}

}  // namespace hcashare::dra
