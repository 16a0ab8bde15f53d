// The device plugin's Prometheus metrics, on a metrics::Registry. Every method is
// thread-safe (called from gRPC threads and the control loop).
//
// Every counter series exists at 0 from the start: the ones without a resource label from
// construction, and each resource's (one per `result` too) from the first call naming it,
// so that dashboards and rate() see zeros, not gaps.
#pragma once

#include <mutex>
#include <set>
#include <string>

#include "metrics/registry.h"

namespace hcashare::dp {

class DpMetrics {
 public:
  // `registry` must outlive this object. Adds hcashare_build_info and the process_* metrics
  // (metrics::AddProcessMetrics) to it.
  explicit DpMetrics(metrics::Registry& registry);

  // A resource's device list was published: `advertised` devices, `healthy` of them Healthy.
  void Published(const std::string& resource, int advertised, int healthy);
  // An Allocate call finished after `seconds`; `ok` tells whether it succeeded.
  void Allocated(const std::string& resource, bool ok, double seconds);
  // A registration with the kubelet succeeded: counted, and the resource is registered.
  void Registered(const std::string& resource);
  // The resource is no longer registered: its server stopped or is being restarted (e.g. to
  // re-register after a kubelet restart), the kubelet rejected it, or it stands by.
  void Unregistered(const std::string& resource);
  // kubelet.sock was re-created (a kubelet restart).
  void KubeletRestarted();
  // A full discovery scan took `seconds`.
  void Rescanned(double seconds);
  // A config reload was applied (`ok`) or rejected.
  void Reloaded(bool ok);
  // `n` of our file names in `dir` are held by files we did not write (left alone).
  void ForeignFiles(const std::string& dir, size_t n);
  // Drops the series of a resource that a reload removed.
  void Forget(const std::string& resource);

 private:
  // Creates every series of `resource` at zero, the first time it is named after
  // construction or Forget.
  void Track(const std::string& resource);

  metrics::Registry& reg_;
  std::mutex mu_;
  std::set<std::string> tracked_;  // guarded by mu_
};

}  // namespace hcashare::dp
