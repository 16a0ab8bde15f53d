#include "dra/plugin_service.h"

#include <ctime>

#include <chrono>
#include <functional>
#include <vector>

#include "common/grpc_edge.h"
#include "node/grpc_status.h"

namespace hcashare::dra {
namespace {

template <typename Request>
std::vector<ClaimRef> RefsOf(const Request& req) {
  std::vector<ClaimRef> refs;
  refs.reserve(static_cast<size_t>(req.claims_size()));
  for (const auto& c : req.claims()) refs.push_back({c.namespace_(), c.uid(), c.name()});
  return refs;
}

void SetShare(drav1::Device* d, const PreparedDevice& p) {
  if (p.share_id) d->set_share_id(*p.share_id);
}
void SetShare(drav1beta1::Device*, const PreparedDevice&) {}  // v1beta1 has no share_id

// NodePrepareResources of either version.
// The steady-clock time a little before the call's deadline (none: max).
std::chrono::steady_clock::time_point DeadlineOf(const grpc::ServerContext* ctx) {
  const auto deadline = ctx->deadline();
  if (deadline == std::chrono::system_clock::time_point::max()) {
    return std::chrono::steady_clock::time_point::max();
  }
  // Room to write the answer back.
  const auto left = deadline - std::chrono::system_clock::now() - std::chrono::seconds(1);
  return std::chrono::steady_clock::now() +
         std::chrono::duration_cast<std::chrono::steady_clock::duration>(left);
}

template <typename Request, typename Response>
grpc::Status PrepareCall(Preparer& preparer, const grpc::ServerContext* ctx, const Request& req,
                         Response* resp) {
  GrpcCallbackScope edge;  // see common/grpc_edge.h
  if (req.claims_size() > static_cast<int>(kMaxClaimsPerRequest)) {
    return node::ToGrpc(Status::InvalidArgument(
        "NodePrepareResources names " + std::to_string(req.claims_size()) + " claims; at most " +
        std::to_string(kMaxClaimsPerRequest) + " are accepted"));
  }
  Result<std::map<std::string, ClaimOutcome>> out = preparer.Prepare(RefsOf(req), DeadlineOf(ctx));
  if (!out.ok()) return node::ToGrpc(out.status());
  for (const auto& [uid, outcome] : *out) {
    auto& claim = (*resp->mutable_claims())[uid];
    if (!outcome.error.empty()) {
      claim.set_error(outcome.error);
      continue;
    }
    for (const auto& p : outcome.devices) {
      auto* d = claim.add_devices();
      for (const auto& r : p.request_names) d->add_request_names(r);
      d->set_pool_name(p.pool);
      d->set_device_name(p.device);
      for (const auto& id : p.cdi_device_ids) d->add_cdi_device_ids(id);
      SetShare(d, p);
    }
  }
  return grpc::Status::OK;
}

// NodeUnprepareResources of either version.
template <typename Request, typename Response>
grpc::Status UnprepareCall(Preparer& preparer, const Request& req, Response* resp) {
  GrpcCallbackScope edge;  // see common/grpc_edge.h
  if (req.claims_size() > static_cast<int>(kMaxClaimsPerRequest)) {
    return node::ToGrpc(Status::InvalidArgument(
        "NodeUnprepareResources names " + std::to_string(req.claims_size()) + " claims; at most " +
        std::to_string(kMaxClaimsPerRequest) + " are accepted"));
  }
  Result<std::map<std::string, std::string>> out = preparer.Unprepare(RefsOf(req));
  if (!out.ok()) return node::ToGrpc(out.status());
  for (const auto& [uid, error] : *out) (*resp->mutable_claims())[uid].set_error(error);
  return grpc::Status::OK;
}

v1alpha1::HealthStatus WireHealth(DeviceHealthStatus h) {
  switch (h) {
    case DeviceHealthStatus::kHealthy:
      return v1alpha1::HEALTHY;
    case DeviceHealthStatus::kUnhealthy:
      return v1alpha1::UNHEALTHY;
    default:
      return v1alpha1::UNKNOWN;
  }
}

}  // namespace

// One open NodeWatchResources call: the current list at once, then the newest list after
// each publish; a write in flight is never doubled up. Ends when the kubelet cancels, a
// write fails, or End() is called.
class HealthStream final : public grpc::ServerWriteReactor<v1alpha1::NodeWatchResourcesResponse> {
 public:
  HealthStream(HealthSource& source, std::function<void(HealthStream*)> on_done)
      : source_(source), on_done_(std::move(on_done)) {}

  // Subscribes and starts the first write. Call once.
  void Begin() {
    sub_ = source_.Subscribe([this] {
      std::lock_guard<std::mutex> lock(mu_);
      MaybeWriteLocked();
    });
    std::lock_guard<std::mutex> lock(mu_);
    MaybeWriteLocked();
  }
  // Ends the stream with OK from our side. Idempotent; non-blocking.
  void End() {
    std::lock_guard<std::mutex> lock(mu_);
    finish_requested_ = true;
    MaybeFinishLocked();
  }

  void OnWriteDone(bool ok) override {
    GrpcCallbackScope edge;  // see common/grpc_edge.h
    std::lock_guard<std::mutex> lock(mu_);
    writing_ = false;
    if (!ok) finish_requested_ = true;
    MaybeWriteLocked();
    MaybeFinishLocked();
  }
  void OnCancel() override {
    GrpcCallbackScope edge;  // see common/grpc_edge.h
    End();
  }
  void OnDone() override {
    GrpcCallbackScope edge;     // see common/grpc_edge.h
    source_.Unsubscribe(sub_);  // no callback runs after this
    on_done_(this);             // may destroy this
  }

 private:
  void MaybeWriteLocked() {
    if (writing_ || finish_requested_ || finished_) return;
    HealthSource::Snapshot snap = source_.Current();
    if (sent_any_ && snap.generation == sent_generation_) return;
    sent_any_ = true;
    sent_generation_ = snap.generation;
    msg_ = HealthMessage(*snap.devices, static_cast<int64_t>(std::time(nullptr)));
    writing_ = true;
    GrpcHandOff();
    StartWrite(&msg_);
  }
  void MaybeFinishLocked() {
    if (!finish_requested_ || writing_ || finished_) return;
    finished_ = true;
    GrpcHandOff();
    Finish(grpc::Status::OK);
  }

  HealthSource& source_;
  std::function<void(HealthStream*)> on_done_;
  uint64_t sub_ = 0;

  std::mutex mu_;
  bool writing_ = false;                      // guarded by mu_
  bool finish_requested_ = false;             // guarded by mu_
  bool finished_ = false;                     // guarded by mu_
  bool sent_any_ = false;                     // guarded by mu_
  uint64_t sent_generation_ = 0;              // guarded by mu_
  v1alpha1::NodeWatchResourcesResponse msg_;  // guarded by mu_: the message being written
};

pluginregistration::PluginInfo DraPluginInfo(const std::string& driver, const std::string& endpoint,
                                             bool with_health) {
  pluginregistration::PluginInfo info;
  info.set_type("DRAPlugin");
  info.set_name(driver);
  info.set_endpoint(endpoint);
  info.add_supported_versions(kDraV1Service);
  info.add_supported_versions(kDraV1beta1Service);
  if (with_health) info.add_supported_versions(kDraHealthService);
  return info;
}

grpc::Status DraPluginV1::NodePrepareResources(grpc::ServerContext* ctx,
                                               const drav1::NodePrepareResourcesRequest* req,
                                               drav1::NodePrepareResourcesResponse* resp) {
  return PrepareCall(preparer_, ctx, *req, resp);
}

grpc::Status DraPluginV1::NodeUnprepareResources(grpc::ServerContext*,
                                                 const drav1::NodeUnprepareResourcesRequest* req,
                                                 drav1::NodeUnprepareResourcesResponse* resp) {
  return UnprepareCall(preparer_, *req, resp);
}

grpc::Status DraPluginV1beta1::NodePrepareResources(
    grpc::ServerContext* ctx, const drav1beta1::NodePrepareResourcesRequest* req,
    drav1beta1::NodePrepareResourcesResponse* resp) {
  return PrepareCall(preparer_, ctx, *req, resp);
}

grpc::Status DraPluginV1beta1::NodeUnprepareResources(
    grpc::ServerContext*, const drav1beta1::NodeUnprepareResourcesRequest* req,
    drav1beta1::NodeUnprepareResourcesResponse* resp) {
  return UnprepareCall(preparer_, *req, resp);
}

v1alpha1::NodeWatchResourcesResponse HealthMessage(const std::vector<DeviceHealthEntry>& devices,
                                                   int64_t now_unix) {
  v1alpha1::NodeWatchResourcesResponse msg;
  for (const auto& e : devices) {
    auto* d = msg.add_devices();
    d->mutable_device()->set_pool_name(e.pool);
    d->mutable_device()->set_device_name(e.device);
    d->set_health(WireHealth(e.health));
    d->set_last_updated_time(now_unix);
    d->set_health_check_timeout_seconds(e.timeout_seconds);
    d->set_message(e.message.substr(0, kMaxHealthMessage));
  }
  return msg;
}

DraHealthService::DraHealthService(HealthSource& source) : source_(source) {}

DraHealthService::~DraHealthService() = default;

grpc::ServerWriteReactor<v1alpha1::NodeWatchResourcesResponse>*
DraHealthService::NodeWatchResources(grpc::CallbackServerContext*,
                                     const v1alpha1::NodeWatchResourcesRequest*) {
  GrpcCallbackScope edge;  // see common/grpc_edge.h
  auto stream = std::make_unique<HealthStream>(source_, [this](HealthStream* s) {
    std::lock_guard<std::mutex> lock(mu_);
    streams_.erase(s);
  });
  HealthStream* raw = stream.get();
  std::lock_guard<std::mutex> lock(mu_);
  streams_.emplace(raw, std::move(stream));
  raw->Begin();
  if (finishing_) raw->End();
  return raw;
}

void DraHealthService::FinishStreams() {
  std::lock_guard<std::mutex> lock(mu_);
  finishing_ = true;
  for (auto& [raw, stream] : streams_) stream->End();
}

size_t DraHealthService::open_streams() const {
  std::lock_guard<std::mutex> lock(mu_);
  return streams_.size();
}

}  // namespace hcashare::dra
