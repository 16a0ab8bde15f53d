#include "kube/rest.h"

#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <optional>
#include <thread>
#include <utility>

#include "common/log.h"
#include "common/version.h"
#include "http/tls_context.h"
#include "kube/backoff.h"
#include "kube/pem.h"
#include "kube/status_error.h"

namespace hcashare::kube {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
namespace ssl = boost::asio::ssl;
using tcp = asio::ip::tcp;
using boost::system::error_code;
using Clock = std::chrono::steady_clock;

constexpr size_t kMaxResponseHead = 64 * 1024;

// When a call must be over, and the timeout it came from (for messages).
struct Deadline {
  Clock::time_point at;
  std::chrono::milliseconds timeout;
};
constexpr size_t kMaxWarningBytes = 1024;

bhttp::verb BeastVerb(Verb v) {
  switch (v) {
    case Verb::kGet:
      return bhttp::verb::get;
    case Verb::kPost:
      return bhttp::verb::post;
    case Verb::kPut:
      return bhttp::verb::put;
    case Verb::kPatch:
      return bhttp::verb::patch;
    case Verb::kDelete:
      return bhttp::verb::delete_;
  }
  return bhttp::verb::get;
}

// True when `s` may go into a request line or header: no control characters, no space.
bool IsHeaderSafe(const std::string& s, bool allow_space) {
  for (unsigned char c : s) {
    if (c < 0x20 || c == 0x7f || (c == ' ' && !allow_space)) return false;
  }
  return true;
}

// Loads the CA, client certificate and key into `ctx`.
Status LoadCredentials(ssl::context* ctx, const ClusterConfig& config) {
  RETURN_IF_ERROR(tls::SetModernDefaults(ctx));
  error_code ec;
  ctx->set_verify_mode(ssl::verify_peer, ec);
  if (config.ca_pem.empty()) return Status::InvalidArgument(config.source + ": no CA");
  if (ctx->add_certificate_authority(asio::buffer(config.ca_pem), ec)) {
    std::string why = tls::TakeOpenSslError();
    return Status::InvalidArgument(config.source +
                                   ": the CA: " + (why.empty() ? ec.message() : why));
  }
  if (!config.client_cert_pem.empty()) {
    Status s = tls::UseKeyPair(ctx, config.client_cert_pem, config.client_key_pem, "client");
    if (!s.ok()) return s.WithContext(config.source);
  }
  return Status::Ok();
}

}  // namespace

const char* VerbName(Verb verb) {
  switch (verb) {
    case Verb::kGet:
      return "GET";
    case Verb::kPost:
      return "POST";
    case Verb::kPut:
      return "PUT";
    case Verb::kPatch:
      return "PATCH";
    case Verb::kDelete:
      return "DELETE";
  }
  return "GET";
}

const char* PatchContentType(PatchType type) {
  switch (type) {
    case PatchType::kMerge:
      return "application/merge-patch+json";
    case PatchType::kJson:
      return "application/json-patch+json";
    case PatchType::kStrategicMerge:
      return "application/strategic-merge-patch+json";
    case PatchType::kApply:
      return "application/apply-patch+yaml";
  }
  return "application/merge-patch+json";
}

std::string UserAgent(const std::string& component) { return component + "/" + VersionString(); }

class RestClient::Impl {
 public:
  Impl(ClusterConfig config, RestOptions options)
      : config_(std::move(config)), options_(std::move(options)) {
    if (!config_.token_file.empty()) token_file_.emplace(config_.token_file);
    const bool v6 = config_.url.host.find(':') != std::string::npos;
    host_header_ = (v6 ? "[" + config_.url.host + "]" : config_.url.host) + ":" +
                   std::to_string(config_.url.port);
  }

  Status Init() {
    if (!IsHeaderSafe(options_.user_agent, true)) {
      return Status::InvalidArgument("user agent holds a control character");
    }
    return LoadCredentials(&ctx_, config_);
  }

  Result<Response> Do(const Request& request) {
    const std::string what = std::string(VerbName(request.verb)) + " " + request.path;
    if (request.path.empty() || request.path.front() != '/' || !IsHeaderSafe(request.path, false)) {
      return Status::InvalidArgument(what + ": bad request path");
    }
    if (!IsHeaderSafe(request.content_type, true)) {
      return Status::InvalidArgument(what + ": bad content type");
    }
    ASSIGN_OR_RETURN(std::string token, Token());
    // One deadline for the whole call: the wait for a rate-limit slot, and a second
    // exchange after a 401.
    const auto timeout = request.timeout.count() > 0 ? request.timeout : options_.timeout;
    const Deadline deadline{Clock::now() + timeout, timeout};
    std::optional<std::chrono::nanoseconds> wait = limiter_.TryReserve(timeout);
    if (!wait) {
      return Status::Unavailable(what + ": client-side rate limit: no slot within the " +
                                 std::to_string(timeout.count()) + " ms timeout");
    }
    if (wait->count() > 0) std::this_thread::sleep_for(*wait);
    ASSIGN_OR_RETURN(Response r, Exchange(request, token, what, deadline));
    // A 401 with a token file: the token may have rotated under us; read it again, once.
    if (r.status == 401 && token_file_) {
      token_file_->Invalidate();
      ASSIGN_OR_RETURN(std::string fresh, Token());
      if (fresh != token) return Exchange(request, fresh, what, deadline);
    }
    return r;
  }

 private:
  Result<std::string> Token() {
    if (token_file_) return token_file_->Get();
    return config_.token;
  }

  // One connection: connect, handshake, request, response, close.
  Result<Response> Exchange(const Request& request, const std::string& token,
                            const std::string& what, const Deadline& deadline);

  const ClusterConfig config_;
  const RestOptions options_;
  ssl::context ctx_{ssl::context::tls_client};
  std::optional<TokenFile> token_file_;
  RateLimiter limiter_{options_.qps, options_.burst};
  std::string host_header_;
};

Result<Response> RestClient::Impl::Exchange(const Request& request, const std::string& token,
                                            const std::string& what, const Deadline& call) {
  const std::string where = what + " (" + config_.server + ")";
  const auto timeout = call.timeout;
  const auto deadline = call.at;
  asio::io_context io(1);
  beast::ssl_stream<beast::tcp_stream> stream(io, ctx_);
  error_code ec;
  auto fail = [&](const std::string& step) -> Status {
    if (ec == beast::error::timeout || ec == asio::error::operation_aborted) {
      return Status::Unavailable(where + ": timed out after " + std::to_string(timeout.count()) +
                                 " ms (" + step + ")");
    }
    std::string detail = ec.message();
    if (ec.category() == asio::error::get_ssl_category()) {
      const long verify = SSL_get_verify_result(stream.native_handle());
      if (verify != X509_V_OK) detail += ": " + std::string(X509_verify_cert_error_string(verify));
    }
    return Status::Unavailable(where + ": " + step + ": " + detail);
  };
  // Runs the operation just started until it completes; the stream's timer (or, for the
  // resolver, the deadline) bounds it.
  tcp::resolver resolver(io);
  bool done = false;
  auto run = [&] {
    io.restart();
    io.run_until(deadline);
    if (!done) {
      // A resolve in progress ends when getaddrinfo() returns (it cannot be interrupted).
      resolver.cancel();
      beast::get_lowest_layer(stream).close();
      io.restart();
      io.run();  // lets the cancelled operation finish
      ec = beast::error::timeout;
    }
  };

  // Server name checks: hostname or IP address in the certificate, SNI for names only.
  SSL* s = stream.native_handle();
  const std::string& name =
      config_.tls_server_name.empty() ? config_.url.host : config_.tls_server_name;
  const bool name_is_ip = config_.tls_server_name.empty() && config_.url.host_is_ip;
  if (name_is_ip) {
    if (X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(s), name.c_str()) != 1) {
      return Status::InvalidArgument(where + ": bad server address " + name);
    }
  } else if (SSL_set1_host(s, name.c_str()) != 1 ||
             SSL_set_tlsext_host_name(s, name.c_str()) != 1) {
    return Status::InvalidArgument(where + ": bad server name " + name);
  }

  tcp::resolver::results_type endpoints;
  resolver.async_resolve(config_.url.host, std::to_string(config_.url.port),
                         [&](error_code e, tcp::resolver::results_type r) {
                           ec = e;
                           endpoints = std::move(r);
                           done = true;
                         });
  run();
  if (ec) return fail("resolve " + config_.url.host);

  beast::get_lowest_layer(stream).expires_at(deadline);
  done = false;
  beast::get_lowest_layer(stream).async_connect(endpoints, [&](error_code e, auto) {
    ec = e;
    done = true;
  });
  run();
  if (ec) return fail("connect");

  done = false;
  stream.async_handshake(ssl::stream_base::client, [&](error_code e) {
    ec = e;
    done = true;
  });
  run();
  if (ec) return fail("TLS handshake");

  bhttp::request<bhttp::string_body> req(BeastVerb(request.verb),
                                         config_.url.base_path + request.path, 11);
  req.set(bhttp::field::host, host_header_);
  req.set(bhttp::field::user_agent, options_.user_agent);
  req.set(bhttp::field::accept, "application/json");
  if (!token.empty()) req.set(bhttp::field::authorization, "Bearer " + token);
  if (!request.body.empty()) {
    req.set(bhttp::field::content_type, request.content_type);
    req.body() = request.body;
  }
  req.keep_alive(false);
  req.prepare_payload();
  done = false;
  bhttp::async_write(stream, req, [&](error_code e, size_t) {
    ec = e;
    done = true;
  });
  run();
  if (ec) return fail("send");

  beast::flat_buffer buffer;
  bhttp::response_parser<bhttp::string_body> parser;
  parser.header_limit(kMaxResponseHead);
  parser.body_limit(options_.max_response_bytes);
  done = false;
  bhttp::async_read(stream, buffer, parser, [&](error_code e, size_t) {
    ec = e;
    done = true;
  });
  run();
  if (ec == bhttp::error::body_limit) {
    return Status::FailedPrecondition(where + ": the response is larger than " +
                                      std::to_string(options_.max_response_bytes) + " bytes");
  }
  if (ec == bhttp::error::header_limit) {
    return Status::FailedPrecondition(where + ": the response head is larger than " +
                                      std::to_string(kMaxResponseHead) + " bytes");
  }
  if (ec) return fail("receive");
  beast::get_lowest_layer(stream).close();  // no TLS close_notify: the call is over

  const auto& res = parser.get();
  Response out;
  out.status = static_cast<int>(res.result_int());
  out.content_type = std::string(res[bhttp::field::content_type]);
  out.retry_after = std::string(res[bhttp::field::retry_after]);
  auto warnings = res.equal_range(bhttp::field::warning);
  for (auto it = warnings.first; it != warnings.second; ++it) {
    if (out.warnings.size() == Response::kMaxWarnings) break;
    out.warnings.emplace_back(it->value().substr(0, kMaxWarningBytes));
    LogWarn("kubernetes API warning", {{"request", what}, {"warning", out.warnings.back()}});
  }
  out.body = std::move(parser.release().body());
  return out;
}

namespace {

Request MakeRequest(Verb verb, const std::string& path, const std::string& body = "",
                    const std::string& content_type = "application/json") {
  Request r;
  r.verb = verb;
  r.path = path;
  r.body = body;
  r.content_type = content_type;
  return r;
}

}  // namespace

RestClient::RestClient(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
RestClient::~RestClient() = default;

Result<std::unique_ptr<RestClient>> RestClient::Create(const ClusterConfig& config,
                                                       RestOptions options) {
  if (options.timeout.count() <= 0) return Status::InvalidArgument("the timeout must be > 0");
  auto impl = std::make_unique<Impl>(config, std::move(options));
  RETURN_IF_ERROR(impl->Init());
  return std::unique_ptr<RestClient>(new RestClient(std::move(impl)));
}

Result<Response> RestClient::Do(const Request& request) { return impl_->Do(request); }

Result<Response> RestClient::Call(const Request& request) {
  ASSIGN_OR_RETURN(Response r, Do(request));
  if (r.ok()) return r;
  return ParseApiError(r.status, r.body, r.retry_after)
      .ToStatus(std::string(VerbName(request.verb)) + " " + request.path);
}

Result<Response> RestClient::Get(const std::string& path) {
  return Call(MakeRequest(Verb::kGet, path));
}

Result<Response> RestClient::Post(const std::string& path, const std::string& body) {
  return Call(MakeRequest(Verb::kPost, path, body));
}

Result<Response> RestClient::Put(const std::string& path, const std::string& body) {
  return Call(MakeRequest(Verb::kPut, path, body));
}

Result<Response> RestClient::Patch(const std::string& path, const std::string& body,
                                   PatchType type) {
  return Call(MakeRequest(Verb::kPatch, path, body, PatchContentType(type)));
}

Result<Response> RestClient::Delete(const std::string& path, const std::string& body) {
  return Call(MakeRequest(Verb::kDelete, path, body));
}

}  // namespace hcashare::kube
