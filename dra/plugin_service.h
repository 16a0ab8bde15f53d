// The gRPC services of the DRA driver's kubelet side, on one socket (dra/node_server.h):
// k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin and .v1beta1.DRAPlugin (the same Preparer behind
// both; v1 also echoes share_id), and v1alpha1.DRAResourceHealth (the health stream from a
// HealthSource). The registration service is the device plugin's RegistrationService with
// DraPluginInfo(). The DRAPlugin services are synchronous (Prepare waits for the API server,
// on gRPC's thread pool); the health stream is on the callback API and holds no thread while
// idle.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>

#include <grpcpp/support/server_callback.h>

#include "dra/api/dra_health_v1alpha1.grpc.pb.h"
#include "dra/api/dra_v1.grpc.pb.h"
#include "dra/api/dra_v1beta1.grpc.pb.h"
#include "dra/health.h"
#include "dra/prepare.h"
#include "node/api/pluginregistration.pb.h"

namespace hcashare::dra {

namespace drav1 = ::k8s::io::kubelet::pkg::apis::dra::v1;
namespace drav1beta1 = ::k8s::io::kubelet::pkg::apis::dra::v1beta1;

// The services GetInfo lists, in the kubelet's order of preference.
inline constexpr const char* kDraV1Service = "v1.DRAPlugin";
inline constexpr const char* kDraV1beta1Service = "v1beta1.DRAPlugin";
inline constexpr const char* kDraHealthService = "v1alpha1.DRAResourceHealth";

// GetInfo's answer: type "DRAPlugin", `driver`, the DRA socket `endpoint` (absolute), and
// the services above (the health service only `with_health`).
pluginregistration::PluginInfo DraPluginInfo(const std::string& driver, const std::string& endpoint,
                                             bool with_health);

// DRAPlugin v1. `preparer` must outlive the service.
class DraPluginV1 final : public drav1::DRAPlugin::Service {
 public:
  explicit DraPluginV1(Preparer& preparer) : preparer_(preparer) {}
  grpc::Status NodePrepareResources(grpc::ServerContext* ctx,
                                    const drav1::NodePrepareResourcesRequest* req,
                                    drav1::NodePrepareResourcesResponse* resp) override;
  grpc::Status NodeUnprepareResources(grpc::ServerContext* ctx,
                                      const drav1::NodeUnprepareResourcesRequest* req,
                                      drav1::NodeUnprepareResourcesResponse* resp) override;

 private:
  Preparer& preparer_;
};

// DRAPlugin v1beta1 (no share_id). `preparer` must outlive the service.
class DraPluginV1beta1 final : public drav1beta1::DRAPlugin::Service {
 public:
  explicit DraPluginV1beta1(Preparer& preparer) : preparer_(preparer) {}
  grpc::Status NodePrepareResources(grpc::ServerContext* ctx,
                                    const drav1beta1::NodePrepareResourcesRequest* req,
                                    drav1beta1::NodePrepareResourcesResponse* resp) override;
  grpc::Status NodeUnprepareResources(grpc::ServerContext* ctx,
                                      const drav1beta1::NodeUnprepareResourcesRequest* req,
                                      drav1beta1::NodeUnprepareResourcesResponse* resp) override;

 private:
  Preparer& preparer_;
};

// The wire form of `devices` sent at `now_unix` (each message is the full list, every entry
// stamped with the sending time; messages cut to kMaxHealthMessage).
v1alpha1::NodeWatchResourcesResponse HealthMessage(const std::vector<DeviceHealthEntry>& devices,
                                                   int64_t now_unix);

class HealthStream;

// v1alpha1.DRAResourceHealth: each NodeWatchResources stream sends the current list at once
// and again after every HealthSource::Publish. `source` must outlive the service.
class DraHealthService final : public v1alpha1::DRAResourceHealth::CallbackService {
 public:
  explicit DraHealthService(HealthSource& source);
  ~DraHealthService() override;

  grpc::ServerWriteReactor<v1alpha1::NodeWatchResourcesResponse>* NodeWatchResources(
      grpc::CallbackServerContext* ctx, const v1alpha1::NodeWatchResourcesRequest* req) override;

  // Ends every open stream (and any that opens later) with OK. Call before shutting the
  // server down; non-blocking.
  void FinishStreams();
  // Streams open now.
  size_t open_streams() const;

 private:
  HealthSource& source_;
  mutable std::mutex mu_;
  bool finishing_ = false;                                          // guarded by mu_
  std::map<HealthStream*, std::unique_ptr<HealthStream>> streams_;  // guarded by mu_
};

}  // namespace hcashare::dra
