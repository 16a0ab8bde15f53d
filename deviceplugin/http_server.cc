#include "deviceplugin/http_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <exception>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "common/log.h"

namespace hcashare {
namespace {

using Clock = std::chrono::steady_clock;

// Limits that keep clients from holding the server: a request head must arrive, and its
// response leave, within kIoTimeout each.
constexpr size_t kMaxRequestHead = 8 * 1024;  // request line + headers
constexpr auto kIoTimeout = std::chrono::seconds(2);
constexpr int kBacklog = 128;

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

// The bytes of `resp` on the wire (without its body for HEAD); the connection then closes.
std::string Serialize(const HttpResponse& resp, bool head) {
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
  return out;
}

HttpResponse Plain(int status, std::string body) {
  HttpResponse r;
  r.status = status;
  r.body = std::move(body);
  return r;
}

// Where the request head in `req` ends (after its empty line; bare LF line ends accepted),
// looking from `from`; npos while incomplete.
size_t HeadEnd(const std::string& req, size_t from) {
  size_t crlf = req.find("\r\n\r\n", from);
  size_t lf = req.find("\n\n", from);
  return std::min(crlf == std::string::npos ? crlf : crlf + 2,
                  lf == std::string::npos ? lf : lf + 1);
}

}  // namespace

// One client connection of the event loop.
struct HttpServer::Connection {
  UniqueFd fd;
  std::string in;              // the request so far
  std::string out;             // the response, once there is one
  size_t sent = 0;             // bytes of `out` written
  Clock::time_point deadline;  // the head must arrive, then the response leave, by then
  bool Writing() const { return !out.empty(); }
};

// The answer to the complete request head `head` (its request line is parsed; headers are
// ignored).
std::string HttpServer::Answer(const std::string& req) {
  // Request line: METHOD SP request-target SP HTTP-version.
  std::string_view line(req.data(), req.find('\n'));
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  size_t sp1 = line.find(' ');
  size_t sp2 = sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
  if (sp2 == std::string_view::npos || line.find(' ', sp2 + 1) != std::string_view::npos) {
    return Serialize(Plain(400, "bad request\n"), false);
  }
  std::string_view method = line.substr(0, sp1);
  std::string_view target = line.substr(sp1 + 1, sp2 - sp1 - 1);
  std::string_view version = line.substr(sp2 + 1);
  if (version.substr(0, 7) != "HTTP/1.") {
    return Serialize(Plain(505, "HTTP version not supported\n"), false);
  }
  bool head = method == "HEAD";
  if (method != "GET" && !head) return Serialize(Plain(405, "method not allowed\n"), false);
  if (target.empty() || target.front() != '/') {
    return Serialize(Plain(400, "bad request target\n"), head);
  }
  std::string path(target.substr(0, target.find_first_of("?#")));
  try {
    return Serialize(handler_(path), head);
  } catch (const std::exception& e) {
    LogError("http handler failed", {{"path", path}, {"error", e.what()}});
  } catch (...) {
    LogError("http handler failed", {{"path", path}, {"error", "unknown exception"}});
  }
  return Serialize(Plain(500, "internal error\n"), head);
}

HttpServer::HttpServer(Key, UniqueFd listen_fd, UniqueFd wake_fd, int port, Handler handler)
    : listen_fd_(std::move(listen_fd)),
      wake_fd_(std::move(wake_fd)),
      port_(port),
      handler_(std::move(handler)) {}

Status HttpServer::CheckAddress(const std::string& address) {
  return ParseAddress(address).status();
}

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
  std::vector<std::unique_ptr<Connection>> conns;
  std::vector<pollfd> fds;
  for (;;) {
    // Wake for the earliest deadline; none while idle.
    int timeout = -1;
    const auto now = Clock::now();
    for (const auto& c : conns) {
      const auto left = std::chrono::ceil<std::chrono::milliseconds>(c->deadline - now).count();
      const int ms = static_cast<int>(std::max<long long>(left, 0));
      timeout = timeout < 0 ? ms : std::min(timeout, ms);
    }
    fds.assign({{wake_fd_.get(), POLLIN, 0}, {listen_fd_.get(), POLLIN, 0}});
    for (const auto& c : conns) {
      fds.push_back({c->fd.get(), static_cast<short>(c->Writing() ? POLLOUT : POLLIN), 0});
    }
    if (::poll(fds.data(), fds.size(), timeout) < 0 && errno != EINTR) {
      LogError("http server: poll failed", {{"error", std::strerror(errno)}});
      return;
    }
    if (fds[0].revents != 0) return;
    // Serve the connections polled (those accepted below wait for the next round).
    for (size_t i = 0; i < conns.size(); ++i) {
      if (!Step(conns[i].get(), fds[i + 2].revents)) conns[i].reset();
    }
    conns.erase(std::remove(conns.begin(), conns.end(), nullptr), conns.end());
    if (fds[1].revents != 0 && !Accept(&conns)) return;
  }
}

bool HttpServer::Accept(std::vector<std::unique_ptr<Connection>>* conns) {
  for (size_t i = 0; i < kMaxConnections; ++i) {
    UniqueFd fd(::accept4(listen_fd_.get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC));
    if (!fd.valid()) {
      int err = errno;
      if (err == EAGAIN || err == EWOULDBLOCK || err == EINTR || err == ECONNABORTED) return true;
      // Typically EMFILE: back off instead of spinning on a still-readable listening socket.
      LogWarn("http server: accept failed", {{"error", std::strerror(err)}});
      pollfd wake{wake_fd_.get(), POLLIN, 0};
      return ::poll(&wake, 1, 100) <= 0;
    }
    if (conns->size() >= kMaxConnections) {
      // Full: the oldest connection still sending its request gives way, so that clients
      // which hold connections open cannot lock out the probes.
      auto oldest =
          std::find_if(conns->begin(), conns->end(), [](const auto& c) { return !c->Writing(); });
      if (oldest == conns->end()) continue;  // all busy answering: drop the newcomer
      conns->erase(oldest);
    }
    auto c = std::make_unique<Connection>();
    c->fd = std::move(fd);
    c->deadline = Clock::now() + kIoTimeout;
    conns->push_back(std::move(c));
  }
  return true;
}

bool HttpServer::Step(Connection* c, short revents) {
  const bool expired = Clock::now() >= c->deadline;
  if (!c->Writing()) {
    if (revents & (POLLIN | POLLHUP | POLLERR)) {
      char buf[2048];
      ssize_t n = ::recv(c->fd.get(), buf, sizeof(buf), 0);
      if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN && errno != EWOULDBLOCK)) {
        return false;  // closed or failed before a whole request arrived
      }
      if (n > 0) {
        const size_t from = c->in.size() >= 3 ? c->in.size() - 3 : 0;
        c->in.append(buf, static_cast<size_t>(n));
        const size_t end = HeadEnd(c->in, from);
        if ((end == std::string::npos ? c->in.size() : end) > kMaxRequestHead) {
          c->out = Serialize(Plain(431, "request header fields too large\n"), false);
        } else if (end != std::string::npos) {
          c->out = Answer(c->in.substr(0, end));
        }
      }
    }
    if (!c->Writing()) {
      if (!expired) return true;
      if (c->in.empty()) return false;
      c->out = Serialize(Plain(408, "request timeout\n"), false);
    }
    c->deadline = Clock::now() + kIoTimeout;  // for the response
  } else if (expired) {
    return false;
  }
  // Write what the socket takes now; the rest when it is writable again.
  while (c->sent < c->out.size()) {
    ssize_t n = ::send(c->fd.get(), c->out.data() + c->sent, c->out.size() - c->sent, MSG_NOSIGNAL);
    if (n > 0) {
      c->sent += static_cast<size_t>(n);
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else {
      return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
    }
  }
  // Half-close, then discard whatever the client sent that we did not read, so that closing
  // does not reset the connection before the client has read the response.
  ::shutdown(c->fd.get(), SHUT_WR);
  char buf[4096];
  for (int i = 0; i < 16 && ::recv(c->fd.get(), buf, sizeof(buf), MSG_DONTWAIT) > 0; ++i) {
  }
  return false;
}

}  // namespace hcashare
