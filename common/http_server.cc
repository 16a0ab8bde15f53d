#include "common/http_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <exception>
#include <string_view>
#include <system_error>
#include <utility>

#include "common/log.h"

namespace hcashare {
namespace {

using Clock = std::chrono::steady_clock;

// Limits that keep one client from holding the single serving thread for long.
constexpr size_t kMaxRequestHead = 8 * 1024;  // request line + headers
constexpr auto kIoTimeout = std::chrono::seconds(2);
constexpr int kBacklog = 64;

// A parsed listen address.
struct ListenAddress {
  enum Kind { kAny, kV4, kV6 } kind = kAny;
  in_addr v4{};
  in6_addr v6{};
  uint16_t port = 0;
};

Result<ListenAddress> ParseAddress(const std::string& address) {
  auto bad = [&](const std::string& why) {
    return Status::InvalidArgument("listen address \"" + address + "\": " + why);
  };
  size_t colon = address.rfind(':');
  if (colon == std::string::npos) return bad("expected host:port or :port");
  std::string host = address.substr(0, colon);
  std::string port = address.substr(colon + 1);
  if (port.empty() || port.size() > 5 ||
      port.find_first_not_of("0123456789") != std::string::npos) {
    return bad("bad port");
  }
  unsigned long port_num = std::stoul(port);  // cannot throw: 1-5 digits
  if (port_num > 65535) return bad("port out of range");

  ListenAddress out;
  out.port = static_cast<uint16_t>(port_num);
  if (host.empty()) {
    out.kind = ListenAddress::kAny;
  } else if (host.front() == '[') {
    if (host.size() < 2 || host.back() != ']') return bad("unterminated [IPv6] host");
    std::string inner = host.substr(1, host.size() - 2);
    if (::inet_pton(AF_INET6, inner.c_str(), &out.v6) != 1) return bad("bad IPv6 address");
    out.kind = ListenAddress::kV6;
  } else if (host == "localhost") {
    out.v4.s_addr = htonl(INADDR_LOOPBACK);
    out.kind = ListenAddress::kV4;
  } else if (::inet_pton(AF_INET, host.c_str(), &out.v4) == 1) {
    out.kind = ListenAddress::kV4;
  } else {
    return bad("host must be a numeric IPv4 address, [IPv6 address] or localhost");
  }
  return out;
}

// Creates a listening socket bound to `sa`. Returns 0, or the errno of the failing call (named
// in *what).
int BindListen(const sockaddr* sa, socklen_t len, bool dual_stack, UniqueFd* out,
               const char** what) {
  UniqueFd fd(::socket(sa->sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  int one = 1;
  int zero = 0;
  if (!fd.valid()) {
    *what = "socket";
  } else if (::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0) {
    *what = "setsockopt SO_REUSEADDR";
  } else if (dual_stack &&
             ::setsockopt(fd.get(), IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero)) != 0) {
    *what = "setsockopt IPV6_V6ONLY";
  } else if (::bind(fd.get(), sa, len) != 0) {
    *what = "bind";
  } else if (::listen(fd.get(), kBacklog) != 0) {
    *what = "listen";
  } else {
    *out = std::move(fd);
    return 0;
  }
  return errno;
}

Result<UniqueFd> Listen(const ListenAddress& a, const std::string& address) {
  UniqueFd fd;
  const char* what = "";
  int err = 0;
  sockaddr_in sin{};
  sin.sin_family = AF_INET;
  sin.sin_port = htons(a.port);
  sockaddr_in6 sin6{};
  sin6.sin6_family = AF_INET6;
  sin6.sin6_port = htons(a.port);
  const auto* sa4 = reinterpret_cast<const sockaddr*>(&sin);
  const auto* sa6 = reinterpret_cast<const sockaddr*>(&sin6);
  switch (a.kind) {
    case ListenAddress::kV4:
      sin.sin_addr = a.v4;
      err = BindListen(sa4, sizeof(sin), false, &fd, &what);
      break;
    case ListenAddress::kV6:
      sin6.sin6_addr = a.v6;
      err = BindListen(sa6, sizeof(sin6), false, &fd, &what);
      break;
    case ListenAddress::kAny:
      sin6.sin6_addr = in6addr_any;
      err = BindListen(sa6, sizeof(sin6), true, &fd, &what);
      // No IPv6 (not built, disabled by sysctl or boot option): serve IPv4 only.
      if (err == EAFNOSUPPORT || err == EPROTONOSUPPORT || err == EADDRNOTAVAIL ||
          err == ENOPROTOOPT || err == EINVAL) {
        sin.sin_addr.s_addr = htonl(INADDR_ANY);
        err = BindListen(sa4, sizeof(sin), false, &fd, &what);
      }
      break;
  }
  if (err != 0) return ErrnoStatus(err, std::string(what) + " " + address);
  return fd;
}

Result<int> LocalPort(int fd) {
  sockaddr_storage ss{};
  socklen_t len = sizeof(ss);
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len) != 0) {
    return ErrnoStatus(errno, "getsockname");
  }
  if (ss.ss_family == AF_INET6) return ntohs(reinterpret_cast<sockaddr_in6*>(&ss)->sin6_port);
  return ntohs(reinterpret_cast<sockaddr_in*>(&ss)->sin_port);
}

enum class Wait { kReady, kTimeout, kStop };

// Waits until `fd` has `events`, `deadline` passes, or `wake_fd` is signalled.
Wait WaitFor(int fd, short events, int wake_fd, Clock::time_point deadline) {
  for (;;) {
    long long left = -1;  // forever
    if (deadline != Clock::time_point::max()) {
      left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now()).count();
      if (left <= 0) return Wait::kTimeout;
    }
    pollfd fds[2] = {{wake_fd, POLLIN, 0}, {fd, events, 0}};
    int n = fd >= 0 ? 2 : 1;
    int rc = ::poll(fds, n, static_cast<int>(left));
    if (rc < 0 && errno != EINTR) return Wait::kStop;  // cannot wait at all: give up
    if (rc <= 0) continue;
    if (fds[0].revents != 0) return Wait::kStop;
    if (n == 2 && fds[1].revents != 0) return Wait::kReady;
  }
}

const char* Reason(int status) {
  switch (status) {
    case 200:
      return "OK";
    case 204:
      return "No Content";
    case 400:
      return "Bad Request";
    case 403:
      return "Forbidden";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 408:
      return "Request Timeout";
    case 431:
      return "Request Header Fields Too Large";
    case 500:
      return "Internal Server Error";
    case 503:
      return "Service Unavailable";
    case 505:
      return "HTTP Version Not Supported";
    default:
      return "Status";
  }
}

// Writes `data` to the non-blocking socket `fd` within the I/O timeout. Returns false if the
// server is stopping; a write error or timeout just ends the connection (true).
bool SendAll(int fd, int wake_fd, std::string_view data) {
  const auto deadline = Clock::now() + kIoTimeout;
  while (!data.empty()) {
    ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n > 0) {
      data.remove_prefix(static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) return true;
    Wait w = WaitFor(fd, POLLOUT, wake_fd, deadline);
    if (w == Wait::kStop) return false;
    if (w == Wait::kTimeout) return true;
  }
  return true;
}

// Sends `resp` (without its body for HEAD) and closes our side of the connection.
bool Respond(int fd, int wake_fd, const HttpResponse& resp, bool head) {
  int status = resp.status >= 100 && resp.status <= 999 ? resp.status : 500;
  std::string out = "HTTP/1.1 " + std::to_string(status) + " " + Reason(status) + "\r\n";
  // A handler-supplied header value must not be able to inject further headers.
  std::string type = resp.content_type;
  for (char& c : type) {
    if (c == '\r' || c == '\n') c = ' ';
  }
  out += "Content-Type: " + type + "\r\n";
  out += "Content-Length: " + std::to_string(resp.body.size()) + "\r\n";
  if (status == 405) out += "Allow: GET, HEAD\r\n";
  out += "Connection: close\r\n\r\n";
  if (!head) out += resp.body;
  bool go_on = SendAll(fd, wake_fd, out);
  // Half-close, then discard whatever the client sent that we did not read, so that closing
  // does not reset the connection before the client has read the response.
  ::shutdown(fd, SHUT_WR);
  char buf[4096];
  for (int i = 0; i < 16 && ::recv(fd, buf, sizeof(buf), MSG_DONTWAIT) > 0; ++i) {
  }
  return go_on;
}

HttpResponse Plain(int status, std::string body) {
  HttpResponse r;
  r.status = status;
  r.body = std::move(body);
  return r;
}

}  // namespace

HttpServer::HttpServer(Key, UniqueFd listen_fd, UniqueFd wake_fd, int port, Handler handler)
    : listen_fd_(std::move(listen_fd)),
      wake_fd_(std::move(wake_fd)),
      port_(port),
      handler_(std::move(handler)) {}

Result<std::unique_ptr<HttpServer>> HttpServer::Start(const std::string& address, Handler handler) {
  if (!handler) return Status::InvalidArgument("HttpServer needs a handler");
  ASSIGN_OR_RETURN(ListenAddress parsed, ParseAddress(address));
  ASSIGN_OR_RETURN(UniqueFd listen_fd, Listen(parsed, address));
  ASSIGN_OR_RETURN(int port, LocalPort(listen_fd.get()));
  UniqueFd wake_fd(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC));
  if (!wake_fd.valid()) return ErrnoStatus(errno, "eventfd");
  auto server = std::make_unique<HttpServer>(Key{}, std::move(listen_fd), std::move(wake_fd), port,
                                             std::move(handler));
  try {
    server->thread_ = std::thread([s = server.get()] { s->Run(); });
  } catch (const std::system_error& e) {
    return Status::Internal(std::string("cannot start the HTTP server thread: ") + e.what());
  }
  return server;
}

HttpServer::~HttpServer() {
  uint64_t one = 1;
  ssize_t n = ::write(wake_fd_.get(), &one, sizeof(one));
  (void)n;
  if (thread_.joinable()) thread_.join();
}

void HttpServer::Run() {
  for (;;) {
    Wait w = WaitFor(listen_fd_.get(), POLLIN, wake_fd_.get(), Clock::time_point::max());
    if (w != Wait::kReady) return;
    UniqueFd conn(::accept4(listen_fd_.get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC));
    if (!conn.valid()) {
      int err = errno;
      if (err == EAGAIN || err == EWOULDBLOCK || err == EINTR || err == ECONNABORTED) continue;
      // Typically EMFILE: back off instead of spinning on a still-readable listening socket.
      LogWarn("http server: accept failed", {{"error", std::strerror(err)}});
      if (WaitFor(-1, 0, wake_fd_.get(), Clock::now() + std::chrono::milliseconds(100)) ==
          Wait::kStop) {
        return;
      }
      continue;
    }
    if (!Serve(conn.get())) return;
  }
}

bool HttpServer::Serve(int fd) {
  const int wake = wake_fd_.get();
  const auto deadline = Clock::now() + kIoTimeout;
  std::string req;
  size_t head_end = std::string::npos;
  char buf[2048];
  while (head_end == std::string::npos) {
    Wait w = WaitFor(fd, POLLIN, wake, deadline);
    if (w == Wait::kStop) return false;
    if (w == Wait::kTimeout) {
      return req.empty() || Respond(fd, wake, Plain(408, "request timeout\n"), false);
    }
    ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
    if (n < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)) continue;
    if (n <= 0) return true;  // closed or failed before a whole request arrived
    size_t from = req.size() >= 3 ? req.size() - 3 : 0;
    req.append(buf, static_cast<size_t>(n));
    // The head ends with an empty line; accept bare LF line ends too.
    size_t crlf = req.find("\r\n\r\n", from);
    size_t lf = req.find("\n\n", from);
    head_end = std::min(crlf == std::string::npos ? crlf : crlf + 2,
                        lf == std::string::npos ? lf : lf + 1);
    if ((head_end == std::string::npos ? req.size() : head_end) > kMaxRequestHead) {
      return Respond(fd, wake, Plain(431, "request header fields too large\n"), false);
    }
  }

  // Request line: METHOD SP request-target SP HTTP-version.
  std::string_view line(req.data(), req.find('\n'));
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  size_t sp1 = line.find(' ');
  size_t sp2 = sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
  if (sp2 == std::string_view::npos || line.find(' ', sp2 + 1) != std::string_view::npos) {
    return Respond(fd, wake, Plain(400, "bad request\n"), false);
  }
  std::string_view method = line.substr(0, sp1);
  std::string_view target = line.substr(sp1 + 1, sp2 - sp1 - 1);
  std::string_view version = line.substr(sp2 + 1);
  if (version.substr(0, 7) != "HTTP/1.") {
    return Respond(fd, wake, Plain(505, "HTTP version not supported\n"), false);
  }
  bool head = method == "HEAD";
  if (method != "GET" && !head) {
    return Respond(fd, wake, Plain(405, "method not allowed\n"), false);
  }
  if (target.empty() || target.front() != '/') {
    return Respond(fd, wake, Plain(400, "bad request target\n"), head);
  }
  std::string path(target.substr(0, target.find_first_of("?#")));

  HttpResponse resp;
  try {
    resp = handler_(path);
  } catch (const std::exception& e) {
    LogError("http handler failed", {{"path", path}, {"error", e.what()}});
    resp = Plain(500, "internal error\n");
  } catch (...) {
    LogError("http handler failed", {{"path", path}});
    resp = Plain(500, "internal error\n");
  }
  return Respond(fd, wake, resp, head);
}

}  // namespace hcashare
