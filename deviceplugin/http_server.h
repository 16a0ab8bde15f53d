// HttpServer: a minimal HTTP/1.1 server for GET endpoints such as /metrics, /healthz and
// /readyz.
//
// One thread runs a poll loop over every open connection at once: a stalled or slow client
// holds only its own connection. Each connection must deliver its request head (at most
// 8 KiB) within 2 s and take its response within 2 s more; the response then closes it.
// At most kMaxConnections are open: when full, the oldest connection still sending its
// request is closed for the newcomer, so clients that hold connections open cannot lock out
// the probes. Only GET and HEAD are served (others get 405). Every descriptor is owned by a
// UniqueFd; an eventfd stops the thread promptly. Why not libmicrohttpd: see
// docs/architecture.md.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "common/status.h"
#include "common/unique_fd.h"

namespace hcashare {

// What a handler returns for one request.
struct HttpResponse {
  int status = 200;                                        // HTTP status code
  std::string content_type = "text/plain; charset=utf-8";  // Content-Type header
  std::string body;                                        // omitted for HEAD requests
};

class HttpServer {
 public:
  // Maps a request path (without the query string) to a response; runs on the server thread.
  // It must answer unknown paths itself (e.g. with 404). Exceptions become a 500.
  using Handler = std::function<HttpResponse(const std::string& path)>;

  // Listens on `address`: "host:port" with a numeric IPv4 host, "[v6]:port", "localhost:port",
  // or ":port" (all addresses: IPv6 dual-stack, IPv4 if IPv6 is unavailable). Port 0 picks an
  // ephemeral port (see port()). Starts the serving thread. InvalidArgument for a bad address
  // or an empty handler, an errno Status if bind/listen fails.
  static Result<std::unique_ptr<HttpServer>> Start(const std::string& address, Handler handler);

  // Checks the syntax of a listen address as Start() takes it, without binding.
  static Status CheckAddress(const std::string& address);

  // Stops the thread (promptly, even mid-request) and closes the sockets.
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // The port listened on.
  int port() const { return port_; }

  // Connections served at once.
  static constexpr size_t kMaxConnections = 64;

 private:
  // Lets Start() use std::make_unique with an otherwise private constructor.
  struct Key {
    explicit Key() = default;
  };

 public:
  // Use Start().
  HttpServer(Key, UniqueFd listen_fd, UniqueFd wake_fd, int port, Handler handler);

 private:
  struct Connection;

  // The thread's main loop: accept and serve until woken.
  void Run();
  // Accepts the pending connections into `conns`. False when the server is stopping.
  bool Accept(std::vector<std::unique_ptr<Connection>>* conns);
  // Advances `c` after poll reported `revents` (or its deadline passed): reads the request,
  // answers it, writes the answer. False when the connection is done and must be closed.
  bool Step(Connection* c, short revents);
  // The response bytes for complete request head `req`.
  std::string Answer(const std::string& req);

  UniqueFd listen_fd_;
  UniqueFd wake_fd_;  // eventfd, written by the destructor
  int port_;
  Handler handler_;
  std::thread thread_;
};

}  // namespace hcashare
