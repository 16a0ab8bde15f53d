#include "testing/fake_dra_kubelet.h"

#include <sys/stat.h>

#include <grpcpp/grpcpp.h>

#include "common/atomic_file.h"
#include "common/grpc_edge.h"
#include "dra/api/dra_v1beta1.grpc.pb.h"
#include "node/api/pluginregistration.grpc.pb.h"

namespace hcashare::fake {
namespace drav1 = ::k8s::io::kubelet::pkg::apis::dra::v1;
namespace drav1beta1 = ::k8s::io::kubelet::pkg::apis::dra::v1beta1;

namespace {

constexpr std::chrono::seconds kCallTimeout(10);

// A channel with its own connection (see fake_kubelet.cc).
std::shared_ptr<grpc::Channel> PrivateChannel(const std::string& socket_path) {
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  return grpc::CreateCustomChannel("unix://" + socket_path, grpc::InsecureChannelCredentials(),
                                   args);
}

void SetDeadline(grpc::ClientContext* ctx) {
  ctx->set_deadline(std::chrono::system_clock::now() + kCallTimeout);
}

Status FromGrpc(const grpc::Status& st, const std::string& what) {
  if (st.ok()) return Status::Ok();
  return Status::Unavailable(what + ": gRPC code " + std::to_string(st.error_code()) + ": " +
                             st.error_message());
}

template <typename Request>
Request ClaimsRequest(const std::vector<FakeClaim>& claims) {
  Request req;
  for (const auto& c : claims) {
    auto* claim = req.add_claims();
    claim->set_namespace_(c.ns);
    claim->set_uid(c.uid);
    claim->set_name(c.name);
  }
  return req;
}

// `msg` re-read as the v1 message `Out` (the versions share field numbers).
template <typename Out, typename In>
Result<Out> AsV1(const In& msg) {
  Out out;
  if (!out.ParseFromString(msg.SerializeAsString())) {
    return Status::Internal("a v1beta1 answer does not parse as v1");
  }
  return out;
}

}  // namespace

HealthWatch::HealthWatch(std::shared_ptr<grpc::Channel> channel)
    : stub_(v1alpha1::DRAResourceHealth::NewStub(std::move(channel))) {
  reader_ = std::thread([this] { Read(); });
}

HealthWatch::~HealthWatch() {
  ctx_.TryCancel();
  reader_.join();
}

void HealthWatch::Read() {
  v1alpha1::NodeWatchResourcesRequest req;
  GrpcCallScope edge;  // see common/grpc_edge.h
  auto reader = stub_->NodeWatchResources(&ctx_, req);
  v1alpha1::NodeWatchResourcesResponse msg;
  while (reader->Read(&msg)) {
    std::lock_guard<std::mutex> lock(mu_);
    queue_.push_back(msg);
    cv_.notify_all();
  }
  reader->Finish().ok();
  std::lock_guard<std::mutex> lock(mu_);
  ended_ = true;
  cv_.notify_all();
}

Result<v1alpha1::NodeWatchResourcesResponse> HealthWatch::Next(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait_for(lock, timeout, [&] { return !queue_.empty() || ended_; });
  if (queue_.empty()) {
    return Status::Unavailable(ended_ ? "the health stream ended" : "no health message in time");
  }
  v1alpha1::NodeWatchResourcesResponse msg = std::move(queue_.front());
  queue_.pop_front();
  return msg;
}

bool HealthWatch::ended() const {
  std::lock_guard<std::mutex> lock(mu_);
  return ended_;
}

FakeDraKubelet::FakeDraKubelet(std::string kubelet_root) : root_(std::move(kubelet_root)) {
  CreateDirectories(RegistryDir(), 0750).ok();
}

Result<pluginregistration::PluginInfo> FakeDraKubelet::Register(const std::string& driver,
                                                                const std::string& refuse) {
  const std::string sock = RegistryDir() + "/" + driver + "-reg.sock";
  struct stat st {};
  if (::stat(sock.c_str(), &st) != 0 || !S_ISSOCK(st.st_mode)) {
    return Status::FailedPrecondition("no registration socket " + sock);
  }
  auto reg = pluginregistration::Registration::NewStub(PrivateChannel(sock));
  pluginregistration::PluginInfo info;
  {
    grpc::ClientContext ctx;
    SetDeadline(&ctx);
    GrpcCallScope edge;  // see common/grpc_edge.h
    RETURN_IF_ERROR(FromGrpc(reg->GetInfo(&ctx, {}, &info), "GetInfo"));
  }
  std::string problem;
  if (info.type() != "DRAPlugin") {
    problem = "type is \"" + info.type() + "\", not DRAPlugin";
  } else if (info.name() != driver) {
    problem = "name is \"" + info.name() + "\", not " + driver;
  } else if (info.supported_versions_size() == 0 || info.supported_versions(0) != "v1.DRAPlugin") {
    problem = "supported_versions does not start with v1.DRAPlugin";
  } else if (info.endpoint().empty() || info.endpoint()[0] != '/') {
    problem = "endpoint \"" + info.endpoint() + "\" is not an absolute path";
  }
  pluginregistration::RegistrationStatus status;
  status.set_plugin_registered(problem.empty() && refuse.empty());
  status.set_error(!problem.empty() ? problem : refuse);
  if (problem.empty() && refuse.empty()) {
    endpoint_ = info.endpoint();
    channel_ = PrivateChannel(endpoint_);
    if (!channel_->WaitForConnected(std::chrono::system_clock::now() + kCallTimeout)) {
      problem = "endpoint " + endpoint_ + " does not answer";
      status.set_plugin_registered(false);
      status.set_error(problem);
      channel_.reset();
    }
  }
  {
    grpc::ClientContext ctx;
    SetDeadline(&ctx);
    pluginregistration::RegistrationStatusResponse resp;
    GrpcCallScope edge;  // see common/grpc_edge.h
    RETURN_IF_ERROR(
        FromGrpc(reg->NotifyRegistrationStatus(&ctx, status, &resp), "NotifyRegistrationStatus"));
  }
  if (!problem.empty()) return Status::FailedPrecondition("registration refused: " + problem);
  return info;
}

namespace {

// One DRAPlugin call in `api`'s version: `call(stub, ctx, request, response)` on the v1 or
// the v1beta1 stub, the v1beta1 answer converted to v1. V1Req/V1Resp and BetaReq/BetaResp
// are each version's request and response types.
template <typename V1Req, typename V1Resp, typename BetaReq, typename BetaResp, typename Call>
Result<V1Resp> CallDraPlugin(const std::shared_ptr<grpc::Channel>& channel, DraApi api,
                             const std::vector<FakeClaim>& claims, const std::string& what,
                             Call call) {
  if (!channel) return Status::FailedPrecondition("not registered");
  grpc::ClientContext ctx;
  SetDeadline(&ctx);
  GrpcCallScope edge;  // see common/grpc_edge.h
  if (api == DraApi::kV1) {
    V1Resp resp;
    auto stub = drav1::DRAPlugin::NewStub(channel);
    RETURN_IF_ERROR(FromGrpc(call(*stub, &ctx, ClaimsRequest<V1Req>(claims), &resp), "v1 " + what));
    return resp;
  }
  BetaResp resp;
  auto stub = drav1beta1::DRAPlugin::NewStub(channel);
  RETURN_IF_ERROR(
      FromGrpc(call(*stub, &ctx, ClaimsRequest<BetaReq>(claims), &resp), "v1beta1 " + what));
  return AsV1<V1Resp>(resp);
}

}  // namespace

Result<drav1::NodePrepareResourcesResponse> FakeDraKubelet::Prepare(
    DraApi api, const std::vector<FakeClaim>& claims) {
  return CallDraPlugin<drav1::NodePrepareResourcesRequest, drav1::NodePrepareResourcesResponse,
                       drav1beta1::NodePrepareResourcesRequest,
                       drav1beta1::NodePrepareResourcesResponse>(
      channel_, api, claims, "NodePrepareResources",
      [](auto& stub, grpc::ClientContext* ctx, const auto& req, auto* resp) {
        return stub.NodePrepareResources(ctx, req, resp);
      });
}

Result<drav1::NodeUnprepareResourcesResponse> FakeDraKubelet::Unprepare(
    DraApi api, const std::vector<FakeClaim>& claims) {
  return CallDraPlugin<drav1::NodeUnprepareResourcesRequest, drav1::NodeUnprepareResourcesResponse,
                       drav1beta1::NodeUnprepareResourcesRequest,
                       drav1beta1::NodeUnprepareResourcesResponse>(
      channel_, api, claims, "NodeUnprepareResources",
      [](auto& stub, grpc::ClientContext* ctx, const auto& req, auto* resp) {
        return stub.NodeUnprepareResources(ctx, req, resp);
      });
}

std::unique_ptr<HealthWatch> FakeDraKubelet::WatchHealth() {
  if (!channel_) return nullptr;
  return std::make_unique<HealthWatch>(channel_);
}

}  // namespace hcashare::fake
