// FakePodResources: the kubelet's pod-resources server (v1 List and Get, v1alpha1 List) on
// a unix socket, for the CNI tests and benchmarks. Knobs reproduce what a real kubelet
// does: the Get feature gate off, a kubelet without v1 (< 1.20), the rate limiter's
// RESOURCE_EXHAUSTED, and the per-(device, NUMA node) flattening of ContainerDevices.
// GetAllocatableResources is not served (UNIMPLEMENTED). Thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/status.h"

namespace grpc {
class Server;
}  // namespace grpc

namespace hcashare::fake {

// Devices of one resource assigned to a container.
struct FakeDevices {
  std::string resource;          // e.g. "rdma/hca_shared_devices_a"
  std::vector<std::string> ids;  // device IDs
  // NUMA nodes of every ID. Empty: no topology (one ContainerDevices entry per ID). With
  // several nodes each ID is reported once per node, as the kubelet does.
  std::vector<int64_t> numa;
};

// One DRA device of a claim a container references (pod-resources v1 only).
struct FakeClaimDevice {
  std::string claim_namespace, claim_name;
  std::string driver, pool, device;
  std::vector<std::string> cdi_devices;
};

struct FakeContainer {
  FakeContainer(std::string name, std::vector<FakeDevices> devices,
                std::vector<FakeClaimDevice> claims = {})
      : name(std::move(name)), devices(std::move(devices)), claims(std::move(claims)) {}
  std::string name;
  std::vector<FakeDevices> devices;
  std::vector<FakeClaimDevice> claims;  // one DynamicResource per entry
};

class FakePodResources {
 public:
  // How v1 Get answers.
  enum class GetMode {
    kServe,          // the pod, or UNKNOWN "pod <name> not found in namespace <ns>"
    kDisabled,       // UNKNOWN "PodResources API Get method disabled" (gate off)
    kUnimplemented,  // UNIMPLEMENTED (kubelet < 1.27)
  };
  // Whether the v1 service exists. kUnimplemented: every v1 method answers UNIMPLEMENTED
  // "unknown service v1.PodResourcesLister" (kubelet < 1.20).
  enum class V1Mode { kServe, kUnimplemented };
  enum class Method { kV1List, kV1Get, kV1alpha1List };

  // Serves on `socket_path` (its directory is created by Start).
  explicit FakePodResources(std::string socket_path);
  ~FakePodResources();
  FakePodResources(const FakePodResources&) = delete;
  FakePodResources& operator=(const FakePodResources&) = delete;

  Status Start();
  // Stops serving (in-flight calls get 500 ms). Idempotent.
  void Stop();

  // Adds a pod (pods keep insertion order; adding the same namespace/name twice lists it
  // twice, like a recreated pod on kubelets <= 1.33).
  void AddPod(const std::string& ns, const std::string& name, const std::string& uid,
              std::vector<FakeContainer> containers);
  void ClearPods();
  void SetGetMode(GetMode mode);
  void SetV1Mode(V1Mode mode);
  // The next `n` calls answer RESOURCE_EXHAUSTED "rejected by rate limit"; a negative `n`
  // makes every call do so until the next FailNext... call. With `only`, calls of other
  // methods pass and do not count.
  void FailNextWithResourceExhausted(int n, std::optional<Method> only = std::nullopt);

  // Calls received per method, answered or not.
  int Calls(Method method) const;
  void ResetCalls();

  // The pods as a kubelet_internal_checkpoint file: DeviceIDs keyed by NUMA node
  // (Kubernetes >= 1.20; "-1" without topology), or with `legacy_flat_ids` the flat list of
  // Kubernetes <= 1.19.
  std::string CheckpointJson(bool legacy_flat_ids = false) const;

  const std::string& socket_path() const { return socket_path_; }

 private:
  struct Pod {
    std::string ns, name, uid;
    std::vector<FakeContainer> containers;
  };
  class V1Service;
  class V1alpha1Service;

  // Counts the call; true (and consumes one) when it must be rate-limited.
  bool CountAndLimit(Method method);

  const std::string socket_path_;
  std::unique_ptr<V1Service> v1_;
  std::unique_ptr<V1alpha1Service> v1alpha1_;
  std::unique_ptr<grpc::Server> server_;

  mutable std::mutex mu_;
  std::vector<Pod> pods_;                 // guarded by mu_
  GetMode get_mode_ = GetMode::kServe;    // guarded by mu_
  V1Mode v1_mode_ = V1Mode::kServe;       // guarded by mu_
  int exhausted_left_ = 0;                // guarded by mu_
  std::optional<Method> exhausted_only_;  // guarded by mu_
  std::map<Method, int> calls_;           // guarded by mu_
};

}  // namespace hcashare::fake
