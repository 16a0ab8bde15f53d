#include "http/server.h"

#include <arpa/inet.h>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ip/v6_only.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <cerrno>
#include <cstring>
#include <exception>
#include <list>
#include <optional>
#include <string_view>
#include <system_error>
#include <thread>
#include <utility>

#include "common/log.h"

namespace hcashare {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
using tcp = asio::ip::tcp;
using boost::system::error_code;

constexpr size_t kMaxRequestHead = 8 * 1024;  // request line + headers
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

// Opens, binds and listens `acceptor` on `ep`. Returns the failing call's name, or null.
const char* BindListen(tcp::acceptor* acceptor, const tcp::endpoint& ep, bool dual_stack,
                       error_code* ec) {
  error_code ignored;
  acceptor->close(ignored);
  if (acceptor->open(ep.protocol(), *ec)) return "socket";
  if (acceptor->set_option(asio::socket_base::reuse_address(true), *ec)) {
    return "setsockopt SO_REUSEADDR";
  }
  if (dual_stack && acceptor->set_option(asio::ip::v6_only(false), *ec)) {
    return "setsockopt IPV6_V6ONLY";
  }
  if (acceptor->bind(ep, *ec)) return "bind";
  if (acceptor->listen(kBacklog, *ec)) return "listen";
  return nullptr;
}

Status Listen(tcp::acceptor* acceptor, const ListenAddress& a, const std::string& address) {
  error_code ec;
  const char* what = nullptr;
  switch (a.kind) {
    case ListenAddress::kV4: {
      asio::ip::address_v4::bytes_type b;
      std::memcpy(b.data(), &a.v4, b.size());
      what = BindListen(acceptor, {asio::ip::address_v4(b), a.port}, false, &ec);
      break;
    }
    case ListenAddress::kV6: {
      asio::ip::address_v6::bytes_type b;
      std::memcpy(b.data(), &a.v6, b.size());
      what = BindListen(acceptor, {asio::ip::address_v6(b), a.port}, false, &ec);
      break;
    }
    case ListenAddress::kAny: {
      what = BindListen(acceptor, {tcp::v6(), a.port}, true, &ec);
      const int err = ec.value();
      // No IPv6 (not built, disabled by sysctl or boot option): serve IPv4 only.
      if (what != nullptr && (err == EAFNOSUPPORT || err == EPROTONOSUPPORT ||
                              err == EADDRNOTAVAIL || err == ENOPROTOOPT || err == EINVAL)) {
        ec.clear();
        what = BindListen(acceptor, {tcp::v4(), a.port}, false, &ec);
      }
      break;
    }
  }
  if (what != nullptr) return ErrnoStatus(ec.value(), std::string(what) + " " + address);
  return Status::Ok();
}

HttpResponse Plain(int status, std::string body) {
  HttpResponse r;
  r.status = status;
  r.body = std::move(body);
  return r;
}

}  // namespace

class HttpServer::Impl {
 public:
  Impl(Handler handler, HttpServerOptions options)
      : handler_(std::move(handler)), options_(std::move(options)) {}

  ~Impl() {
    io_.stop();
    if (io_thread_.joinable()) io_thread_.join();
    if (worker_) {
      worker_->stop();  // queued handlers are dropped; a running one is waited for
      worker_->join();
    }
  }

  Status Start(const ListenAddress& a, const std::string& address) {
    RETURN_IF_ERROR(Listen(&acceptor_, a, address));
    error_code ec;
    port_ = acceptor_.local_endpoint(ec).port();
    if (ec) return ErrnoStatus(ec.value(), "getsockname " + address);
    if (!options_.worker_paths.empty()) worker_.emplace(1);
    Accept();
    try {
      io_thread_ = std::thread([this] { io_.run(); });
    } catch (const std::system_error& e) {
      return Status::Internal(std::string("cannot start the HTTP server thread: ") + e.what());
    }
    return Status::Ok();
  }

  int port() const { return port_; }

 private:
  class Session;

  void Accept();
  // The response to a complete request, from the handler (on the calling thread).
  HttpResponse Answer(const std::string& path) const;

  const Handler handler_;
  const HttpServerOptions options_;
  asio::io_context io_{1};
  tcp::acceptor acceptor_{io_};
  std::optional<asio::thread_pool> worker_;  // with worker_paths
  std::list<std::weak_ptr<Session>> live_;   // open connections, oldest first (I/O thread)
  int port_ = 0;
  std::thread io_thread_;
};

// One client connection, driven by the I/O thread; owned by the handlers in flight.
class HttpServer::Impl::Session : public std::enable_shared_from_this<Session> {
 public:
  Session(Impl* server, tcp::socket socket) : server_(server), stream_(std::move(socket)) {
    parser_.header_limit(kMaxRequestHead);
  }

  // Reads the request; `self` is this session's place in server_->live_.
  void Start(std::list<std::weak_ptr<Session>>::iterator self) {
    self_ = self;
    stream_.expires_after(server_->options_.io_timeout);
    bhttp::async_read_header(stream_, buffer_, parser_,
                             [s = shared_from_this()](error_code ec, size_t) { s->OnRead(ec); });
  }

  // Closes the connection (at once, also when evicted) and leaves server_->live_; the
  // pending operation, if any, ends with an error. Idempotent.
  void Finish() {
    error_code ignored;
    stream_.socket().close(ignored);
    if (self_) server_->live_.erase(*self_);
    self_.reset();
  }

 private:
  void OnRead(error_code ec) {
    if (ec == bhttp::error::header_limit || ec == bhttp::error::buffer_overflow) {
      return Write(Plain(431, "request header fields too large\n"), false);
    }
    if (ec && ec.category() == bhttp::make_error_code(bhttp::error::bad_method).category() &&
        ec != bhttp::error::end_of_stream && ec != bhttp::error::partial_message) {
      return Write(Plain(400, "bad request\n"), false);
    }
    if (ec) return Finish();  // closed, timed out or evicted before a whole request
    const auto& req = parser_.get();
    if (req.version() / 10 != 1) return Write(Plain(505, "HTTP version not supported\n"), false);
    const bool head = req.method() == bhttp::verb::head;
    if (req.method() != bhttp::verb::get && !head) {
      return Write(Plain(405, "method not allowed\n"), false);
    }
    const std::string_view target(req.target().data(), req.target().size());
    if (target.empty() || target.front() != '/') {
      return Write(Plain(400, "bad request target\n"), head);
    }
    std::string path(target.substr(0, target.find_first_of("?#")));
    if (!server_->options_.worker_paths.count(path)) {
      return Write(server_->Answer(path), head);
    }
    // The worker computes the answer; the I/O thread writes it.
    asio::post(*server_->worker_, [s = shared_from_this(), path = std::move(path), head]() mutable {
      HttpResponse r = s->server_->Answer(path);
      Impl* server = s->server_;
      // The session moves on: the worker keeps no reference, so the I/O thread alone
      // ends (and destroys) it.
      asio::post(server->io_, [s = std::move(s), r = std::move(r), head]() mutable {
        s->Write(std::move(r), head);
      });
    });
  }

  void Write(HttpResponse r, bool head) {
    const int status = r.status >= 100 && r.status <= 999 ? r.status : 500;
    res_.result(static_cast<unsigned>(status));
    res_.version(11);
    // A handler-supplied header value must not be able to inject further headers.
    for (char& c : r.content_type) {
      if (c == '\r' || c == '\n') c = ' ';
    }
    res_.set(bhttp::field::content_type, r.content_type);
    if (status == 405) res_.set(bhttp::field::allow, "GET, HEAD");
    res_.keep_alive(false);
    res_.content_length(r.body.size());
    if (!head) res_.body() = std::move(r.body);
    stream_.expires_after(server_->options_.io_timeout);
    bhttp::async_write(stream_, res_, [s = shared_from_this()](error_code ec, size_t) {
      if (!ec) s->Drain();
      s->Finish();
    });
  }

  // Half-closes, then discards what the client sent that we did not read, so that closing
  // does not reset the connection before the client has read the response.
  void Drain() {
    error_code ec;
    stream_.socket().shutdown(tcp::socket::shutdown_send, ec);
    stream_.socket().non_blocking(true, ec);
    char buf[4096];
    for (int i = 0; i < 16 && !ec; ++i) stream_.socket().read_some(asio::buffer(buf), ec);
  }

  Impl* const server_;
  beast::tcp_stream stream_;
  beast::flat_buffer buffer_{kMaxRequestHead + 1};
  bhttp::request_parser<bhttp::empty_body> parser_;
  bhttp::response<bhttp::string_body> res_;
  std::optional<std::list<std::weak_ptr<Session>>::iterator> self_;
};

void HttpServer::Impl::Accept() {
  acceptor_.async_accept([this](error_code ec, tcp::socket socket) {
    if (ec == asio::error::operation_aborted) return;
    if (ec) {
      // Typically EMFILE: log and go on (the next accept may succeed once a client left).
      LogWarn("http server: accept failed", {{"error", ec.message()}});
    } else {
      // Full: the oldest connection gives way, so that clients which hold connections
      // open (sending nothing, or reading nothing) cannot lock out the probes.
      while (live_.size() >= options_.max_connections) {
        if (auto oldest = live_.front().lock()) {
          oldest->Finish();
        } else {
          live_.pop_front();
        }
      }
      auto s = std::make_shared<Session>(this, std::move(socket));
      live_.push_back(s);
      s->Start(std::prev(live_.end()));
    }
    Accept();
  });
}

HttpResponse HttpServer::Impl::Answer(const std::string& path) const {
  try {
    return handler_(path);
  } catch (const std::exception& e) {
    LogError("http handler failed", {{"path", path}, {"error", e.what()}});
  } catch (...) {
    LogError("http handler failed", {{"path", path}, {"error", "unknown exception"}});
  }
  return Plain(500, "internal error\n");
}

HttpServer::HttpServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

HttpServer::~HttpServer() = default;

int HttpServer::port() const { return impl_->port(); }

Status HttpServer::CheckAddress(const std::string& address) {
  return ParseAddress(address).status();
}

Result<std::unique_ptr<HttpServer>> HttpServer::Start(const std::string& address, Handler handler,
                                                      HttpServerOptions options) {
  if (!handler) return Status::InvalidArgument("HttpServer needs a handler");
  if (options.max_connections == 0) options.max_connections = 1;
  ASSIGN_OR_RETURN(ListenAddress parsed, ParseAddress(address));
  auto impl = std::make_unique<Impl>(std::move(handler), std::move(options));
  RETURN_IF_ERROR(impl->Start(parsed, address));
  return std::unique_ptr<HttpServer>(new HttpServer(std::move(impl)));
}

}  // namespace hcashare
