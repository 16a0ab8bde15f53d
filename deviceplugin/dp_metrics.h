// The device plugin's Prometheus metrics, on a metrics::Registry. Every method is
// thread-safe (called from gRPC threads and the control loop).
#pragma once

#include <string>

#include "common/metrics.h"

namespace hcashare::dp {

class DpMetrics {
 public:
  // `registry` must outlive this object.
  explicit DpMetrics(metrics::Registry& registry);

  // A resource's device list was published: `advertised` devices, `healthy` of them Healthy.
  void Published(const std::string& resource, int advertised, int healthy);
  // An Allocate call finished after `seconds`; `ok` tells whether it succeeded.
  void Allocated(const std::string& resource, bool ok, double seconds);
  // A registration with the kubelet succeeded.
  void Registered(const std::string& resource);
  // kubelet.sock was re-created (a kubelet restart).
  void KubeletRestarted();
  // A full discovery scan took `seconds`.
  void Rescanned(double seconds);
  // A config reload was applied (`ok`) or rejected.
  void Reloaded(bool ok);
  // Drops the series of a resource that a reload removed.
  void Forget(const std::string& resource);

 private:
  metrics::Registry& reg_;
};

}  // namespace hcashare::dp
