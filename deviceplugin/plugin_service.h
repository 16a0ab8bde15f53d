// The gRPC service one resource serves: v1beta1.DevicePlugin (in plugins-registry mode,
// node::RegistrationService beside it), and the PluginInfo it registers with. Handlers only read
// PluginState snapshots, so they never block on discovery and stay fast (Allocate has no kubelet
// deadline). They run on gRPC's callback threads and must not block.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "common/host.h"
#include "deviceplugin/api/deviceplugin_v1beta1.grpc.pb.h"
#include "deviceplugin/dp_metrics.h"
#include "deviceplugin/list_watch_stream.h"
#include "deviceplugin/plugin_service_events.h"
#include "deviceplugin/plugin_state.h"
#include "node/api/pluginregistration.pb.h"

namespace hcashare::dp {

// v1beta1.DevicePlugin for one resource, on gRPC's callback API: no thread is held by an
// idle ListAndWatch stream. `state`, `host` and `events` must outlive the service, and the
// service must outlive the gRPC server it is registered with.
// ListAndWatch is a raw method: it writes the snapshot's serialized list as it is.
// GetPreferredAllocation and Allocate are raw too: they parse the request only once they
// hold a call slot, so that a flood of large requests is refused unparsed.
using DevicePluginBase = v1beta1::DevicePlugin::WithCallbackMethod_GetDevicePluginOptions<
    v1beta1::DevicePlugin::WithRawCallbackMethod_ListAndWatch<
        v1beta1::DevicePlugin::WithRawCallbackMethod_GetPreferredAllocation<
            v1beta1::DevicePlugin::WithRawCallbackMethod_Allocate<
                v1beta1::DevicePlugin::WithCallbackMethod_PreStartContainer<
                    v1beta1::DevicePlugin::Service>>>>>;

class DevicePluginService final : public DevicePluginBase {
 public:
  // `device_info_dir` receives the Multus device-info files of exclusive allocations;
  // with `use_cdi`, Allocate answers with CDI names (of instance tag `cdi_tag`, see
  // CdiInstanceTag); `metrics` (may be null) counts calls; a stream that has not taken a
  // list for `stream_stall_limit` is dropped at the next publish.
  DevicePluginService(const PluginState& state, const Host& host, const ServiceEvents& events,
                      std::string device_info_dir, bool use_cdi, std::string cdi_tag,
                      DpMetrics* metrics,
                      std::chrono::milliseconds stream_stall_limit = std::chrono::seconds(10))
      : state_(state),
        host_(host),
        events_(events),
        device_info_dir_(std::move(device_info_dir)),
        use_cdi_(use_cdi),
        cdi_tag_(std::move(cdi_tag)),
        metrics_(metrics),
        stream_stall_limit_(stream_stall_limit) {}

  grpc::ServerUnaryReactor* GetDevicePluginOptions(grpc::CallbackServerContext* ctx,
                                                   const v1beta1::Empty* req,
                                                   v1beta1::DevicePluginOptions* resp) override;
  grpc::ServerWriteReactor<grpc::ByteBuffer>* ListAndWatch(grpc::CallbackServerContext* ctx,
                                                           const grpc::ByteBuffer* req) override;
  grpc::ServerUnaryReactor* GetPreferredAllocation(grpc::CallbackServerContext* ctx,
                                                   const grpc::ByteBuffer* req,
                                                   grpc::ByteBuffer* resp) override;
  grpc::ServerUnaryReactor* Allocate(grpc::CallbackServerContext* ctx, const grpc::ByteBuffer* req,
                                     grpc::ByteBuffer* resp) override;
  grpc::ServerUnaryReactor* PreStartContainer(grpc::CallbackServerContext* ctx,
                                              const v1beta1::PreStartContainerRequest* req,
                                              v1beta1::PreStartContainerResponse* resp) override;

  // Ends every open ListAndWatch stream (and any that opens later) with OK. Call before
  // shutting the server down; non-blocking.
  void FinishStreams();

 private:
  grpc::Status DoAllocate(const Snapshot& snap, const v1beta1::AllocateRequest& req,
                          v1beta1::AllocateResponse* resp);
  // One of the kMaxConcurrentCalls slots of GetPreferredAllocation and Allocate, held for
  // the call; a call that gets none is refused. The kubelet makes one call at a time, so
  // only other local clients are ever refused, and they cannot multiply the memory calls
  // need.
  class CallSlot {
   public:
    explicit CallSlot(DevicePluginService* s);
    ~CallSlot();
    bool held() const { return held_; }

   private:
    DevicePluginService* s_;
    bool held_;
  };

  const PluginState& state_;
  const Host& host_;
  const ServiceEvents& events_;
  const std::string device_info_dir_;
  const bool use_cdi_;
  const std::string cdi_tag_;
  DpMetrics* const metrics_;
  const std::chrono::milliseconds stream_stall_limit_;

  std::atomic<int> calls_{0};         // GetPreferredAllocation and Allocate calls running
  std::atomic<uint64_t> refused_{0};  // calls refused for want of a slot

  std::mutex streams_mu_;
  bool finishing_ = false;  // guarded by streams_mu_
  // Open streams; each removes itself from OnDone.
  std::map<ListWatchStream*, std::unique_ptr<ListWatchStream>> streams_;  // guarded
};

// The PluginInfo of a device plugin's resource: type "DevicePlugin", versions ["v1beta1"],
// `endpoint` the absolute path of the socket serving DevicePlugin.
pluginregistration::PluginInfo DevicePluginInfo(std::string resource_name, std::string endpoint);

// How many GetPreferredAllocation and Allocate calls one resource runs at once.
inline constexpr int kMaxConcurrentCalls = 2;
// The largest request a resource's server accepts: a kubelet's GetPreferredAllocation at the
// 50,000-ID cap lists ~350 KB of IDs.
inline constexpr int kMaxRequestBytes = 1 << 20;
// Checks that a list of `ids` device IDs in a GetPreferredAllocation request is
// no longer than `snap` has devices (the kubelet's never are): a longer one is refused
// before any copy of it is made.
Status CheckRequestSize(const Snapshot& snap, size_t ids);

}  // namespace hcashare::dp
