#include "deviceplugin/kubelet_client.h"

#include <grpcpp/grpcpp.h>
#include <unistd.h>

#include "deviceplugin/api/deviceplugin_v1beta1.grpc.pb.h"

namespace hcashare::dp {

Status RegisterWithKubelet(const std::string& kubelet_socket, const std::string& endpoint,
                           const std::string& resource_name,
                           std::chrono::milliseconds connect_timeout,
                           std::chrono::milliseconds call_timeout) {
  // Dial only a socket that exists: a channel that fails first backs off for a second
  // before its next attempt, which would delay re-registration after a kubelet restart.
  if (::access(kubelet_socket.c_str(), F_OK) != 0) {
    return Status::Unavailable(kubelet_socket + " does not exist");
  }
  // A private subchannel pool: never reuse a connection to a previous kubelet.sock inode.
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 50);
  args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, 50);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 500);
  auto channel = grpc::CreateCustomChannel("unix://" + kubelet_socket,
                                           grpc::InsecureChannelCredentials(), args);
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
  grpc::Status st = stub->Register(&ctx, req, &resp);
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
