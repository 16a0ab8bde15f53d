#include "http/server.h"

#include "http/listen.h"
#include "http/server_core.h"

namespace hcashare {
namespace {

using http_internal::tcp;

// Plain TCP: no handshake; after the response, a half-close and a drain.
struct PlainTransport {
  struct Conn {
    Conn(tcp::socket socket, PlainTransport&) : stream(std::move(socket)) {}
    http_internal::beast::tcp_stream stream;
  };
  static void Handshake(Conn&, const std::function<void(http_internal::error_code)>& done) {
    done({});
  }
  static void Close(Conn& c, const std::function<void()>& done) {
    http_internal::Drain(c.stream.socket());
    done();
  }
};

}  // namespace

class HttpServer::Impl : public http_internal::ServerCore<PlainTransport> {
 public:
  using ServerCore::ServerCore;
};

HttpServer::HttpServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

HttpServer::~HttpServer() = default;

int HttpServer::port() const { return impl_->port(); }

void HttpServer::StartDraining() { impl_->StartDraining(); }

bool HttpServer::Drain(std::chrono::milliseconds budget) { return impl_->Drain(budget); }

Status HttpServer::CheckAddress(const std::string& address) {
  return http_internal::ParseAddress(address).status();
}

Result<std::unique_ptr<HttpServer>> HttpServer::Start(const std::string& address, Handler handler,
                                                      HttpServerOptions options) {
  if (!handler) return Status::InvalidArgument("HttpServer needs a handler");
  return Start(
      address, [h = std::move(handler)](const HttpRequest& r) { return h(r.path); },
      std::move(options));
}

Result<std::unique_ptr<HttpServer>> HttpServer::Start(const std::string& address,
                                                      RequestHandler handler,
                                                      HttpServerOptions options) {
  if (!handler) return Status::InvalidArgument("HttpServer needs a handler");
  if (options.max_connections == 0) options.max_connections = 1;
  ASSIGN_OR_RETURN(http_internal::ListenAddress parsed, http_internal::ParseAddress(address));
  auto impl = std::make_unique<Impl>(std::move(handler), std::move(options));
  RETURN_IF_ERROR(impl->Start(parsed, address));
  return std::unique_ptr<HttpServer>(new HttpServer(std::move(impl)));
}

}  // namespace hcashare
