// NodeServer: the DRA driver's two sockets. The DRA endpoint
// <kubelet root>/plugins/<driver>/dra.sock serves DRAPlugin v1 and v1beta1 and the health
// stream; the registration socket <kubelet root>/plugins_registry/<driver>-reg.sock serves
// pluginregistration.Registration (type "DRAPlugin"), from which the kubelet's plugin watcher
// learns the endpoint. Each socket is bound under a private name and renamed into place, the
// endpoint first, so the kubelet never sees a registration whose endpoint is not served yet;
// Stop removes a socket only while it is still the one we created (same inode). Start and
// Stop are for one controlling thread.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include <grpcpp/server.h>
#include <grpcpp/server_builder.h>

#include "common/status.h"
#include "dra/health.h"
#include "dra/plugin_service.h"
#include "dra/prepare.h"
#include "node/registration.h"

namespace hcashare::dra {

// How a NodeServer is set up.
struct NodeServerOptions {
  std::string kubelet_root = "/var/lib/kubelet";
  std::string driver;        // the driver name (a DNS subdomain)
  bool serve_health = true;  // serve and advertise v1alpha1.DRAResourceHealth
};

// The kubelet's registration verdict, as NotifyRegistrationStatus last reported it.
struct RegistrationState {
  int notifications = 0;  // NotifyRegistrationStatus calls so far
  bool registered = false;
  std::string error;
};

class NodeServer {
 public:
  // `preparer` and `health` must outlive the server.
  NodeServer(NodeServerOptions options, Preparer& preparer, HealthSource& health);
  // Stop().
  ~NodeServer();
  NodeServer(const NodeServer&) = delete;
  NodeServer& operator=(const NodeServer&) = delete;

  // Creates <root>/plugins/<driver>/ when missing and serves both sockets. FailedPrecondition
  // when <root>/plugins_registry does not exist (the kubelet makes it) or a socket path is too
  // long for a unix socket; Unavailable when a socket cannot be served. Stop()s first.
  Status Start();
  // Ends the health streams, stops both servers (waiting at most `grace` for calls in
  // flight) and removes our socket files. Idempotent.
  void Stop(std::chrono::milliseconds grace = std::chrono::milliseconds(1000));

  // <root>/plugins/<driver>/dra.sock.
  std::string DraSocketPath() const;
  // <root>/plugins_registry/<driver>-reg.sock.
  std::string RegistrationSocketPath() const;
  // What the kubelet last said about our registration.
  RegistrationState registration() const;
  bool serving() const { return dra_.server != nullptr; }

 private:
  // A socket served under a private name, then renamed to its public path.
  struct Served {
    std::unique_ptr<grpc::Server> server;
    std::string path;
    ino_t inode = 0;
  };
  // Builds a server on `public_path` with `add` registering its services.
  Status Serve(const std::string& public_path, const std::function<void(grpc::ServerBuilder&)>& add,
               Served* out);
  void StopServed(Served* s, std::chrono::milliseconds grace);

  const NodeServerOptions opts_;
  Preparer& preparer_;
  HealthSource& health_;

  std::unique_ptr<DraPluginV1> v1_;
  std::unique_ptr<DraPluginV1beta1> v1beta1_;
  std::unique_ptr<DraHealthService> health_service_;
  std::unique_ptr<node::RegistrationService> registration_;
  Served dra_;
  Served reg_;

  mutable std::mutex mu_;
  RegistrationState reg_state_;  // guarded by mu_
};

}  // namespace hcashare::dra
