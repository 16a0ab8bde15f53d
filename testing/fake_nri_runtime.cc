#include "testing/fake_nri_runtime.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <cstring>

#include "nri/api/nri.pb.h"
#include "nri/session.h"

namespace hcashare::fake {
namespace {

using Clock = std::chrono::steady_clock;
namespace api = nri::api;

api::PodSandbox ToWire(const NriPod& pod) {
  api::PodSandbox p;
  p.set_id(pod.id);
  p.set_name(pod.name);
  p.set_uid(pod.uid);
  p.set_namespace_(pod.namespace_name);
  // A runtime lists every namespace of the sandbox; the network one only without
  // hostNetwork.
  api::LinuxNamespace* ipc = p.mutable_linux()->add_namespaces();
  ipc->set_type("ipc");
  if (!pod.netns.empty()) {
    api::LinuxNamespace* net = p.mutable_linux()->add_namespaces();
    net->set_type("network");
    net->set_path(pod.netns);
  }
  return p;
}

bool IsTwoDigits(const std::string& s) {
  return s.size() == 2 && s[0] >= '0' && s[0] <= '9' && s[1] >= '0' && s[1] <= '9';
}

}  // namespace

FakeNriRuntime::FakeNriRuntime(std::string socket_path, FakeNriRuntimeOptions options)
    : socket_path_(std::move(socket_path)), options_(std::move(options)) {}

Status FakeNriRuntime::Listen() {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (socket_path_.size() >= sizeof(addr.sun_path)) {
    return Status::InvalidArgument("path too long");
  }
  std::memcpy(addr.sun_path, socket_path_.c_str(), socket_path_.size() + 1);
  ::unlink(socket_path_.c_str());
  listener_.Reset(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (::bind(listener_.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) != 0 ||
      ::listen(listener_.get(), 4) != 0) {
    return Status::Internal(std::string("listen: ") + std::strerror(errno));
  }
  return Status::Ok();
}

Result<UniqueFd> FakeNriRuntime::PluginSocketPair() {
  int fds[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM, 0, fds) != 0) {
    return Status::Internal(std::string("socketpair: ") + std::strerror(errno));
  }
  Drop();
  conn_.Reset(fds[0]);
  ::fcntl(fds[0], F_SETFD, FD_CLOEXEC);
  return UniqueFd(fds[1]);
}

void FakeNriRuntime::Drop() {
  conn_.Reset();
  reader_ = nri::TrunkReader();
  registered_ = false;
  next_stream_ = 1;
  events_ = 0;
}

void FakeNriRuntime::Disconnect() { Drop(); }

Status FakeNriRuntime::Send(const nri::Message& m) {
  ASSIGN_OR_RETURN(const std::string bytes, nri::EncodeMessage(m));
  size_t at = 0;
  while (at < bytes.size()) {
    const ssize_t n = ::send(conn_.get(), bytes.data() + at, bytes.size() - at, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      return Status::Unavailable(std::string("send: ") + std::strerror(errno));
    }
    at += static_cast<size_t>(n);
  }
  return Status::Ok();
}

Result<FakeNriRuntime::Answer> FakeNriRuntime::Pump(uint32_t want_stream,
                                                    Clock::time_point deadline) {
  std::string buf(64 << 10, '\0');
  for (;;) {
    while (std::optional<nri::Message> m = reader_.Next()) {
      if (m->conn == nri::kRuntimeServiceConn &&
          m->type == static_cast<uint8_t>(nri::MessageType::kRequest)) {
        api::TtrpcRequest req;
        api::TtrpcResponse resp;
        if (!req.ParseFromString(m->payload) || req.service() != nri::kRuntimeService ||
            req.method() != "RegisterPlugin") {
          resp.mutable_status()->set_code(12);
          resp.mutable_status()->set_message("not served by the fake runtime");
        } else {
          api::RegisterPluginRequest reg;
          reg.ParseFromString(req.payload());
          if (reg.plugin_name().empty() || !IsTwoDigits(reg.plugin_idx())) {
            resp.mutable_status()->set_code(2);
            resp.mutable_status()->set_message("invalid plugin name or index");
          } else {
            plugin_name_ = reg.plugin_name();
            plugin_idx_ = reg.plugin_idx();
            registered_ = true;
            resp.mutable_status()->set_code(0);
          }
        }
        nri::Message out{nri::kRuntimeServiceConn, m->stream_id,
                         static_cast<uint8_t>(nri::MessageType::kResponse), 0,
                         resp.SerializeAsString()};
        RETURN_IF_ERROR(Send(out));
        // A refused registration ends the plugin's start at once, as in the adaptation.
        if (want_stream == 0 && resp.status().code() != 0) {
          return Status::FailedPrecondition("registration refused: " + resp.status().message());
        }
        if (want_stream == 0 && registered_) return Answer{};
      } else if (m->conn == nri::kPluginServiceConn && m->stream_id == want_stream &&
                 m->type == static_cast<uint8_t>(nri::MessageType::kResponse)) {
        api::TtrpcResponse resp;
        if (!resp.ParseFromString(m->payload)) {
          return Status::InvalidArgument("unreadable ttrpc response");
        }
        return Answer{resp.status().code(), resp.status().message(), resp.payload()};
      }
    }
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) return Status::Unavailable("the plugin did not answer in time");
    pollfd p{conn_.get(), POLLIN, 0};
    const int n = ::poll(&p, 1, static_cast<int>(left.count()));
    if (n <= 0) continue;
    const ssize_t got = ::recv(conn_.get(), buf.data(), buf.size(), 0);
    if (got <= 0) return Status::Unavailable("the plugin closed the connection");
    RETURN_IF_ERROR(reader_.Feed(std::string_view(buf.data(), static_cast<size_t>(got))));
  }
}

Result<FakeNriRuntime::Answer> FakeNriRuntime::Call(const std::string& method,
                                                    const std::string& payload) {
  if (!conn_.valid()) return Status::Unavailable("no plugin");
  api::TtrpcRequest req;
  req.set_service(nri::kPluginService);
  req.set_method(method);
  req.set_payload(payload);
  req.set_timeout_nano(
      std::chrono::duration_cast<std::chrono::nanoseconds>(options_.request_timeout).count());
  const uint32_t stream = next_stream_;
  next_stream_ += 2;
  nri::Message m{nri::kPluginServiceConn, stream, static_cast<uint8_t>(nri::MessageType::kRequest),
                 0, req.SerializeAsString()};
  Status sent = Send(m);
  Result<Answer> answer =
      sent.ok() ? Pump(stream, Clock::now() + options_.request_timeout) : Result<Answer>(sent);
  if (!answer.ok()) Drop();  // fatal for the plugin: the adaptation closes it
  return answer;
}

Status FakeNriRuntime::AcceptPlugin(const std::vector<NriPod>& pods,
                                    std::chrono::milliseconds timeout) {
  if (!conn_.valid()) {
    pollfd p{listener_.get(), POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(timeout.count())) <= 0) {
      return Status::Unavailable("no plugin connected in time");
    }
    conn_.Reset(::accept4(listener_.get(), nullptr, nullptr, SOCK_CLOEXEC));
    if (!conn_.valid()) return Status::Internal(std::string("accept: ") + std::strerror(errno));
  }
  Result<Answer> reg = Pump(0, Clock::now() + options_.registration_timeout);
  if (!reg.ok()) {
    Drop();
    return reg.status();
  }
  api::ConfigureRequest conf;
  conf.set_config(options_.config);
  conf.set_runtime_name(options_.runtime_name);
  conf.set_runtime_version(options_.runtime_version);
  conf.set_registration_timeout(options_.registration_timeout.count());
  conf.set_request_timeout(options_.request_timeout.count());
  calls_.push_back("Configure");
  ASSIGN_OR_RETURN(Answer configured, Call("Configure", conf.SerializeAsString()));
  if (configured.code != 0) {
    configure_error_ = configured.message;
    Drop();
    return Status::FailedPrecondition("plugin refused its configuration: " + configured.message);
  }
  api::ConfigureResponse events;
  events.ParseFromString(configured.payload);
  events_ = events.events();
  const size_t chunk = options_.sync_chunk == 0 ? pods.size() + 1 : options_.sync_chunk;
  size_t at = 0;
  do {
    api::SynchronizeRequest sync;
    for (size_t i = at; i < pods.size() && i < at + chunk; ++i) *sync.add_pods() = ToWire(pods[i]);
    at += chunk;
    sync.set_more(at < pods.size());
    calls_.push_back("Synchronize");
    ASSIGN_OR_RETURN(Answer synced, Call("Synchronize", sync.SerializeAsString()));
    if (synced.code != 0) {
      Drop();
      return Status::FailedPrecondition("plugin failed to synchronize: " + synced.message);
    }
  } while (at < pods.size());
  return Status::Ok();
}

Status FakeNriRuntime::PodEvent(int event, const std::string& method, const NriPod& pod) {
  if (!conn_.valid() || (events_ & (1 << (event - 1))) == 0) return Status::Ok();
  api::PodSandboxRequest req;
  *req.mutable_pod() = ToWire(pod);
  Result<Answer> answer = Status::Unimplemented("");
  if (!options_.state_change_only) {
    calls_.push_back(method);
    answer = Call(method, req.SerializeAsString());
    if (!answer.ok()) return Status::Ok();  // plugin dropped
  }
  if (!answer.ok() || answer->code == 12) {
    api::StateChangeEvent change;
    change.set_event(event);
    *change.mutable_pod() = ToWire(pod);
    calls_.push_back("StateChange/" + std::to_string(event));
    answer = Call("StateChange", change.SerializeAsString());
    if (!answer.ok()) return Status::Ok();
  }
  if (answer->code != 0) {
    return Status::Unavailable("plugin " + plugin_idx_ + "-" + plugin_name_ + " failed to handle " +
                               method + ": " + answer->message);
  }
  return Status::Ok();
}

Status FakeNriRuntime::RunPodSandbox(const NriPod& pod) {
  return PodEvent(1, "RunPodSandbox", pod);
}
Status FakeNriRuntime::StopPodSandbox(const NriPod& pod) {
  return PodEvent(2, "StopPodSandbox", pod);
}
Status FakeNriRuntime::RemovePodSandbox(const NriPod& pod) {
  return PodEvent(3, "RemovePodSandbox", pod);
}

}  // namespace hcashare::fake
