// The kubelet's plugin registration (plugins_registry): the Registration service a plugin
// serves on its socket there, the same for both kubelet front-ends.
#pragma once

#include <functional>
#include <string>

#include "node/api/pluginregistration.grpc.pb.h"

namespace hcashare::node {

// pluginregistration.Registration for one plugin: GetInfo answers at once with a fixed
// PluginInfo. A device plugin's resource (deviceplugin/plugin_service.h, DevicePluginInfo)
// or the DRA driver (dra/node_server.h).
class RegistrationService final : public pluginregistration::Registration::CallbackService {
 public:
  // What NotifyRegistrationStatus reports: registered, and the kubelet's error.
  using StatusCallback = std::function<void(bool registered, const std::string& error)>;

  // GetInfo answers `info`; `on_status` (quick, non-blocking; may be empty)
  // gets the kubelet's verdict.
  RegistrationService(pluginregistration::PluginInfo info, StatusCallback on_status)
      : info_(std::move(info)), on_status_(std::move(on_status)) {}

  grpc::ServerUnaryReactor* GetInfo(grpc::CallbackServerContext* ctx,
                                    const pluginregistration::InfoRequest* req,
                                    pluginregistration::PluginInfo* resp) override;
  grpc::ServerUnaryReactor* NotifyRegistrationStatus(
      grpc::CallbackServerContext* ctx, const pluginregistration::RegistrationStatus* req,
      pluginregistration::RegistrationStatusResponse* resp) override;

 private:
  const pluginregistration::PluginInfo info_;
  const StatusCallback on_status_;
};

}  // namespace hcashare::node
