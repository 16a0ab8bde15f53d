#include "nri/plugin.h"

#include "common/log.h"
#include "nri/api/nri.pb.h"

namespace hcashare::nri {
namespace {

// Below this the runtime may give up on a pod's devices while they are being moved (a VF
// with its RDMA device takes a few hundred milliseconds; IPAM more). containerd's default
// is 2 s.
constexpr std::chrono::milliseconds kRecommendedRequestTimeout{10000};

Pod FromWire(const api::PodSandbox& p) {
  Pod pod{p.id(), p.name(), p.uid(), p.namespace_(), ""};
  for (const api::LinuxNamespace& ns : p.linux().namespaces()) {
    if (ns.type() == "network") pod.netns = ns.path();
  }
  return pod;
}

Reply Refused(RpcCode code, std::string message) { return {code, std::move(message), ""}; }

Reply Answer(const google::protobuf::MessageLite& m) {
  return {RpcCode::kOk, "", m.SerializeAsString()};
}

}  // namespace

Reply PodPlugin::PodEvent(int event, const Pod& pod) {
  Status st;
  if (event == kEventRunPodSandbox) {
    st = handler_.Started(pod);
  } else if (event == kEventStopPodSandbox || event == kEventRemovePodSandbox) {
    st = handler_.Stopped(pod);
  }
  if (!st.ok()) return Refused(RpcCode::kUnknown, st.message());
  return Answer(api::Empty());
}

Reply PodPlugin::Call(const std::string& method, const std::string& request) {
  if (method == "Configure") {
    api::ConfigureRequest req;
    if (!req.ParseFromString(request)) return Refused(RpcCode::kInvalidArgument, "bad request");
    LogInfo("configured by the runtime's NRI",
            {{"runtime", req.runtime_name() + " " + req.runtime_version()},
             {"nri_version", req.nri_version()},
             {"request_timeout_ms", req.request_timeout()}});
    if (req.request_timeout() > 0 &&
        std::chrono::milliseconds(req.request_timeout()) < kRecommendedRequestTimeout) {
      LogWarn(
          "the runtime's NRI request timeout is short: a pod whose devices take longer to "
          "move makes the runtime drop this plugin (the pod then starts without them until "
          "the plugin reconnects); raise it (containerd: plugin_request_timeout)",
          {{"request_timeout_ms", req.request_timeout()},
           {"recommended_ms", static_cast<int64_t>(kRecommendedRequestTimeout.count())}});
    }
    if (Status st = handler_.Configure(req.config()); !st.ok()) {
      return Refused(RpcCode::kInvalidArgument, st.message());
    }
    api::ConfigureResponse out;
    out.set_events((1 << (kEventRunPodSandbox - 1)) | (1 << (kEventStopPodSandbox - 1)) |
                   (1 << (kEventRemovePodSandbox - 1)));
    return Answer(out);
  }
  if (method == "Synchronize") {
    api::SynchronizeRequest req;
    if (!req.ParseFromString(request)) return Refused(RpcCode::kInvalidArgument, "bad request");
    if (sync_.size() + static_cast<size_t>(req.pods_size()) > kMaxSyncPods) {
      sync_.clear();
      return Refused(RpcCode::kInvalidArgument,
                     "more than " + std::to_string(kMaxSyncPods) + " pods to synchronize");
    }
    for (const api::PodSandbox& p : req.pods()) sync_.push_back(FromWire(p));
    api::SynchronizeResponse out;
    out.set_more(req.more());
    if (!req.more()) {
      std::vector<Pod> pods = std::move(sync_);
      sync_.clear();
      handler_.Synchronize(pods);
    }
    return Answer(out);
  }
  if (method == "RunPodSandbox" || method == "StopPodSandbox" || method == "RemovePodSandbox") {
    api::PodSandboxRequest req;
    if (!req.ParseFromString(request)) return Refused(RpcCode::kInvalidArgument, "bad request");
    const int event = method == "RunPodSandbox"    ? kEventRunPodSandbox
                      : method == "StopPodSandbox" ? kEventStopPodSandbox
                                                   : kEventRemovePodSandbox;
    return PodEvent(event, FromWire(req.pod()));
  }
  if (method == "StateChange") {
    api::StateChangeEvent req;
    if (!req.ParseFromString(request)) return Refused(RpcCode::kInvalidArgument, "bad request");
    return PodEvent(req.event(), FromWire(req.pod()));
  }
  if (method == "Shutdown") {
    LogInfo("the runtime's NRI is shutting down");
    return Answer(api::Empty());
  }
  return Refused(RpcCode::kUnimplemented, "method " + method + " is not implemented");
}

}  // namespace hcashare::nri
