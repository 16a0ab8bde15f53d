// FakeDraKubelet: plays the kubelet's side of a DRA driver over real gRPC unix sockets, for
// the DRA tests. Register() does what the plugin watcher does with a new socket in
// <root>/plugins_registry: GetInfo on <driver>-reg.sock (type "DRAPlugin", the driver's name,
// "v1.DRAPlugin" first), a connection to the endpoint, NotifyRegistrationStatus. Then the
// test calls NodePrepareResources / NodeUnprepareResources over v1 or v1beta1 and opens the
// health stream. A v1beta1 answer is handed back re-read as v1 (the two are wire-compatible),
// so one set of assertions serves both. Thread-compatible (one test thread).
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <grpcpp/channel.h>
#include <grpcpp/client_context.h>

#include "common/status.h"
#include "dra/api/dra_health_v1alpha1.grpc.pb.h"
#include "dra/api/dra_v1.grpc.pb.h"
#include "node/api/pluginregistration.pb.h"

namespace hcashare::fake {

// A claim as the kubelet names it.
struct FakeClaim {
  std::string ns;
  std::string uid;
  std::string name;
};

// The DRAPlugin version a call goes over.
enum class DraApi { kV1, kV1beta1 };

// An open NodeWatchResources stream, read on a thread of its own.
class HealthWatch {
 public:
  explicit HealthWatch(std::shared_ptr<grpc::Channel> channel);
  // Cancels the call and joins the reader.
  ~HealthWatch();
  // The next message, waiting up to `timeout`; Unavailable when the stream ended or none came.
  Result<v1alpha1::NodeWatchResourcesResponse> Next(std::chrono::milliseconds timeout);
  // True once the server ended the stream.
  bool ended() const;

 private:
  void Read();

  std::unique_ptr<v1alpha1::DRAResourceHealth::Stub> stub_;
  grpc::ClientContext ctx_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<v1alpha1::NodeWatchResourcesResponse> queue_;  // guarded by mu_
  bool ended_ = false;                                      // guarded by mu_
  std::thread reader_;
};

class FakeDraKubelet {
 public:
  // Creates <kubelet_root>/plugins_registry.
  explicit FakeDraKubelet(std::string kubelet_root);

  std::string RegistryDir() const { return root_ + "/plugins_registry"; }

  // Registers `driver` as the plugin watcher does (see the file comment). FailedPrecondition
  // naming the check that failed (the socket is absent, a wrong type, name or version list,
  // an endpoint that does not answer). With a non-empty `refuse`, reports that error
  // (plugin_registered false) instead and does not connect.
  Result<pluginregistration::PluginInfo> Register(const std::string& driver,
                                                  const std::string& refuse = "");

  // NodePrepareResources over `api`, on the registered endpoint.
  Result<k8s::io::kubelet::pkg::apis::dra::v1::NodePrepareResourcesResponse> Prepare(
      DraApi api, const std::vector<FakeClaim>& claims);
  // NodeUnprepareResources over `api`.
  Result<k8s::io::kubelet::pkg::apis::dra::v1::NodeUnprepareResourcesResponse> Unprepare(
      DraApi api, const std::vector<FakeClaim>& claims);
  // Opens NodeWatchResources on the registered endpoint.
  std::unique_ptr<HealthWatch> WatchHealth();

  // The endpoint dialled ("" before Register).
  const std::string& endpoint() const { return endpoint_; }

 private:
  const std::string root_;
  std::string endpoint_;
  std::shared_ptr<grpc::Channel> channel_;
};

}  // namespace hcashare::fake
