#include "http/tls_server.h"

#include <atomic>
#include <boost/asio/ssl.hpp>
#include <boost/beast/ssl.hpp>
#include <chrono>
#include <optional>

#include "common/file_stamp.h"
#include "common/log.h"
#include "common/safe_file.h"
#include "http/listen.h"
#include "http/server_core.h"
#include "http/tls_context.h"

namespace hcashare {
namespace {

namespace ssl = boost::asio::ssl;
using http_internal::error_code;
using http_internal::tcp;

constexpr size_t kMaxPemBytes = 1 << 20;  // a certificate chain or key file
constexpr std::chrono::seconds kRecheck{1};

// A server TLS context with the pair in `files`.
Result<std::shared_ptr<ssl::context>> LoadContext(const TlsFiles& files) {
  SafeReadOptions o;
  o.max_bytes = kMaxPemBytes;
  o.follow_symlinks = true;  // a mounted Secret's files are symlinks into ..data/
  o.what = "TLS certificate file";
  ASSIGN_OR_RETURN(std::string cert, ReadFileSafely(files.cert_file, o));
  o.what = "TLS key file";
  ASSIGN_OR_RETURN(std::string key, ReadFileSafely(files.key_file, o));
  auto ctx = std::make_shared<ssl::context>(ssl::context::tls_server);
  RETURN_IF_ERROR(tls::SetModernDefaults(ctx.get()));
  RETURN_IF_ERROR(tls::SetServerPolicy(ctx.get()));
  Status s = tls::UseKeyPair(ctx.get(), cert, key);
  if (!s.ok()) return s.WithContext(files.cert_file + " and " + files.key_file);
  if (!files.client_ca_file.empty()) {
    o.what = "client CA file";
    ASSIGN_OR_RETURN(std::string ca, ReadFileSafely(files.client_ca_file, o));
    error_code ec;
    if (ctx->add_certificate_authority(boost::asio::buffer(ca), ec)) {
      return Status::InvalidArgument(files.client_ca_file + ": not a PEM CA certificate (" +
                                     tls::TakeOpenSslError() + ")");
    }
    ctx->set_verify_mode(ssl::verify_peer | ssl::verify_fail_if_no_peer_cert, ec);
    if (ec) return Status::Internal("cannot require client certificates: " + ec.message());
  }
  return ctx;
}

// Both files' stamps, or nullopt when either cannot be stat()ed.
std::optional<std::pair<FileStamp, FileStamp>> Stamps(const TlsFiles& files) {
  Result<FileStamp> cert = StampOf(files.cert_file);
  Result<FileStamp> key = StampOf(files.key_file);
  if (!cert.ok() || !key.ok()) return std::nullopt;
  return std::make_pair(*cert, *key);
}

// TLS over TCP, with the certificate pair reloaded when its files change. Used on the I/O
// thread only, except for the counters.
class TlsTransport {
 public:
  TlsTransport(TlsFiles files, std::shared_ptr<ssl::context> ctx)
      : files_(std::move(files)), ctx_(std::move(ctx)), stamps_(Stamps(files_)) {
    not_after_ = tls::CertificateNotAfter(ctx_.get()).value_or(0);
  }

  struct Conn {
    Conn(tcp::socket socket, TlsTransport& t) : ctx(t.Current()), stream(std::move(socket), *ctx) {}
    std::shared_ptr<ssl::context> ctx;  // the pair this connection was accepted with
    boost::beast::ssl_stream<boost::beast::tcp_stream> stream;
  };
  static void Handshake(Conn& c, std::function<void(error_code)> done) {
    c.stream.async_handshake(ssl::stream_base::server, std::move(done));
  }
  // Sends close_notify and waits (within the deadline) for the client's, or its close.
  static void Close(Conn& c, std::function<void()> done) {
    c.stream.async_shutdown([done = std::move(done)](error_code) { done(); });
  }

  uint64_t reloads() const { return reloads_.load(); }
  uint64_t failures() const { return failures_.load(); }
  int64_t not_after() const { return not_after_.load(); }

 private:
  // The current context, reloaded first when the files changed (checked once a second).
  std::shared_ptr<ssl::context> Current() {
    const auto now = std::chrono::steady_clock::now();
    if (now - checked_ < kRecheck) return ctx_;
    checked_ = now;
    auto stamps = Stamps(files_);
    if (!stamps || stamps == stamps_) return ctx_;
    stamps_ = stamps;
    Result<std::shared_ptr<ssl::context>> fresh = LoadContext(files_);
    if (!fresh.ok()) {
      ++failures_;
      LogWarn("TLS certificate changed but does not load; keeping the previous one",
              {{"error", fresh.status().message()}});
      return ctx_;
    }
    ctx_ = std::move(fresh).value();
    not_after_ = tls::CertificateNotAfter(ctx_.get()).value_or(0);
    ++reloads_;
    LogInfo("TLS certificate reloaded", {{"cert", files_.cert_file}});
    return ctx_;
  }

  const TlsFiles files_;
  std::shared_ptr<ssl::context> ctx_;
  std::optional<std::pair<FileStamp, FileStamp>> stamps_;  // of the loaded pair's files
  std::chrono::steady_clock::time_point checked_ = std::chrono::steady_clock::now();
  std::atomic<uint64_t> reloads_{0};
  std::atomic<uint64_t> failures_{0};
  std::atomic<int64_t> not_after_{0};  // of the serving certificate in use
};

}  // namespace

class HttpsServer::Impl : public http_internal::ServerCore<TlsTransport> {
 public:
  using ServerCore::ServerCore;
};

HttpsServer::HttpsServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

HttpsServer::~HttpsServer() = default;

int HttpsServer::port() const { return impl_->port(); }

void HttpsServer::StartDraining() { impl_->StartDraining(); }

bool HttpsServer::Drain(std::chrono::milliseconds budget) { return impl_->Drain(budget); }

uint64_t HttpsServer::reloads() const { return impl_->transport().reloads(); }

uint64_t HttpsServer::reload_failures() const { return impl_->transport().failures(); }

int64_t HttpsServer::certificate_not_after() const { return impl_->transport().not_after(); }

Result<std::unique_ptr<HttpsServer>> HttpsServer::Start(const std::string& address, TlsFiles files,
                                                        HttpServer::RequestHandler handler,
                                                        HttpServerOptions options) {
  if (!handler) return Status::InvalidArgument("HttpsServer needs a handler");
  if (options.max_connections == 0) options.max_connections = 1;
  ASSIGN_OR_RETURN(http_internal::ListenAddress parsed, http_internal::ParseAddress(address));
  ASSIGN_OR_RETURN(std::shared_ptr<ssl::context> ctx, LoadContext(files));
  auto impl = std::make_unique<Impl>(std::move(handler), std::move(options), std::move(files),
                                     std::move(ctx));
  RETURN_IF_ERROR(impl->Start(parsed, address));
  return std::unique_ptr<HttpsServer>(new HttpsServer(std::move(impl)));
}

}  // namespace hcashare
