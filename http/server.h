// HttpServer: a small HTTP/1.1 server for GET endpoints such as /metrics, /healthz and
// /readyz, on Boost.Beast and Boost.Asio (why: docs/architecture.md).
//
// One I/O thread serves every connection asynchronously, so a stalled or slow client holds
// only its own connection. Each connection has one deadline per direction: its request
// head (at most 8 KiB) must arrive within `io_timeout`, and its response must be taken
// within `io_timeout` more, or the connection is closed; a client that sends a request and
// never reads the answer is dropped like one that never sends. At most `max_connections`
// are open: when full, the oldest is closed for the newcomer, so clients that hold
// connections cannot lock out the probes. Handlers of `worker_paths` (those that may take
// long, such as rendering every metric) run on a worker thread, one at a time, so the
// other paths never wait behind them. GET and HEAD are served, and POST when
// `max_body_bytes` allows a body (others get 405); a response closes its connection unless
// `keep_alive` is on.
// HttpsServer (http/tls_server.h) is the same server over TLS.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <set>
#include <string>

#include "common/status.h"

namespace hcashare {

// What a handler returns for one request.
struct HttpResponse {
  int status = 200;                                        // HTTP status code
  std::string content_type = "text/plain; charset=utf-8";  // Content-Type header
  std::string body;                                        // omitted for HEAD requests
  // Set by a worker path's handler that cannot answer quickly: the request is handled again
  // on the slow lane (HttpServerOptions::slow_threads, HttpRequest::slow_lane), so that it
  // holds none of the workers that answer the quick ones. Nothing else of it is used.
  bool deferred = false;

  // The answer that defers a request to the slow lane.
  static HttpResponse Deferred() {
    HttpResponse r;
    r.deferred = true;
    return r;
  }
};

// One request as a handler sees it.
struct HttpRequest {
  std::string method;        // "GET", "HEAD" or "POST"
  std::string path;          // the target up to '?' or '#'
  std::string query;         // after '?', without the fragment
  std::string content_type;  // the Content-Type header, or ""
  std::string body;          // POST only
  // When its head and body had been read (before any queueing), for deadlines.
  std::chrono::steady_clock::time_point received{};
  bool slow_lane = false;  // handled again on the slow lane after HttpResponse::Deferred()
};

// How an HttpServer bounds its clients and where it runs its handlers.
struct HttpServerOptions {
  // Paths whose handler runs on the worker thread (see the file comment).
  std::set<std::string> worker_paths;
  // Each direction of a connection must complete within this.
  std::chrono::milliseconds io_timeout{2000};
  // Connections open at once.
  size_t max_connections = 64;
  // Bytes of a POST body; 0 serves no POST. A larger body gets 413. The body must arrive
  // within `io_timeout` with the request head.
  size_t max_body_bytes = 0;
  // Bytes of POST bodies held at once over all connections (a body counts with its
  // announced length, a chunked one with max_body_bytes, until its connection ends); a
  // request past it gets 503 before its body is read. 0: max_body_bytes * max_connections.
  size_t max_body_bytes_in_flight = 0;
  // Threads that run the worker paths' handlers (each runs one request at a time).
  size_t worker_threads = 1;
  // Threads of the slow lane, which runs the requests a worker deferred; 0: none (a deferred
  // answer is then a 500). Their own queue: slow requests never wait in front of quick ones.
  size_t slow_threads = 0;
  // HTTP keep-alive: after an answer the connection waits (within `io_timeout`) for the
  // client's next request, unless the client said "Connection: close". Off: every answer
  // closes its connection.
  bool keep_alive = false;
};

class HttpServer {
 public:
  // Maps a request path (without the query string) to a response. It must answer unknown
  // paths itself (e.g. with 404). Exceptions become a 500. Runs on the I/O thread, or on
  // the worker thread for HttpServerOptions::worker_paths, so it must be thread-safe when
  // some paths are worker paths.
  using Handler = std::function<HttpResponse(const std::string& path)>;
  // The same, given the whole request (method, query, body).
  using RequestHandler = std::function<HttpResponse(const HttpRequest& request)>;

  // Listens on `address`: "host:port" with a numeric IPv4 host, "[v6]:port", "localhost:port",
  // or ":port" (all addresses: IPv6 dual-stack, IPv4 if IPv6 is unavailable). Port 0 picks an
  // ephemeral port (see port()). Starts the threads. InvalidArgument for a bad address or an
  // empty handler, an errno Status if bind/listen fails.
  static Result<std::unique_ptr<HttpServer>> Start(const std::string& address, Handler handler,
                                                   HttpServerOptions options = {});
  // The same with a handler of whole requests.
  static Result<std::unique_ptr<HttpServer>> Start(const std::string& address,
                                                   RequestHandler handler,
                                                   HttpServerOptions options = {});

  // Checks the syntax of a listen address as Start() takes it, without binding.
  static Status CheckAddress(const std::string& address);

  // Stops the threads (promptly, even mid-request; a worker handler that is running is
  // waited for) and closes the sockets.
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // The port listened on.
  int port() const;
  // From now on every answer closes its connection (Connection: close), so that clients
  // (the API server) take their next request elsewhere while this one shuts down.
  void StartDraining();
  // Stops accepting and waits up to `budget` until every request already read is answered;
  // true when all were. Then the destructor drops nothing that was asked.
  bool Drain(std::chrono::milliseconds budget);

  // Connections served at once by default.
  static constexpr size_t kMaxConnections = 64;

  class Impl;  // the Asio objects (server.cc)

 private:
  explicit HttpServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace hcashare
