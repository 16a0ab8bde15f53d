// TlsConnection: one HTTPS connection of a RestClient (internal to hcashare_kube): resolve,
// connect, TLS handshake with the server-name checks, then HTTP/1.1 writes and reads, each
// bounded by a deadline, and cancellable from another thread through a StreamCancel. Every
// operation runs on the calling thread's own io_context. Not thread-safe (but Cancel() is).
// rest_conn.cc also holds StreamCancel (kube/rest.h), the other half of the cancel.
#pragma once

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <chrono>
#include <memory>
#include <string>

#include "common/status.h"
#include "kube/config.h"
#include "kube/rest.h"

namespace hcashare::kube::internal {

namespace bhttp = boost::beast::http;
using Clock = std::chrono::steady_clock;

// When an operation must be over, and the timeout it came from (for messages).
struct Deadline {
  Clock::time_point at;
  std::chrono::milliseconds timeout;
};

class TlsConnection {
 public:
  // `where` prefixes every message ("GET /api/v1/pods (https://...)"); `cancel` may be null.
  // The connection keeps `ctx` alive (the client may move on to a reloaded one).
  TlsConnection(std::shared_ptr<boost::asio::ssl::context> ctx, std::string where,
                StreamCancel* cancel);
  ~TlsConnection();
  TlsConnection(const TlsConnection&) = delete;
  TlsConnection& operator=(const TlsConnection&) = delete;

  // Resolves and connects to `config`'s server (through its proxy's tunnel when it has one)
  // and completes the TLS handshake, verifying the certificate against the server's IP
  // address or name (or tls-server-name).
  Status Open(const ClusterConfig& config, const Deadline& deadline);
  // Sends `request`.
  Status Write(bhttp::request<bhttp::string_body>& request, const Deadline& deadline);
  // Reads a whole answer into `parser` (its limits set by the caller).
  Status Read(bhttp::response_parser<bhttp::string_body>& parser, const Deadline& deadline);
  // Reads the head of an answer.
  Status ReadHeader(bhttp::response_parser<bhttp::buffer_body>& parser, const Deadline& deadline);
  // One read of whatever body bytes arrive into the parser's body buffer; an error when
  // nothing arrives within `idle` ("no data for N ms").
  Status ReadSome(bhttp::response_parser<bhttp::buffer_body>& parser,
                  std::chrono::milliseconds idle);
  // Closes the socket (no TLS close_notify).
  void Close();
  // Names the next request in messages (a kept connection serves several).
  void SetWhere(std::string where) { where_ = std::move(where); }

 private:
  // Asks the config's proxy for a tunnel to the server (CONNECT) on the connected socket.
  Status Tunnel(const ClusterConfig& config, const Deadline& deadline);
  // Runs the operation `start` begins until its handler runs or `at` passes; the error.
  template <typename Start>
  boost::system::error_code Run(Start start, Clock::time_point at);
  // The Status for `ec` during `step`.
  Status Fail(const std::string& step, boost::system::error_code ec,
              std::chrono::milliseconds timeout, const char* timeout_words = "timed out after");

  std::shared_ptr<boost::asio::ssl::context> ctx_;
  boost::asio::io_context io_{1};
  boost::beast::ssl_stream<boost::beast::tcp_stream> stream_;
  boost::asio::ip::tcp::resolver resolver_{io_};
  boost::beast::flat_buffer buffer_;
  std::string where_;
  StreamCancel* const cancel_;
  bool attached_ = false;
};

}  // namespace hcashare::kube::internal
