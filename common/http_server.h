// HttpServer: a minimal HTTP/1.1 server for GET endpoints such as /metrics, /healthz and
// /readyz.
//
// One thread polls the listening socket and serves one connection at a time: it reads the
// request head (at most 8 KiB, within 2 s), calls the handler with the path, writes the response
// (within 2 s) and closes the connection. So a slow or hostile client delays others by at most
// a few seconds. Only GET and HEAD are served (others get 405). Every descriptor is owned by a
// UniqueFd; an eventfd stops the thread promptly.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <thread>

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

  // Stops the thread (promptly, even mid-request) and closes the sockets.
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // The port listened on.
  int port() const { return port_; }

 private:
  // Lets Start() use std::make_unique with an otherwise private constructor.
  struct Key {
    explicit Key() = default;
  };

 public:
  // Use Start().
  HttpServer(Key, UniqueFd listen_fd, UniqueFd wake_fd, int port, Handler handler);

 private:
  // The thread's main loop: accept and serve until woken.
  void Run();
  // Serves one connection. Returns false if the server is stopping.
  bool Serve(int fd);

  UniqueFd listen_fd_;
  UniqueFd wake_fd_;  // eventfd, written by the destructor
  int port_;
  Handler handler_;
  std::thread thread_;
};

}  // namespace hcashare
