#include "deviceplugin/kubelet_client.h"

#include <grpcpp/grpcpp.h>

#include "common/grpc_edge.h"
#include "deviceplugin/api/deviceplugin_v1beta1.grpc.pb.h"
#include "node/socket_files.h"

namespace hcashare::dp {

std::shared_ptr<grpc::Channel> KubeletRegistrar::Channel() {
  // Dial only a socket that exists: a channel whose first attempt fails backs off before
  // the next one, which would delay re-registration after a kubelet restart.
  const ino_t inode = node::InodeOf(socket_);
  std::lock_guard<std::mutex> lock(mu_);
  if (inode == 0) {
    channel_.reset();
    inode_ = 0;
    return nullptr;
  }
  if (!channel_ || inode != inode_) {
    // A private subchannel pool: never reuse a connection to a previous inode.
    grpc::ChannelArguments args;
    args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
    args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 50);
    args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, 50);
    args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 500);
    channel_ =
        grpc::CreateCustomChannel("unix://" + socket_, grpc::InsecureChannelCredentials(), args);
    inode_ = inode;
  }
  return channel_;
}

void RegisterCancel::Cancel() {
  std::lock_guard<std::mutex> lock(mu_);
  cancelled_ = true;
  if (ctx_ != nullptr) ctx_->TryCancel();
}

bool RegisterCancel::Begin(grpc::ClientContext* ctx) {
  std::lock_guard<std::mutex> lock(mu_);
  if (cancelled_) return false;  // never record a context the caller will not use
  ctx_ = ctx;
  return true;
}

bool RegisterCancel::End() {
  std::lock_guard<std::mutex> lock(mu_);
  ctx_ = nullptr;
  return !cancelled_;
}

Status KubeletRegistrar::Register(const std::string& endpoint, const std::string& resource_name,
                                  std::chrono::milliseconds connect_timeout,
                                  std::chrono::milliseconds call_timeout, RegisterCancel* cancel) {
  auto channel = Channel();
  if (!channel) return Status::Unavailable(socket_ + " does not exist");
  auto stub = v1beta1::Registration::NewStub(channel);
  v1beta1::RegisterRequest req;
  req.set_version("v1beta1");
  req.set_endpoint(endpoint);
  req.set_resource_name(resource_name);
  // The same options GetDevicePluginOptions returns: older kubelets use this copy.
  req.mutable_options()->set_pre_start_required(false);
  req.mutable_options()->set_get_preferred_allocation_available(true);
  // wait_for_ready lets the call itself wait for the connection (no separate
  // connectivity round trip); the deadline covers connecting and the call.
  grpc::ClientContext ctx;
  ctx.set_wait_for_ready(true);
  ctx.set_deadline(std::chrono::system_clock::now() + connect_timeout + call_timeout);
  v1beta1::Empty resp;
  grpc::Status st;
  const Status cancelled = Status::Unavailable("registration of " + resource_name + " cancelled");
  if (cancel != nullptr && !cancel->Begin(&ctx)) return cancelled;
  {
    GrpcCallScope edge;  // see common/grpc_edge.h
    st = stub->Register(&ctx, req, &resp);
  }
  if (cancel != nullptr && !cancel->End()) return cancelled;
  if (!st.ok()) {
    std::string msg =
        "kubelet refused registration of " + resource_name + ": " + st.error_message();
    if (st.error_code() == grpc::StatusCode::UNAVAILABLE ||
        st.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED) {
      return Status::Unavailable(msg);
    }
    return Status::FailedPrecondition(msg);
  }
  return Status::Ok();
}

}  // namespace hcashare::dp
