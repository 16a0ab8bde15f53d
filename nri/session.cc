#include "nri/session.h"

#include <errno.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>

#include "common/log.h"
#include "nri/api/nri.pb.h"
#include "nri/wire.h"

namespace hcashare::nri {
namespace {

using Clock = std::chrono::steady_clock;

// The stream ID of the plugin's only own call; ttrpc clients number their streams 1, 3, ...
constexpr uint32_t kRegisterStream = 1;

Status WriteAll(int fd, const std::string& bytes) {
  size_t at = 0;
  while (at < bytes.size()) {
    // A runtime gone mid-write is a failed write (EPIPE), never a SIGPIPE.
    const ssize_t n = ::send(fd, bytes.data() + at, bytes.size() - at, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      return Status::Unavailable(std::string("cannot write to the NRI connection: ") +
                                 std::strerror(errno));
    }
    at += static_cast<size_t>(n);
  }
  return Status::Ok();
}

Status Send(int fd, uint32_t conn, uint32_t stream, MessageType type, std::string payload) {
  Message m;
  m.conn = conn;
  m.stream_id = stream;
  m.type = static_cast<uint8_t>(type);
  m.payload = std::move(payload);
  ASSIGN_OR_RETURN(const std::string bytes, EncodeMessage(m));
  return WriteAll(fd, bytes);
}

// Answers the runtime's request `m` (connection 1).
Status Serve(int fd, const Message& m, PluginService& service) {
  if (m.stream_id % 2 != 1) {
    return Status::InvalidArgument("the runtime sent a request on stream " +
                                   std::to_string(m.stream_id) +
                                   " (ttrpc clients use odd stream IDs)");
  }
  api::TtrpcRequest request;
  Reply reply;
  if (!request.ParseFromString(m.payload)) {
    reply = {RpcCode::kInvalidArgument, "unreadable ttrpc request", ""};
  } else if (request.service() != kPluginService) {
    reply = {RpcCode::kUnimplemented, "service " + request.service() + " is not served", ""};
  } else {
    reply = service.Call(request.method(), request.payload());
  }
  api::TtrpcResponse response;
  response.mutable_status()->set_code(static_cast<int>(reply.code));
  if (reply.code != RpcCode::kOk) {
    response.mutable_status()->set_message(reply.message);
  } else {
    response.set_payload(std::move(reply.payload));
  }
  return Send(fd, kPluginServiceConn, m.stream_id, MessageType::kResponse,
              response.SerializeAsString());
}

}  // namespace

Status RunSession(int trunk, const SessionOptions& options, PluginService& service) {
  api::RegisterPluginRequest reg;
  reg.set_plugin_name(options.plugin_name);
  reg.set_plugin_idx(options.plugin_idx);
  reg.set_nri_version(options.nri_version);
  api::TtrpcRequest call;
  call.set_service(kRuntimeService);
  call.set_method("RegisterPlugin");
  call.set_payload(reg.SerializeAsString());
  call.set_timeout_nano(
      std::chrono::duration_cast<std::chrono::nanoseconds>(options.registration_timeout).count());
  RETURN_IF_ERROR(Send(trunk, kRuntimeServiceConn, kRegisterStream, MessageType::kRequest,
                       call.SerializeAsString()));
  const Clock::time_point register_by = Clock::now() + options.registration_timeout;
  bool registered = false;
  bool background = false;  // the service may have work left (it says when it has not)
  TrunkReader reader;
  std::string buf(64 << 10, '\0');
  for (;;) {
    pollfd fds[2] = {{trunk, POLLIN, 0}, {options.stop_fd, POLLIN, 0}};
    int wait_ms = -1;
    if (!registered) {
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(register_by - Clock::now());
      if (left.count() <= 0) {
        return Status::FailedPrecondition("the runtime did not answer the NRI registration in " +
                                          std::to_string(options.registration_timeout.count()) +
                                          " ms");
      }
      wait_ms = static_cast<int>(left.count());
    } else if (background) {
      wait_ms = 0;  // only a look: a waiting call is served before the work left
    }
    const int n = ::poll(fds, options.stop_fd >= 0 ? 2 : 1, wait_ms);
    if (n < 0) {
      if (errno == EINTR) continue;
      return Status::Internal(std::string("poll: ") + std::strerror(errno));
    }
    if (n == 0) {
      if (registered && background) background = service.Background();
      continue;
    }
    if (options.stop_fd >= 0 && (fds[1].revents & POLLIN) != 0) return Status::Ok();
    if (fds[0].revents == 0) continue;
    const ssize_t got = ::read(trunk, buf.data(), buf.size());
    if (got < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      return Status::Unavailable(std::string("cannot read the NRI connection: ") +
                                 std::strerror(errno));
    }
    if (got == 0) return Status::Unavailable("the runtime closed the NRI connection");
    RETURN_IF_ERROR(reader.Feed(std::string_view(buf.data(), static_cast<size_t>(got))));
    while (std::optional<Message> m = reader.Next()) {
      const auto type = static_cast<MessageType>(m->type);
      if (m->conn == kPluginServiceConn && type == MessageType::kRequest) {
        RETURN_IF_ERROR(Serve(trunk, *m, service));
        background = true;
      } else if (m->conn == kRuntimeServiceConn && type == MessageType::kResponse &&
                 m->stream_id == kRegisterStream && !registered) {
        api::TtrpcResponse response;
        if (!response.ParseFromString(m->payload)) {
          return Status::InvalidArgument("unreadable answer to the NRI registration");
        }
        if (response.status().code() != 0) {
          return Status::FailedPrecondition("the runtime refused the NRI registration: " +
                                            response.status().message());
        }
        registered = true;
        LogInfo("registered with the runtime's NRI",
                {{"plugin", options.plugin_idx + "-" + options.plugin_name}});
      } else {
        LogDebug("NRI message ignored", {{"connection", m->conn},
                                         {"stream", m->stream_id},
                                         {"type", static_cast<int>(m->type)}});
      }
    }
  }
}

}  // namespace hcashare::nri
