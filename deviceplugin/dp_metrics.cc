#include "deviceplugin/dp_metrics.h"

#include <vector>

#include "common/version.h"

namespace hcashare::dp {
namespace {

constexpr const char* kAdvertised = "hcashare_devices_advertised";
constexpr const char* kAdvertisedHelp = "devices advertised to the kubelet";
constexpr const char* kHealthy = "hcashare_devices_healthy";
constexpr const char* kHealthyHelp = "devices advertised as Healthy";
constexpr const char* kAllocations = "hcashare_allocations_total";
constexpr const char* kAllocationsHelp = "Allocate calls by result";
constexpr const char* kAllocateSeconds = "hcashare_allocate_duration_seconds";
constexpr const char* kAllocateSecondsHelp = "time to answer Allocate";
constexpr const char* kRegistrations = "hcashare_registrations_total";
constexpr const char* kRegistrationsHelp = "successful registrations with the kubelet";
constexpr const char* kRegistered = "hcashare_resource_registered";
constexpr const char* kRegisteredHelp =
    "1 while the resource is registered with the kubelet (as /readyz sees it), else 0";
constexpr const char* kKubeletRestarts = "hcashare_kubelet_restarts_total";
constexpr const char* kKubeletRestartsHelp = "kubelet.sock re-creations seen";
constexpr const char* kRescans = "hcashare_rescans_total";
constexpr const char* kRescansHelp = "full discovery scans";
constexpr const char* kRescanSeconds = "hcashare_rescan_duration_seconds";
constexpr const char* kRescanSecondsHelp = "time of one discovery scan";
constexpr const char* kForeign = "hcashare_foreign_files";
constexpr const char* kForeignHelp =
    "files at our CDI spec or pool description names that this daemon did not write, by "
    "directory: left alone, and the resource's file is missing until they are removed";
constexpr const char* kReloads = "hcashare_config_reloads_total";
constexpr const char* kReloadsHelp = "config reloads by result";

const std::vector<double> kAllocateBuckets = {0.0001, 0.00025, 0.0005, 0.001,
                                              0.0025, 0.005,   0.01,   0.05};
const std::vector<double> kRescanBuckets = {0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5};

const char* AllocateResult(bool ok) { return ok ? "ok" : "error"; }
const char* ReloadResult(bool ok) { return ok ? "ok" : "failed"; }

// The labels of hcashare_build_info: VersionString() is "<semver> (<git describe>)".
metrics::Labels BuildLabels() {
  const std::string v = VersionString();
  const size_t open = v.find(" (");
  std::string revision = "unknown";
  if (open != std::string::npos && v.back() == ')') {
    revision = v.substr(open + 2, v.size() - open - 3);
  }
  auto dotted = [](int x, int y, int z) {
    return std::to_string(x) + "." + std::to_string(y) + "." + std::to_string(z);
  };
#if defined(__clang__)
  const std::string compiler =
      "clang " + dotted(__clang_major__, __clang_minor__, __clang_patchlevel__);
#elif defined(__GNUC__)
  const std::string compiler = "gcc " + dotted(__GNUC__, __GNUC_MINOR__, __GNUC_PATCHLEVEL__);
#else
  const std::string compiler = "unknown";
#endif
  return {{"version", v.substr(0, open)}, {"revision", revision}, {"compiler", compiler}};
}

}  // namespace

DpMetrics::DpMetrics(metrics::Registry& registry) : reg_(registry) {
  reg_.GetGauge("hcashare_build_info",
                "build information (always 1): version, git revision, compiler", BuildLabels())
      .Set(1);
  metrics::AddProcessMetrics(reg_);
  reg_.GetCounter(kKubeletRestarts, kKubeletRestartsHelp);
  reg_.GetCounter(kRescans, kRescansHelp);
  reg_.GetHistogram(kRescanSeconds, kRescanSecondsHelp, kRescanBuckets);
  for (bool ok : {true, false}) {
    reg_.GetCounter(kReloads, kReloadsHelp, {{"result", ReloadResult(ok)}});
  }
}

void DpMetrics::Track(const std::string& resource) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!tracked_.insert(resource).second) return;
  const metrics::Labels r = {{"resource", resource}};
  reg_.GetGauge(kAdvertised, kAdvertisedHelp, r);
  reg_.GetGauge(kHealthy, kHealthyHelp, r);
  reg_.GetGauge(kRegistered, kRegisteredHelp, r);
  reg_.GetCounter(kRegistrations, kRegistrationsHelp, r);
  reg_.GetHistogram(kAllocateSeconds, kAllocateSecondsHelp, kAllocateBuckets, r);
  for (bool ok : {true, false}) {
    reg_.GetCounter(kAllocations, kAllocationsHelp,
                    {{"resource", resource}, {"result", AllocateResult(ok)}});
  }
}

void DpMetrics::Published(const std::string& resource, int advertised, int healthy) {
  Track(resource);
  reg_.GetGauge(kAdvertised, kAdvertisedHelp, {{"resource", resource}}).Set(advertised);
  reg_.GetGauge(kHealthy, kHealthyHelp, {{"resource", resource}}).Set(healthy);
}

void DpMetrics::Allocated(const std::string& resource, bool ok, double seconds) {
  Track(resource);
  reg_.GetCounter(kAllocations, kAllocationsHelp,
                  {{"resource", resource}, {"result", AllocateResult(ok)}})
      .Inc();
  reg_.GetHistogram(kAllocateSeconds, kAllocateSecondsHelp, kAllocateBuckets,
                    {{"resource", resource}})
      .Observe(seconds);
}

void DpMetrics::Registered(const std::string& resource) {
  Track(resource);
  reg_.GetCounter(kRegistrations, kRegistrationsHelp, {{"resource", resource}}).Inc();
  reg_.GetGauge(kRegistered, kRegisteredHelp, {{"resource", resource}}).Set(1);
}

void DpMetrics::Unregistered(const std::string& resource) {
  Track(resource);
  reg_.GetGauge(kRegistered, kRegisteredHelp, {{"resource", resource}}).Set(0);
}

void DpMetrics::KubeletRestarted() {
  reg_.GetCounter(kKubeletRestarts, kKubeletRestartsHelp).Inc();
}

void DpMetrics::Rescanned(double seconds) {
  reg_.GetCounter(kRescans, kRescansHelp).Inc();
  reg_.GetHistogram(kRescanSeconds, kRescanSecondsHelp, kRescanBuckets).Observe(seconds);
}

void DpMetrics::Reloaded(bool ok) {
  reg_.GetCounter(kReloads, kReloadsHelp, {{"result", ReloadResult(ok)}}).Inc();
}

void DpMetrics::ForeignFiles(const std::string& dir, size_t n) {
  reg_.GetGauge(kForeign, kForeignHelp, {{"dir", dir}}).Set(static_cast<double>(n));
}

void DpMetrics::Forget(const std::string& resource) {
  std::lock_guard<std::mutex> lock(mu_);
  tracked_.erase(resource);
  const metrics::Labels r = {{"resource", resource}};
  for (const char* name : {kAdvertised, kHealthy, kRegistered, kRegistrations, kAllocateSeconds}) {
    reg_.Remove(name, r);
  }
  for (bool ok : {true, false}) {
    reg_.Remove(kAllocations, {{"resource", resource}, {"result", AllocateResult(ok)}});
  }
}

}  // namespace hcashare::dp
