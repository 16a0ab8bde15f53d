// FakeKubelet: plays the kubelet's side of the device-plugin protocols over real gRPC unix
// sockets, for the integration tests, the benchmarks and `hcashare demo`.
//
// Classic mode: serves v1beta1.Registration on <root>/device-plugins/kubelet.sock and, like
// kubelet >= 1.25, dials the plugin back inside Register, calls GetDevicePluginOptions, then
// follows ListAndWatch; a newer registration of the same resource replaces the old one.
// Watcher mode: watches <root>/plugins_registry, calls GetInfo on new sockets, connects to
// the endpoint and reports NotifyRegistrationStatus. Restart() wipes the sockets of the
// device-plugins directory as a restarting kubelet does.
// Thread-safe.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "common/status.h"
#include "deviceplugin/api/deviceplugin_v1beta1.grpc.pb.h"
#include "node/api/pluginregistration.grpc.pb.h"

namespace hcashare::fake {

// What the fake kubelet knows about one resource.
struct ResourceView {
  bool connected = false;                // a ListAndWatch stream is open
  int registrations = 0;                 // successful registrations so far
  int lists_received = 0;                // ListAndWatch messages received
  std::vector<v1beta1::Device> devices;  // the latest list
  v1beta1::DevicePluginOptions options;
  std::string endpoint;  // socket path the kubelet dialled
  std::chrono::steady_clock::time_point last_list_at;
};

// True when the stream is open, the list is not empty and every device has `health`.
bool AllDevices(const ResourceView& v, const std::string& health);

class FakeKubelet {
 public:
  // `kubelet_root` is the kubelet root directory (plugins_registry/ is created under it);
  // `device_plugin_dir` the device-plugin directory, by default <kubelet_root>/device-plugins
  // (a real kubelet's is fixed, whatever its root).
  explicit FakeKubelet(std::string kubelet_root, std::string device_plugin_dir = "");
  ~FakeKubelet();
  FakeKubelet(const FakeKubelet&) = delete;
  FakeKubelet& operator=(const FakeKubelet&) = delete;

  // Serves kubelet.sock. With `watch_registry`, also follows plugins_registry.
  Status Start(bool watch_registry = false);
  // Stops serving and closes every stream. Sockets are left in place.
  void Stop();
  // A kubelet restart: Stop, delete every socket in device-plugins/, then, after
  // `startup` (the real kubelet's start-up time, during which no kubelet.sock exists),
  // Start again.
  Status Restart(std::chrono::milliseconds startup = std::chrono::milliseconds(0));

  // Ends the resource's ListAndWatch stream from the kubelet side (as on a kubelet-side
  // error) without a new registration; the kubelet never re-subscribes by itself.
  void EndStream(const std::string& resource);

  // Makes Register fail with `error` (empty restores success).
  void SetRegisterError(const std::string& error);

  // A copy of the view of `resource` (default view when unknown).
  ResourceView View(const std::string& resource) const;
  // Waits until `pred(view)` holds for `resource`, or `timeout` passes.
  bool WaitFor(const std::string& resource, const std::function<bool(const ResourceView&)>& pred,
               std::chrono::milliseconds timeout) const;

  // Calls Allocate on the resource's registered endpoint with one container request.
  Result<v1beta1::AllocateResponse> Allocate(const std::string& resource,
                                             const std::vector<std::string>& ids);
  // Calls GetPreferredAllocation on the registered endpoint.
  Result<v1beta1::PreferredAllocationResponse> GetPreferredAllocation(
      const std::string& resource, const std::vector<std::string>& available,
      const std::vector<std::string>& must_include, int size);

  std::string DevicePluginDir() const { return device_plugin_dir_; }
  std::string RegistryDir() const { return root_ + "/plugins_registry"; }

 private:
  class RegistrationImpl;
  struct Endpoint;

  Status Connect(const std::string& resource, const std::string& socket_path);
  void Follow(std::shared_ptr<Endpoint> ep, std::string resource);
  void WatchRegistry();
  void RegisterFromRegistry(const std::string& socket_path);
  std::shared_ptr<Endpoint> EndpointOf(const std::string& resource) const;

  const std::string root_;
  const std::string device_plugin_dir_;
  std::unique_ptr<RegistrationImpl> service_;
  std::unique_ptr<grpc::Server> server_;

  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  std::map<std::string, ResourceView> views_;                   // guarded by mu_
  std::map<std::string, std::shared_ptr<Endpoint>> endpoints_;  // guarded by mu_
  std::map<std::string, std::string> registry_sockets_;  // socket -> resource; guarded by mu_
  std::string register_error_;                           // guarded by mu_
  bool watching_ = false;                                // guarded by mu_
  std::thread watcher_;
};

}  // namespace hcashare::fake
