#include "kube/rest_conn.h"

#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include <utility>

namespace hcashare::kube::internal {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace ssl = boost::asio::ssl;
using tcp = asio::ip::tcp;
using boost::system::error_code;

}  // namespace

TlsConnection::TlsConnection(std::shared_ptr<ssl::context> ctx, std::string where,
                             StreamCancel* cancel)
    : ctx_(std::move(ctx)), stream_(io_, *ctx_), where_(std::move(where)), cancel_(cancel) {
  if (cancel_) attached_ = cancel_->Attach([this] { io_.stop(); });
}

TlsConnection::~TlsConnection() {
  if (attached_) cancel_->Detach();
}

template <typename Start>
error_code TlsConnection::Run(Start start, Clock::time_point at) {
  error_code ec;
  bool done = false;
  start([&](error_code e, auto&&...) {
    ec = e;
    done = true;
  });
  io_.restart();
  // A Cancel() before restart() is seen here; one after it stops run_until().
  if (!(cancel_ && cancel_->cancelled())) io_.run_until(at);
  if (!done) {
    // A resolve in progress ends when getaddrinfo() returns (it cannot be interrupted).
    resolver_.cancel();
    error_code ignored;
    beast::get_lowest_layer(stream_).socket().close(ignored);
    while (!done) {  // lets the cancelled operation finish (a Cancel() may stop run() again)
      io_.restart();
      io_.run();
    }
    ec = beast::error::timeout;
  }
  if (cancel_ && cancel_->cancelled()) ec = asio::error::operation_aborted;
  return ec;
}

Status TlsConnection::Fail(const std::string& step, error_code ec,
                           std::chrono::milliseconds timeout, const char* timeout_words) {
  if (ec == asio::error::operation_aborted && cancel_ && cancel_->cancelled()) {
    return Status::Unavailable(where_ + ": cancelled (" + step + ")");
  }
  if (ec == beast::error::timeout || ec == asio::error::operation_aborted) {
    return Status::Unavailable(where_ + ": " + timeout_words + " " +
                               std::to_string(timeout.count()) + " ms (" + step + ")");
  }
  std::string detail = ec.message();
  if (ec.category() == asio::error::get_ssl_category()) {
    const long verify = SSL_get_verify_result(stream_.native_handle());
    if (verify != X509_V_OK) detail += ": " + std::string(X509_verify_cert_error_string(verify));
  }
  return Status::Unavailable(where_ + ": " + step + ": " + detail);
}

Status TlsConnection::Open(const ClusterConfig& config, const Deadline& deadline) {
  // Server name checks: hostname or IP address in the certificate, SNI for names only.
  SSL* s = stream_.native_handle();
  const std::string& name =
      config.tls_server_name.empty() ? config.url.host : config.tls_server_name;
  const bool name_is_ip = config.tls_server_name.empty() && config.url.host_is_ip;
  if (name_is_ip) {
    if (X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(s), name.c_str()) != 1) {
      return Status::InvalidArgument(where_ + ": bad server address " + name);
    }
  } else if (SSL_set1_host(s, name.c_str()) != 1 ||
             SSL_set_tlsext_host_name(s, name.c_str()) != 1) {
    return Status::InvalidArgument(where_ + ": bad server name " + name);
  }

  // Direct, or to the proxy, which is asked for a tunnel to the server (CONNECT).
  const std::string& dial_host = config.proxy ? config.proxy->host : config.url.host;
  const uint16_t dial_port = config.proxy ? config.proxy->port : config.url.port;
  tcp::resolver::results_type endpoints;
  error_code ec = Run(
      [&](auto handler) {
        resolver_.async_resolve(dial_host, std::to_string(dial_port),
                                [&, handler](error_code e, tcp::resolver::results_type r) mutable {
                                  endpoints = std::move(r);
                                  handler(e);
                                });
      },
      deadline.at);
  if (ec) return Fail("resolve " + dial_host, ec, deadline.timeout);

  auto& tcp_stream = beast::get_lowest_layer(stream_);
  tcp_stream.expires_at(deadline.at);
  ec = Run([&](auto handler) { tcp_stream.async_connect(endpoints, handler); }, deadline.at);
  if (ec) {
    return Fail(config.proxy ? "connect to proxy " + config.proxy->url : "connect", ec,
                deadline.timeout);
  }
  if (config.proxy) RETURN_IF_ERROR(Tunnel(config, deadline));
  // A request goes out as written: with Nagle's algorithm the last TLS record of a body
  // larger than one waits for the server's delayed ACK (~40 ms a write of a ResourceSlice).
  tcp_stream.socket().set_option(tcp::no_delay(true), ec);
  ec = Run([&](auto handler) { stream_.async_handshake(ssl::stream_base::client, handler); },
           deadline.at);
  if (ec) return Fail("TLS handshake", ec, deadline.timeout);
  return Status::Ok();
}

Status TlsConnection::Tunnel(const ClusterConfig& config, const Deadline& deadline) {
  const bool v6 = config.url.host.find(':') != std::string::npos;
  const std::string target =
      (v6 ? "[" + config.url.host + "]" : config.url.host) + ":" + std::to_string(config.url.port);
  bhttp::request<bhttp::empty_body> connect{bhttp::verb::connect, target, 11};
  connect.set(bhttp::field::host, target);
  if (!config.proxy->authorization.empty()) {
    connect.set(bhttp::field::proxy_authorization, config.proxy->authorization);
  }
  auto& tcp_stream = beast::get_lowest_layer(stream_);
  const std::string step = "CONNECT " + target + " through proxy " + config.proxy->url;
  error_code ec =
      Run([&](auto handler) { bhttp::async_write(tcp_stream, connect, handler); }, deadline.at);
  if (ec) return Fail(step, ec, deadline.timeout);
  bhttp::response_parser<bhttp::empty_body> answer;
  answer.skip(true);  // a CONNECT's answer has no body: the tunnel follows the head
  answer.header_limit(16 * 1024);
  ec = Run([&](auto handler) { bhttp::async_read_header(tcp_stream, buffer_, answer, handler); },
           deadline.at);
  if (ec) return Fail(step, ec, deadline.timeout);
  const unsigned code = answer.get().result_int();
  if (code < 200 || code > 299) {
    return Status::Unavailable(where_ + ": " + step + ": the proxy answered " +
                               std::to_string(code) + " " + std::string(answer.get().reason()));
  }
  // Nothing may follow the head before the server's first TLS bytes, which we ask for.
  if (buffer_.size() != 0) {
    return Status::Unavailable(where_ + ": " + step + ": bytes after the proxy's answer");
  }
  return Status::Ok();
}

Status TlsConnection::Write(bhttp::request<bhttp::string_body>& request, const Deadline& deadline) {
  beast::get_lowest_layer(stream_).expires_at(deadline.at);
  error_code ec =
      Run([&](auto handler) { bhttp::async_write(stream_, request, handler); }, deadline.at);
  return ec ? Fail("send", ec, deadline.timeout) : Status::Ok();
}

Status TlsConnection::Read(bhttp::response_parser<bhttp::string_body>& parser,
                           const Deadline& deadline) {
  beast::get_lowest_layer(stream_).expires_at(deadline.at);
  error_code ec =
      Run([&](auto handler) { bhttp::async_read(stream_, buffer_, parser, handler); }, deadline.at);
  if (ec == bhttp::error::body_limit || ec == bhttp::error::header_limit) {
    return Status::FailedPrecondition(where_ + ": " + ec.message());  // the caller words it
  }
  return ec ? Fail("receive", ec, deadline.timeout) : Status::Ok();
}

Status TlsConnection::ReadHeader(bhttp::response_parser<bhttp::buffer_body>& parser,
                                 const Deadline& deadline) {
  beast::get_lowest_layer(stream_).expires_at(deadline.at);
  error_code ec =
      Run([&](auto handler) { bhttp::async_read_header(stream_, buffer_, parser, handler); },
          deadline.at);
  if (ec == bhttp::error::header_limit) {
    return Status::FailedPrecondition(where_ + ": the response head is too large");
  }
  return ec ? Fail("receive", ec, deadline.timeout) : Status::Ok();
}

Status TlsConnection::ReadSome(bhttp::response_parser<bhttp::buffer_body>& parser,
                               std::chrono::milliseconds idle) {
  beast::get_lowest_layer(stream_).expires_after(idle);
  // The stream's timer bounds the read; the io deadline is a second guard.
  error_code ec =
      Run([&](auto handler) { bhttp::async_read_some(stream_, buffer_, parser, handler); },
          Clock::now() + idle + std::chrono::milliseconds(100));
  if (ec == bhttp::error::need_buffer) ec = {};  // the body buffer is full: the caller drains it
  return ec ? Fail("receive", ec, idle, "no data for") : Status::Ok();
}

void TlsConnection::Close() {
  error_code ignored;
  beast::get_lowest_layer(stream_).socket().close(ignored);
}

}  // namespace hcashare::kube::internal

namespace hcashare::kube {

void StreamCancel::Cancel() {
  std::lock_guard<std::mutex> lock(mu_);
  cancelled_ = true;
  if (stop_) stop_();
}

bool StreamCancel::cancelled() const {
  std::lock_guard<std::mutex> lock(mu_);
  return cancelled_;
}

bool StreamCancel::Attach(std::function<void()> stop) {
  std::lock_guard<std::mutex> lock(mu_);
  if (cancelled_) return false;
  stop_ = std::move(stop);
  return true;
}

void StreamCancel::Detach() {
  std::lock_guard<std::mutex> lock(mu_);
  stop_ = nullptr;
}

}  // namespace hcashare::kube
