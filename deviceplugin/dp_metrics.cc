#include "deviceplugin/dp_metrics.h"

namespace hcashare::dp {
namespace {

constexpr const char* kAdvertised = "hcashare_devices_advertised";
constexpr const char* kHealthy = "hcashare_devices_healthy";
constexpr const char* kAllocations = "hcashare_allocations_total";
constexpr const char* kAllocateSeconds = "hcashare_allocate_duration_seconds";
constexpr const char* kRegistrations = "hcashare_registrations_total";

}  // namespace

DpMetrics::DpMetrics(metrics::Registry& registry) : reg_(registry) {
  // Series without labels exist from the start, so dashboards see zeros, not gaps.
  reg_.GetCounter("hcashare_kubelet_restarts_total", "kubelet.sock re-creations seen");
  reg_.GetCounter("hcashare_rescans_total", "full discovery scans");
  reg_.GetCounter("hcashare_config_reloads_total", "config reloads by result", {{"result", "ok"}});
  reg_.GetCounter("hcashare_config_reloads_total", "config reloads by result",
                  {{"result", "failed"}});
}

void DpMetrics::Published(const std::string& resource, int advertised, int healthy) {
  reg_.GetGauge(kAdvertised, "devices advertised to the kubelet", {{"resource", resource}})
      .Set(advertised);
  reg_.GetGauge(kHealthy, "devices advertised as Healthy", {{"resource", resource}}).Set(healthy);
}

void DpMetrics::Allocated(const std::string& resource, bool ok, double seconds) {
  reg_.GetCounter(kAllocations, "Allocate calls by result",
                  {{"resource", resource}, {"result", ok ? "ok" : "error"}})
      .Inc();
  reg_.GetHistogram(kAllocateSeconds, "time to answer Allocate",
                    {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.05},
                    {{"resource", resource}})
      .Observe(seconds);
}

void DpMetrics::Registered(const std::string& resource) {
  reg_.GetCounter(kRegistrations, "successful registrations with the kubelet",
                  {{"resource", resource}})
      .Inc();
}

void DpMetrics::KubeletRestarted() {
  reg_.GetCounter("hcashare_kubelet_restarts_total", "kubelet.sock re-creations seen").Inc();
}

void DpMetrics::Rescanned(double seconds) {
  reg_.GetCounter("hcashare_rescans_total", "full discovery scans").Inc();
  reg_.GetHistogram("hcashare_rescan_duration_seconds", "time of one discovery scan",
                    {0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5})
      .Observe(seconds);
}

void DpMetrics::Reloaded(bool ok) {
  reg_.GetCounter("hcashare_config_reloads_total", "config reloads by result",
                  {{"result", ok ? "ok" : "failed"}})
      .Inc();
}

void DpMetrics::Forget(const std::string& resource) {
  const metrics::Labels r = {{"resource", resource}};
  reg_.Remove(kAdvertised, r);
  reg_.Remove(kHealthy, r);
  reg_.Remove(kRegistrations, r);
  reg_.Remove(kAllocateSeconds, r);
  reg_.Remove(kAllocations, {{"resource", resource}, {"result", "ok"}});
  reg_.Remove(kAllocations, {{"resource", resource}, {"result", "error"}});
}

}  // namespace hcashare::dp
