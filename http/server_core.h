// ServerCore: the connection handling that HttpServer (plain TCP) and HttpsServer (TLS)
// share, as a template over a transport. Internal to the http libraries: each server's .cc
// instantiates it for its transport, so the plain server never links OpenSSL.
//
// A Transport provides:
//   struct Conn { Conn(tcp::socket, Transport&); <stream> stream; };  // one connection
//   static void Handshake(Conn&, std::function<void(error_code)>);    // before the request
//   static void Close(Conn&, std::function<void()> done);  // after the response: an orderly
//                                                          // end within the deadline
#pragma once

#include <atomic>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>
#include <utility>

#include "common/log.h"
#include "http/listen.h"
#include "http/server.h"

namespace hcashare::http_internal {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
using tcp = asio::ip::tcp;
using boost::system::error_code;

constexpr size_t kMaxRequestHead = 8 * 1024;  // request line + headers

// A plain-text response.
inline HttpResponse Plain(int status, std::string body) {
  HttpResponse r;
  r.status = status;
  r.body = std::move(body);
  return r;
}

// Half-closes `socket`, then discards what the client sent that was not read, so that
// closing does not reset the connection before the client has read the response.
inline void Drain(tcp::socket& socket) {
  error_code ec;
  socket.shutdown(tcp::socket::shutdown_send, ec);
  socket.non_blocking(true, ec);
  char buf[4096];
  for (int i = 0; i < 16 && !ec; ++i) socket.read_some(asio::buffer(buf), ec);
}

// The bytes of request bodies a server holds at once (HttpServerOptions).
inline size_t BodyBudget(const HttpServerOptions& o) {
  if (o.max_body_bytes_in_flight > 0) return o.max_body_bytes_in_flight;
  return o.max_body_bytes * o.max_connections;
}

template <class Transport>
class ServerCore {
 public:
  // `transport_args` construct the Transport.
  template <class... A>
  ServerCore(HttpServer::RequestHandler handler, HttpServerOptions options, A&&... transport_args)
      : handler_(std::move(handler)),
        options_(std::move(options)),
        transport_(std::forward<A>(transport_args)...) {}

  ~ServerCore() {
    io_.stop();
    if (io_thread_.joinable()) io_thread_.join();
    for (auto* pool : {&workers_, &slow_}) {
      if (!*pool) continue;
      (*pool)->stop();  // queued handlers are dropped; running ones are waited for
      (*pool)->join();
    }
  }

  // Binds, then starts the I/O thread (and the workers, when there are worker paths).
  Status Start(const ListenAddress& a, const std::string& address) {
    RETURN_IF_ERROR(Listen(&acceptor_, a, address));
    error_code ec;
    port_ = acceptor_.local_endpoint(ec).port();
    if (ec) return ErrnoStatus(ec.value(), "getsockname " + address);
    if (!options_.worker_paths.empty()) {
      workers_.emplace(options_.worker_threads == 0 ? 1 : options_.worker_threads);
      if (options_.slow_threads > 0) slow_.emplace(options_.slow_threads);
    }
    Accept();
    try {
      io_thread_ = std::thread([this] { io_.run(); });
    } catch (const std::system_error& e) {
      return Status::Internal(std::string("cannot start the HTTP server thread: ") + e.what());
    }
    return Status::Ok();
  }

  int port() const { return port_; }
  Transport& transport() { return transport_; }

  // From now on every answer closes its connection (Connection: close), so that clients
  // send their next request elsewhere. Thread-safe.
  void StartDraining() { draining_ = true; }
  // Stops accepting connections and waits up to `budget` until every request already read
  // has been answered (its answer written or its connection gone); true when all were.
  // Thread-safe; implies StartDraining.
  bool Drain(std::chrono::milliseconds budget) {
    draining_ = true;
    asio::post(io_, [this] {
      error_code ignored;
      acceptor_.close(ignored);
    });
    std::unique_lock<std::mutex> lock(flight_mu_);
    return flight_cv_.wait_for(lock, budget, [this] { return in_flight_ == 0; });
  }

 private:
  class Session;

  void Accept();
  // The handler's response to a complete request (on the calling thread).
  HttpResponse Answer(const HttpRequest& request) const;

  const HttpServer::RequestHandler handler_;
  const HttpServerOptions options_;
  Transport transport_;
  asio::io_context io_{1};
  // Keeps io_.run() going while nothing is pending on it: once Drain closed the acceptor,
  // workers still post their answers to it.
  asio::executor_work_guard<asio::io_context::executor_type> keep_running_{io_.get_executor()};
  tcp::acceptor acceptor_{io_};
  std::optional<asio::thread_pool> workers_;  // with worker_paths
  std::optional<asio::thread_pool> slow_;     // with worker_paths and slow_threads
  std::list<std::weak_ptr<Session>> live_;    // open connections, oldest first (I/O thread)
  // Request bodies: the most that may be held at once, and what sessions hold (I/O thread).
  const size_t body_budget_ = BodyBudget(options_);
  size_t body_bytes_reserved_ = 0;
  int port_ = 0;
  std::thread io_thread_;
  std::atomic<bool> draining_{false};
  // Requests read and not yet answered (Drain waits for none).
  std::mutex flight_mu_;
  std::condition_variable flight_cv_;
  int in_flight_ = 0;  // guarded by flight_mu_

  // One more, or one less, request in flight.
  void Flight(int delta) {
    std::lock_guard<std::mutex> lock(flight_mu_);
    in_flight_ += delta;
    if (in_flight_ == 0) flight_cv_.notify_all();
  }
};

// One client connection, driven by the I/O thread; owned by the handlers in flight.
template <class Transport>
class ServerCore<Transport>::Session : public std::enable_shared_from_this<Session> {
 public:
  Session(ServerCore* server, tcp::socket socket)
      : server_(server), conn_(std::move(socket), server->transport_) {
    NewParser();
  }

  // Handshakes, then reads the request; `self` is this session's place in server_->live_.
  void Start(typename std::list<std::weak_ptr<Session>>::iterator self) {
    self_ = self;
    Lowest().expires_after(server_->options_.io_timeout);
    Transport::Handshake(conn_, [s = this->shared_from_this()](error_code ec) {
      if (ec) return s->Finish();
      s->ReadHead();
    });
  }

  // Closes the connection (at once, also when evicted) and leaves server_->live_; the
  // pending operation, if any, ends with an error. Idempotent.
  void Finish() {
    Answered();
    Release();
    error_code ignored;
    Lowest().socket().close(ignored);
    if (self_) server_->live_.erase(*self_);
    self_.reset();
  }

 private:
  beast::tcp_stream& Lowest() { return beast::get_lowest_layer(conn_.stream); }

  // A parser for the next request (a parser reads one message).
  void NewParser() {
    parser_.emplace();
    parser_->header_limit(kMaxRequestHead);
    // Without POST no body is ever read: the limit must not refuse a Content-Length (a 405
    // or a plain answer is due). Not boost::none: Boost 1.74 compares a length with an
    // empty limit as exceeding it.
    parser_->body_limit(server_->options_.max_body_bytes > 0 ? server_->options_.max_body_bytes
                                                             : UINT64_MAX);
  }

  void ReadHead() {
    bhttp::async_read_header(
        conn_.stream, buffer_, *parser_,
        [s = this->shared_from_this()](error_code ec, size_t) { s->OnHead(ec); });
  }

  // The request handed to the handler, if any, is answered (or never will be).
  void Answered() {
    if (!answering_) return;
    answering_ = false;
    server_->Flight(-1);
  }

  // Gives this request's body bytes back to the server's budget.
  void Release() {
    server_->body_bytes_reserved_ -= reserved_;
    reserved_ = 0;
  }

  // Keep-alive: the answer is out; wait (within the deadline) for the next request.
  void Next() {
    Release();
    res_ = {};
    NewParser();
    Lowest().expires_after(server_->options_.io_timeout);
    ReadHead();
  }

  // A read failed: answer what deserves an answer, drop the rest.
  void OnReadError(error_code ec) {
    if (ec == bhttp::error::header_limit || ec == bhttp::error::buffer_overflow) {
      return Write(Plain(431, "request header fields too large\n"), false);
    }
    if (ec == bhttp::error::body_limit) return Write(Plain(413, "request body too large\n"), false);
    if (ec.category() == bhttp::make_error_code(bhttp::error::bad_method).category() &&
        ec != bhttp::error::end_of_stream && ec != bhttp::error::partial_message) {
      return Write(Plain(400, "bad request\n"), false);
    }
    Finish();  // closed, timed out, evicted or garbage before a whole request
  }

  void OnHead(error_code ec) {
    if (ec) return OnReadError(ec);
    const auto& req = parser_->get();
    if (req.version() / 10 != 1) return Write(Plain(505, "HTTP version not supported\n"), false);
    const bool head = req.method() == bhttp::verb::head;
    const bool post = req.method() == bhttp::verb::post && server_->options_.max_body_bytes > 0;
    if (req.method() != bhttp::verb::get && !head && !post) {
      return Write(Plain(405, "method not allowed\n"), false);
    }
    const std::string_view target(req.target().data(), req.target().size());
    if (target.empty() || target.front() != '/') {
      return Write(Plain(400, "bad request target\n"), head);
    }
    if (!post) return Dispatch(head);
    // The body's bytes count against the server's budget from now until the connection
    // ends: the announced length, or the cap for a chunked body.
    const auto announced = parser_->content_length();  // within body_limit: fits a size_t
    const size_t want =
        announced ? static_cast<size_t>(*announced) : server_->options_.max_body_bytes;
    if (server_->body_bytes_reserved_ + want > server_->body_budget_) {
      return Write(Plain(503, "too many request bodies in flight, retry\n"), false);
    }
    reserved_ = want;
    server_->body_bytes_reserved_ += want;
    bhttp::async_read(conn_.stream, buffer_, *parser_,
                      [s = this->shared_from_this()](error_code ec, size_t) {
                        if (ec) return s->OnReadError(ec);
                        s->Dispatch(false);
                      });
  }

  // Hands the whole request to the handler, on this thread or a worker.
  void Dispatch(bool head) {
    auto& req = parser_->get();
    // Keep-alive only where the options allow it and the client asks (HTTP/1.1's default).
    const bool keep = server_->options_.keep_alive && req.keep_alive();
    server_->Flight(+1);
    answering_ = true;
    const std::string_view target(req.target().data(), req.target().size());
    const size_t q = target.find_first_of("?#");
    HttpRequest r;
    r.method = std::string(req.method_string());
    r.path = std::string(target.substr(0, q));
    if (q != std::string_view::npos && target[q] == '?') {
      r.query = std::string(target.substr(q + 1, target.find('#', q) - q - 1));
    }
    auto ct = req.find(bhttp::field::content_type);
    if (ct != req.end()) r.content_type = std::string(ct->value());
    r.body = std::move(req.body());
    r.received = std::chrono::steady_clock::now();
    if (!server_->options_.worker_paths.count(r.path)) {
      return Write(server_->Answer(r), head, keep);
    }
    // A worker computes the answer (or defers it to the slow lane); the I/O thread writes it.
    asio::post(
        *server_->workers_, [s = this->shared_from_this(), r = std::move(r), head, keep]() mutable {
          HttpResponse out = s->server_->Answer(r);
          ServerCore* server = s->server_;
          if (out.deferred && server->slow_) {
            r.slow_lane = true;
            asio::post(*server->slow_, [s = std::move(s), r = std::move(r), head, keep]() mutable {
              HttpResponse slow = s->server_->Answer(r);
              if (slow.deferred)
                slow = HttpResponse{500, "text/plain; charset=utf-8", "deferred twice\n", false};
              Deliver(std::move(s), std::move(slow), head, keep);
            });
            return;
          }
          if (out.deferred)
            out = HttpResponse{500, "text/plain; charset=utf-8",
                               "no slow lane for a deferred request\n", false};
          Deliver(std::move(s), std::move(out), head, keep);
        });
  }

  // Hands `out` to the I/O thread, which writes it. The session moves on: the worker keeps
  // no reference, so the I/O thread alone ends (and destroys) it.
  static void Deliver(std::shared_ptr<Session> s, HttpResponse out, bool head, bool keep) {
    ServerCore* server = s->server_;
    asio::post(server->io_, [s = std::move(s), out = std::move(out), head, keep]() mutable {
      s->Write(std::move(out), head, keep);
    });
  }

  // Writes the answer; then, with `keep`, reads the next request, else ends the connection.
  // Answers to requests the server refused (4xx/5xx before the handler) never keep it: their
  // body may be unread.
  void Write(HttpResponse r, bool head, bool keep = false) {
    if (!self_) return Answered();  // evicted while a worker answered
    keep = keep && !server_->draining_;
    const int status = r.status >= 100 && r.status <= 999 ? r.status : 500;
    res_.result(static_cast<unsigned>(status));
    res_.version(11);
    // A handler-supplied header value must not be able to inject further headers.
    for (char& c : r.content_type) {
      if (c == '\r' || c == '\n') c = ' ';
    }
    res_.set(bhttp::field::content_type, r.content_type);
    if (status == 405) {
      res_.set(bhttp::field::allow,
               server_->options_.max_body_bytes > 0 ? "GET, HEAD, POST" : "GET, HEAD");
    }
    res_.keep_alive(keep);
    res_.content_length(r.body.size());
    if (!head) res_.body() = std::move(r.body);
    Lowest().expires_after(server_->options_.io_timeout);
    bhttp::async_write(conn_.stream, res_,
                       [s = this->shared_from_this(), keep](error_code ec, size_t) {
                         s->Answered();
                         if (ec) return s->Finish();
                         if (keep) return s->Next();
                         Transport::Close(s->conn_, [s] { s->Finish(); });
                       });
  }

  ServerCore* const server_;
  typename Transport::Conn conn_;
  beast::flat_buffer buffer_{kMaxRequestHead + 1};
  std::optional<bhttp::request_parser<bhttp::string_body>> parser_;  // this request's
  bhttp::response<bhttp::string_body> res_;
  std::optional<typename std::list<std::weak_ptr<Session>>::iterator> self_;
  size_t reserved_ = 0;     // of server_->body_bytes_reserved_
  bool answering_ = false;  // a request of this session is counted in flight
};

template <class Transport>
void ServerCore<Transport>::Accept() {
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

template <class Transport>
HttpResponse ServerCore<Transport>::Answer(const HttpRequest& request) const {
  try {
    return handler_(request);
  } catch (const std::exception& e) {
    LogError("http handler failed", {{"path", request.path}, {"error", e.what()}});
  } catch (...) {
    LogError("http handler failed", {{"path", request.path}, {"error", "unknown exception"}});
  }
  return Plain(500, "internal error\n");
}

}  // namespace hcashare::http_internal
