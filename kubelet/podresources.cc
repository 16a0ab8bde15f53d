#include "kubelet/podresources.h"

#include <grpcpp/grpcpp.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <random>
#include <thread>
#include <utility>

#include "common/log.h"
#include "kubelet/api/podresources_v1.grpc.pb.h"
#include "kubelet/api/podresources_v1alpha1.grpc.pb.h"
#include "kubelet/podresources_devices.h"

namespace hcashare::kubelet {

using std::chrono::milliseconds;

namespace {

constexpr milliseconds kBackoffCap{1000};

const char* GrpcCodeName(grpc::StatusCode code) {
  switch (code) {
    case grpc::StatusCode::OK:
      return "OK";
    case grpc::StatusCode::CANCELLED:
      return "CANCELLED";
    case grpc::StatusCode::UNKNOWN:
      return "UNKNOWN";
    case grpc::StatusCode::INVALID_ARGUMENT:
      return "INVALID_ARGUMENT";
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      return "DEADLINE_EXCEEDED";
    case grpc::StatusCode::NOT_FOUND:
      return "NOT_FOUND";
    case grpc::StatusCode::ALREADY_EXISTS:
      return "ALREADY_EXISTS";
    case grpc::StatusCode::PERMISSION_DENIED:
      return "PERMISSION_DENIED";
    case grpc::StatusCode::RESOURCE_EXHAUSTED:
      return "RESOURCE_EXHAUSTED";
    case grpc::StatusCode::FAILED_PRECONDITION:
      return "FAILED_PRECONDITION";
    case grpc::StatusCode::ABORTED:
      return "ABORTED";
    case grpc::StatusCode::OUT_OF_RANGE:
      return "OUT_OF_RANGE";
    case grpc::StatusCode::UNIMPLEMENTED:
      return "UNIMPLEMENTED";
    case grpc::StatusCode::INTERNAL:
      return "INTERNAL";
    case grpc::StatusCode::UNAVAILABLE:
      return "UNAVAILABLE";
    case grpc::StatusCode::DATA_LOSS:
      return "DATA_LOSS";
    case grpc::StatusCode::UNAUTHENTICATED:
      return "UNAUTHENTICATED";
    default:
      return "UNRECOGNIZED_CODE";
  }
}

bool Contains(const std::string& s, const char* needle) {
  return s.find(needle) != std::string::npos;
}

// "CODE: message" (or just "CODE").
std::string Describe(const grpc::Status& st) {
  std::string s = GrpcCodeName(st.error_code());
  if (!st.error_message().empty()) s += ": " + st.error_message();
  return s;
}

// A channel with its own connection (gRPC C++ otherwise shares subchannels between channels
// to the same address, so a stale connection to a previous socket inode could be reused).
std::shared_ptr<grpc::Channel> Dial(const std::string& socket_path, int max_receive_bytes) {
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  args.SetMaxReceiveMessageSize(max_receive_bytes);
  // "unix:///abs/path"; a relative path needs the "unix:rel/path" form.
  std::string target =
      (!socket_path.empty() && socket_path[0] == '/' ? "unix://" : "unix:") + socket_path;
  return grpc::CreateCustomChannel(target, grpc::InsecureChannelCredentials(), args);
}

// `base` scaled by a random factor in [0.5, 1].
milliseconds Jittered(milliseconds base) {
  thread_local std::minstd_rand rng{std::random_device{}()};
  std::uniform_real_distribution<double> factor(0.5, 1.0);
  return milliseconds(static_cast<long long>(static_cast<double>(base.count()) * factor(rng)));
}

// RESOURCE_EXHAUSTED from the kubelet's rate limiter, worth retrying. gRPC also uses the
// code for a response over the receive limit ("Received message larger than max"), which a
// retry cannot fix.
bool IsRateLimited(const grpc::Status& st) {
  return st.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED &&
         !Contains(st.error_message(), "larger than max");
}

// One lookup's calls: per-call deadline and RESOURCE_EXHAUSTED retries.
class Caller {
 public:
  Caller(const PodResourcesOptions& opts, std::string socket)
      : opts_(opts), socket_(std::move(socket)) {}

  // Runs `call(ctx)` until it answers something other than RESOURCE_EXHAUSTED or the
  // attempts are used up. `attempts` receives the number of calls made.
  template <typename Fn>
  grpc::Status Call(Fn&& call, int* attempts) {
    const int max_attempts = std::max(1, opts_.resource_exhausted_attempts);
    milliseconds backoff = std::clamp(opts_.backoff_initial, milliseconds(0), kBackoffCap);
    for (int attempt = 1;; ++attempt) {
      grpc::ClientContext ctx;
      ctx.set_deadline(std::chrono::system_clock::now() + opts_.timeout);
      grpc::Status st = call(&ctx);
      *attempts = attempt;
      if (!IsRateLimited(st) || attempt >= max_attempts) return st;
      LogDebug("pod-resources call rate-limited, retrying",
               {{"attempt", attempt}, {"backoff_ms", backoff.count()}});
      std::this_thread::sleep_for(Jittered(backoff));
      backoff = std::min(backoff * 2, kBackoffCap);
    }
  }

  // The Unavailable error for a failed call of `method`.
  Status Error(const char* method, const grpc::Status& st, int attempts) const {
    std::string msg = "kubelet pod-resources " + socket_ + ": " + method + ": " + Describe(st);
    if (IsRateLimited(st)) {
      msg += " (rate-limited on all " + std::to_string(attempts) + " attempts)";
    } else if (st.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED) {
      msg += " (the receive limit is " + std::to_string(opts_.max_receive_bytes) + " bytes)";
    }
    return Status::Unavailable(msg);
  }

 private:
  const PodResourcesOptions& opts_;
  const std::string socket_;
};

// v1 List through `caller`, into `resp`.
grpc::Status ListV1(Caller& caller, v1::PodResourcesLister::Stub& stub,
                    v1::ListPodResourcesResponse* resp, int* attempts) {
  return caller.Call(
      [&](grpc::ClientContext* ctx) {
        resp->Clear();
        return stub.List(ctx, v1::ListPodResourcesRequest(), resp);
      },
      attempts);
}

Result<PodDevices> Answer(std::string source, DevicesByResource devices, const PodRef& pod) {
  LogDebug("pod-resources lookup answered",
           {{"source", source}, {"pod", pod.ns + "/" + pod.name}, {"resources", devices.size()}});
  return PodDevices{std::move(devices), std::move(source)};
}

Result<PodDevices> LookupGrpc(const PodResourcesOptions& opts, const std::string& socket,
                              const PodRef& pod) {
  if (pod.ns.empty() || pod.name.empty()) {
    return Status::InvalidArgument(
        "the pod namespace and name (K8S_POD_NAMESPACE and K8S_POD_NAME in CNI_ARGS) are "
        "required to query the kubelet pod-resources API");
  }
  auto channel = Dial(socket, opts.max_receive_bytes);
  Caller caller(opts, socket);
  int attempts = 0;

  // 1. v1 Get.
  auto v1_stub = v1::PodResourcesLister::NewStub(channel);
  {
    v1::GetPodResourcesRequest req;
    req.set_pod_name(pod.name);
    req.set_pod_namespace(pod.ns);
    v1::GetPodResourcesResponse resp;
    grpc::Status st = caller.Call(
        [&](grpc::ClientContext* ctx) {
          resp.Clear();
          return v1_stub->Get(ctx, req, &resp);
        },
        &attempts);
    const std::string& m = st.error_message();
    if (st.ok()) return Answer("v1 Get", DevicesFromGet(resp), pod);
    const bool unknown_or_not_found = st.error_code() == grpc::StatusCode::UNKNOWN ||
                                      st.error_code() == grpc::StatusCode::NOT_FOUND;
    // The kubelet answers UNKNOWN "pod <name> not found in namespace <ns>". Pod names cannot
    // hold spaces, so the phrase cannot come from the name.
    if (unknown_or_not_found && Contains(m, " not found")) {
      return Answer("v1 Get", {}, pod);
    }
    if (st.error_code() == grpc::StatusCode::UNIMPLEMENTED ||
        (unknown_or_not_found && Contains(m, "disabled"))) {
      LogDebug("pod-resources v1 Get not available, trying v1 List", {{"reason", Describe(st)}});
    } else {
      return caller.Error("v1 Get", st, attempts);
    }
  }

  // 2. v1 List.
  int matches = 0;
  {
    v1::ListPodResourcesResponse resp;
    grpc::Status st = ListV1(caller, *v1_stub, &resp, &attempts);
    if (st.ok()) {
      auto devices = DevicesFromList(resp, pod, &matches);
      if (matches > 1) {
        LogDebug("pod listed more than once by v1 List; devices merged",
                 {{"pod", pod.ns + "/" + pod.name}, {"entries", matches}});
      }
      return Answer("v1 List", std::move(devices), pod);
    }
    if (st.error_code() == grpc::StatusCode::UNIMPLEMENTED ||
        Contains(st.error_message(), "unknown service v1.PodResourcesLister")) {
      LogDebug("pod-resources v1 not served, trying v1alpha1 List", {{"reason", Describe(st)}});
    } else {
      return caller.Error("v1 List", st, attempts);
    }
  }

  // 3. v1alpha1 List.
  auto alpha_stub = v1alpha1::PodResourcesLister::NewStub(channel);
  v1alpha1::ListPodResourcesResponse resp;
  grpc::Status st = caller.Call(
      [&](grpc::ClientContext* ctx) {
        resp.Clear();
        return alpha_stub->List(ctx, v1alpha1::ListPodResourcesRequest(), &resp);
      },
      &attempts);
  if (!st.ok()) return caller.Error("v1alpha1 List", st, attempts);
  return Answer("v1alpha1 List", DevicesFromList(resp, pod, &matches), pod);
}

}  // namespace

std::string PodResourcesSocketPath(const std::string& kubelet_root) {
  return kubelet_root + "/pod-resources/kubelet.sock";
}

std::string KubeletCheckpointPath(const std::string& device_plugin_dir) {
  return device_plugin_dir + "/kubelet_internal_checkpoint";
}

Result<PodDevices> LookupPodDevices(const PodResourcesOptions& opts, const PodRef& pod) {
  const std::string socket = PodResourcesSocketPath(opts.kubelet_root);
  struct stat sb;
  if (::stat(socket.c_str(), &sb) == 0) return LookupGrpc(opts, socket, pod);

  // No socket (a kubelet before 1.13, or the directory is not mounted): the checkpoint.
  const int socket_errno = errno;
  const std::string checkpoint = KubeletCheckpointPath(opts.device_plugin_dir);
  LogDebug("pod-resources socket absent, reading the kubelet checkpoint",
           {{"socket", socket}, {"checkpoint", checkpoint}});
  if (::stat(checkpoint.c_str(), &sb) != 0 && (errno == ENOENT || errno == ENOTDIR)) {
    return Status::NotFound("neither the kubelet pod-resources socket " + socket + " (" +
                            std::strerror(socket_errno) + ") nor its checkpoint " + checkpoint +
                            " exists; are " + opts.kubelet_root + " and " + opts.device_plugin_dir +
                            " the kubelet's root and device-plugin directories?");
  }
  auto devices = ReadCheckpointDevices(checkpoint, pod.uid);
  if (!devices.ok()) {
    return devices.status().WithContext("no pod-resources socket at " + socket);
  }
  return Answer("checkpoint", std::move(devices).value(), pod);
}

Result<std::vector<dra::KubeletClaim>> ListKubeletDraClaims(const PodResourcesOptions& opts,
                                                            const std::string& driver) {
  const std::string socket = PodResourcesSocketPath(opts.kubelet_root);
  struct stat st {};
  if (::stat(socket.c_str(), &st) != 0) {
    return Status::Unavailable("kubelet pod-resources " + socket + ": " + std::strerror(errno));
  }
  auto stub = v1::PodResourcesLister::NewStub(Dial(socket, opts.max_receive_bytes));
  Caller caller(opts, socket);
  int attempts = 0;
  v1::ListPodResourcesResponse resp;
  grpc::Status called = ListV1(caller, *stub, &resp, &attempts);
  if (!called.ok()) return caller.Error("v1 List", called, attempts);
  std::vector<dra::KubeletClaim> out;
  std::map<std::pair<std::string, std::string>, size_t> at;  // (ns, name) -> index in out
  for (const auto& pod : resp.pod_resources()) {
    for (const auto& container : pod.containers()) {
      for (const auto& claim : container.dynamic_resources()) {
        for (const auto& r : claim.claim_resources()) {
          if (!driver.empty() && r.driver_name() != driver) continue;
          auto [it, added] =
              at.emplace(std::make_pair(claim.claim_namespace(), claim.claim_name()), out.size());
          if (added) out.push_back({claim.claim_namespace(), claim.claim_name(), {}});
          auto& devices = out[it->second].devices;
          const bool seen = std::any_of(devices.begin(), devices.end(), [&](const auto& d) {
            return d.driver == r.driver_name() && d.pool == r.pool_name() &&
                   d.device == r.device_name();
          });
          if (seen) continue;
          dra::KubeletClaimDevice d{r.driver_name(), r.pool_name(), r.device_name(), {}};
          for (const auto& cdi : r.cdi_devices()) d.cdi_device_ids.push_back(cdi.name());
          devices.push_back(std::move(d));
        }
      }
    }
  }
  return out;
}

}  // namespace hcashare::kubelet
