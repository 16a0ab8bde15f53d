#include "node/registration.h"

#include "common/grpc_edge.h"
#include "node/grpc_status.h"

namespace hcashare::node {

grpc::ServerUnaryReactor* RegistrationService::GetInfo(grpc::CallbackServerContext* ctx,
                                                       const pluginregistration::InfoRequest*,
                                                       pluginregistration::PluginInfo* resp) {
  GrpcCallbackScope edge;  // see common/grpc_edge.h
  *resp = info_;
  return FinishUnary(ctx, grpc::Status::OK);
}

grpc::ServerUnaryReactor* RegistrationService::NotifyRegistrationStatus(
    grpc::CallbackServerContext* ctx, const pluginregistration::RegistrationStatus* req,
    pluginregistration::RegistrationStatusResponse*) {
  GrpcCallbackScope edge;  // see common/grpc_edge.h
  if (on_status_) on_status_(req->plugin_registered(), req->error());
  return FinishUnary(ctx, grpc::Status::OK);
}

}  // namespace hcashare::node
