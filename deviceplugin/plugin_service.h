// The gRPC services one resource serves: v1beta1.DevicePlugin and, in plugins-registry
// mode, pluginregistration.Registration. Handlers only read PluginState snapshots, so
// they never block on discovery and stay fast (Allocate has no kubelet deadline).
#pragma once

#include <atomic>
#include <functional>
#include <string>

#include "common/host.h"
#include "deviceplugin/api/deviceplugin_v1beta1.grpc.pb.h"
#include "deviceplugin/api/pluginregistration.grpc.pb.h"
#include "deviceplugin/dp_metrics.h"
#include "deviceplugin/plugin_state.h"

namespace hcashare::dp {

// Callbacks from the services to the server that owns them. Each must be quick and
// non-blocking (they run on gRPC threads).
struct ServiceEvents {
  // A ListAndWatch stream started (+1) or ended (-1). `by_peer` is true when the kubelet
  // (not our own stop) ended it.
  std::function<void(int delta, bool by_peer)> stream_changed;
  // The kubelet reported the plugins_registry registration result.
  std::function<void(bool registered, const std::string& error)> registration_status;
};

// v1beta1.DevicePlugin for one resource. `state`, `host`, `stopping` and `events` must
// outlive the service. `stopping` ends open streams when set (after PluginState::WakeAll).
class DevicePluginService final : public v1beta1::DevicePlugin::Service {
 public:
  // `device_info_dir` receives the Multus device-info files of exclusive allocations;
  // with `use_cdi`, Allocate answers with CDI names; `metrics` (may be null) counts calls.
  DevicePluginService(const PluginState& state, const Host& host, const std::atomic<bool>& stopping,
                      const ServiceEvents& events, std::string device_info_dir, bool use_cdi,
                      DpMetrics* metrics)
      : state_(state),
        host_(host),
        stopping_(stopping),
        events_(events),
        device_info_dir_(std::move(device_info_dir)),
        use_cdi_(use_cdi),
        metrics_(metrics) {}

  grpc::Status GetDevicePluginOptions(grpc::ServerContext* ctx, const v1beta1::Empty* req,
                                      v1beta1::DevicePluginOptions* resp) override;
  grpc::Status ListAndWatch(grpc::ServerContext* ctx, const v1beta1::Empty* req,
                            grpc::ServerWriter<v1beta1::ListAndWatchResponse>* writer) override;
  grpc::Status GetPreferredAllocation(grpc::ServerContext* ctx,
                                      const v1beta1::PreferredAllocationRequest* req,
                                      v1beta1::PreferredAllocationResponse* resp) override;
  grpc::Status Allocate(grpc::ServerContext* ctx, const v1beta1::AllocateRequest* req,
                        v1beta1::AllocateResponse* resp) override;
  grpc::Status PreStartContainer(grpc::ServerContext* ctx,
                                 const v1beta1::PreStartContainerRequest* req,
                                 v1beta1::PreStartContainerResponse* resp) override;

 private:
  grpc::Status DoAllocate(const Snapshot& snap, const v1beta1::AllocateRequest& req,
                          v1beta1::AllocateResponse* resp);

  const PluginState& state_;
  const Host& host_;
  const std::atomic<bool>& stopping_;
  const ServiceEvents& events_;
  const std::string device_info_dir_;
  const bool use_cdi_;
  DpMetrics* const metrics_;
};

// pluginregistration.Registration for one resource: GetInfo answers at once.
class RegistrationService final : public pluginregistration::Registration::Service {
 public:
  // `endpoint` is the absolute path of the socket serving DevicePlugin.
  RegistrationService(std::string resource_name, std::string endpoint, const ServiceEvents& events)
      : resource_name_(std::move(resource_name)), endpoint_(std::move(endpoint)), events_(events) {}

  grpc::Status GetInfo(grpc::ServerContext* ctx, const pluginregistration::InfoRequest* req,
                       pluginregistration::PluginInfo* resp) override;
  grpc::Status NotifyRegistrationStatus(
      grpc::ServerContext* ctx, const pluginregistration::RegistrationStatus* req,
      pluginregistration::RegistrationStatusResponse* resp) override;

 private:
  std::string resource_name_;
  std::string endpoint_;
  const ServiceEvents& events_;
};

// Maps a Status to the gRPC status returned at the edge.
grpc::Status ToGrpc(const Status& s);

}  // namespace hcashare::dp
