#include "kube/rest.h"

#include <boost/beast/http.hpp>
#include <cstdint>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include "common/log.h"
#include "common/version.h"
#include "kube/backoff.h"
#include "kube/rest_conn.h"
#include "kube/rest_credentials.h"
#include "kube/status_error.h"

namespace hcashare::kube {
namespace {

namespace bhttp = boost::beast::http;
using internal::Clock;
using internal::Deadline;

constexpr size_t kMaxResponseHead = 64 * 1024;
constexpr size_t kMaxWarningBytes = 1024;
constexpr size_t kStreamReadBytes = 16 * 1024;

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

// The head of an answer as a Response (no body); logs its Warning headers.
Response Head(const bhttp::response_header<>& res, const std::string& what) {
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
  return out;
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
    if (config_.exec) exec_.emplace(*config_.exec);
    const bool v6 = config_.url.host.find(':') != std::string::npos;
    host_header_ = (v6 ? "[" + config_.url.host + "]" : config_.url.host) + ":" +
                   std::to_string(config_.url.port);
  }

  Status Init() {
    if (!IsHeaderSafe(options_.user_agent, true)) {
      return Status::InvalidArgument("user agent holds a control character");
    }
    ASSIGN_OR_RETURN(credentials_, internal::CredentialContext::Create(
                                       config_, options_.credential_check_interval));
    return Status::Ok();
  }

  Result<Response> Do(const Request& request) {
    const std::string what = std::string(VerbName(request.verb)) + " " + request.path;
    ASSIGN_OR_RETURN(std::string token, Token());
    ASSIGN_OR_RETURN(Deadline deadline, Admit(request, what));
    ASSIGN_OR_RETURN(Response r, Exchange(request, token, what, deadline));
    // A 401 with a token file or an exec plugin: the token may have rotated (or been
    // revoked) under us; read it again (run the plugin again), once.
    if (r.status == 401 && Invalidate()) {
      ASSIGN_OR_RETURN(std::string fresh, Token());
      if (fresh != token) return Exchange(request, fresh, what, deadline);
    }
    return r;
  }

  Status Stream(const Request& request, const StreamOptions& options,
                const std::function<bool(std::string_view)>& on_line) {
    const std::string what = std::string(VerbName(request.verb)) + " " + request.path;
    ASSIGN_OR_RETURN(std::string token, Token());
    ASSIGN_OR_RETURN(Deadline deadline, Admit(request, what));
    int code = 0;
    Status st = StreamOnce(request, token, what, deadline, options, on_line, &code);
    if (code == 401 && Invalidate()) {  // as in Do()
      ASSIGN_OR_RETURN(std::string fresh, Token());
      if (fresh != token)
        return StreamOnce(request, fresh, what, deadline, options, on_line, &code);
    }
    return st;
  }

 private:
  Result<std::string> Token() {
    if (token_file_) return token_file_->Get();
    if (exec_) return exec_->Get();
    return config_.token;
  }
  // Forgets a token that can be fetched again; false when it cannot (a literal token).
  bool Invalidate() {
    if (token_file_) token_file_->Invalidate();
    if (exec_) exec_->Invalidate();
    return token_file_ || exec_;
  }

  // Checks `request` and waits for a rate-limit slot; the call's deadline. One deadline for
  // the whole call: the wait for the slot, and a second exchange after a 401.
  Result<Deadline> Admit(const Request& request, const std::string& what) {
    if (request.path.empty() || request.path.front() != '/' || !IsHeaderSafe(request.path, false)) {
      return Status::InvalidArgument(what + ": bad request path");
    }
    if (!IsHeaderSafe(request.content_type, true)) {
      return Status::InvalidArgument(what + ": bad content type");
    }
    const auto timeout = request.timeout.count() > 0 ? request.timeout : options_.timeout;
    const Deadline deadline{Clock::now() + timeout, timeout};
    std::optional<std::chrono::nanoseconds> wait = limiter_.TryReserve(timeout);
    if (!wait) {
      return Status::Unavailable(what + ": client-side rate limit: no slot within the " +
                                 std::to_string(timeout.count()) + " ms timeout");
    }
    if (wait->count() > 0) std::this_thread::sleep_for(*wait);
    return deadline;
  }

  bhttp::request<bhttp::string_body> Prepare(const Request& request, const std::string& token,
                                             bool keep_alive) const;
  // One call: on a kept connection when there is one (again on a new one when the server had
  // closed it and the verb may be repeated), else on a new connection; the connection is
  // kept for the next call when the server allows it.
  Result<Response> Exchange(const Request& request, const std::string& token,
                            const std::string& what, const Deadline& deadline);
  // Request and response on `conn`. `*stale` is set when the exchange failed before any
  // byte of an answer arrived (a kept connection the server had closed).
  Result<Response> ExchangeOn(internal::TlsConnection& conn, const Request& request,
                              const std::string& token, const std::string& what,
                              const Deadline& deadline, bool* stale);
  // A kept connection (not idle past its timeout), or null.
  std::unique_ptr<internal::TlsConnection> TakeIdle();
  // Keeps `conn` for the next call, or closes it when enough are kept.
  void Park(std::unique_ptr<internal::TlsConnection> conn);
  // One connection of Stream(); `*code` is the answer's HTTP code (0 when none came).
  Status StreamOnce(const Request& request, const std::string& token, const std::string& what,
                    const Deadline& deadline, const StreamOptions& options,
                    const std::function<bool(std::string_view)>& on_line, int* code);

  const ClusterConfig config_;
  const RestOptions options_;
  // The TLS context for new connections, following credential file rotation.
  std::unique_ptr<internal::CredentialContext> credentials_;
  std::optional<TokenFile> token_file_;
  std::optional<ExecCredential> exec_;
  RateLimiter limiter_{options_.qps, options_.burst};
  std::string host_header_;
  struct Idle {
    std::unique_ptr<internal::TlsConnection> conn;
    Clock::time_point since;
  };
  std::mutex idle_mu_;
  std::vector<Idle> idle_;  // guarded by idle_mu_; most recently parked last
};

// A request for `request` with the client's headers.
bhttp::request<bhttp::string_body> RestClient::Impl::Prepare(const Request& request,
                                                             const std::string& token,
                                                             bool keep_alive) const {
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
  req.keep_alive(keep_alive);
  req.prepare_payload();
  return req;
}

std::unique_ptr<internal::TlsConnection> RestClient::Impl::TakeIdle() {
  std::lock_guard<std::mutex> lock(idle_mu_);
  while (!idle_.empty()) {
    Idle idle = std::move(idle_.back());
    idle_.pop_back();
    if (Clock::now() - idle.since < options_.idle_connection_timeout) return std::move(idle.conn);
    idle.conn->Close();
  }
  return nullptr;
}

void RestClient::Impl::Park(std::unique_ptr<internal::TlsConnection> conn) {
  std::lock_guard<std::mutex> lock(idle_mu_);
  if (idle_.size() >= options_.max_idle_connections) {
    conn->Close();  // no TLS close_notify: the call is over
    return;
  }
  idle_.push_back({std::move(conn), Clock::now()});
}

Result<Response> RestClient::Impl::ExchangeOn(internal::TlsConnection& conn, const Request& request,
                                              const std::string& token, const std::string& what,
                                              const Deadline& deadline, bool* stale) {
  const std::string where = what + " (" + config_.server + ")";
  conn.SetWhere(where);
  bhttp::request<bhttp::string_body> req =
      Prepare(request, token, request.cancel == nullptr && options_.max_idle_connections > 0);
  *stale = true;
  RETURN_IF_ERROR(conn.Write(req, deadline));
  bhttp::response_parser<bhttp::string_body> parser;
  parser.header_limit(kMaxResponseHead);
  parser.body_limit(options_.max_response_bytes);
  Status read = conn.Read(parser, deadline);
  *stale = !read.ok() && !parser.got_some();
  if (read.code() == StatusCode::kFailedPrecondition) {
    return Status::FailedPrecondition(
        where + (parser.is_header_done()
                     ? ": the response is larger than " +
                           std::to_string(options_.max_response_bytes) + " bytes"
                     : ": the response head is larger than " + std::to_string(kMaxResponseHead) +
                           " bytes"));
  }
  RETURN_IF_ERROR(read);
  Response out = Head(parser.get(), what);
  const bool keep = parser.get().keep_alive();
  out.body = std::move(parser.release().body());
  *stale = !keep;  // the caller parks the connection only when the server keeps it
  return out;
}

Result<Response> RestClient::Impl::Exchange(const Request& request, const std::string& token,
                                            const std::string& what, const Deadline& deadline) {
  const bool poolable = request.cancel == nullptr && options_.max_idle_connections > 0;
  // Repeating a request the server never answered is safe unless it creates or patches.
  const bool repeatable = request.verb != Verb::kPost && request.verb != Verb::kPatch;
  bool stale = false;
  if (poolable && repeatable) {
    if (std::unique_ptr<internal::TlsConnection> kept = TakeIdle()) {
      Result<Response> r = ExchangeOn(*kept, request, token, what, deadline, &stale);
      if (r.ok() && !stale) Park(std::move(kept));
      if (r.ok() || !stale) return r;
      // The server closed the kept connection before answering: once more on a new one.
    }
  }
  const std::string where = what + " (" + config_.server + ")";
  auto conn =
      std::make_unique<internal::TlsConnection>(credentials_->Current(), where, request.cancel);
  RETURN_IF_ERROR(conn->Open(config_, deadline));
  Result<Response> r = ExchangeOn(*conn, request, token, what, deadline, &stale);
  if (r.ok() && poolable && !stale) {
    Park(std::move(conn));
  } else {
    conn->Close();  // no TLS close_notify: the call is over
  }
  return r;
}

Status RestClient::Impl::StreamOnce(const Request& request, const std::string& token,
                                    const std::string& what, const Deadline& deadline,
                                    const StreamOptions& options,
                                    const std::function<bool(std::string_view)>& on_line,
                                    int* code) {
  const std::string where = what + " (" + config_.server + ")";
  internal::TlsConnection conn(credentials_->Current(), where, request.cancel);
  RETURN_IF_ERROR(conn.Open(config_, deadline));
  bhttp::request<bhttp::string_body> req = Prepare(request, token, /*keep_alive=*/false);
  RETURN_IF_ERROR(conn.Write(req, deadline));
  bhttp::response_parser<bhttp::buffer_body> parser;
  parser.header_limit(kMaxResponseHead);
  parser.body_limit(std::numeric_limits<std::uint64_t>::max());  // a stream has no total size; each
                                                                 // line is bounded
  RETURN_IF_ERROR(conn.ReadHeader(parser, deadline));
  const Response head = Head(parser.get(), what);
  *code = head.status;

  std::string pending;  // a 2xx answer: the line so far; else the error body
  char chunk[kStreamReadBytes];
  while (!parser.is_done()) {
    parser.get().body().data = chunk;
    parser.get().body().size = sizeof(chunk);
    RETURN_IF_ERROR(conn.ReadSome(parser, options.idle_timeout));
    const size_t n = sizeof(chunk) - parser.get().body().size;
    if (!head.ok()) {
      pending.append(chunk, std::min(n, kMaxStatusBodyBytes + 1 - pending.size()));
      if (pending.size() > kMaxStatusBodyBytes) break;  // ParseApiError summarises it
      continue;
    }
    if (options.raw_pieces) {
      if (n > 0 && !on_line(std::string_view(chunk, n))) {
        conn.Close();
        return Status::Ok();
      }
      continue;
    }
    size_t scan = pending.size();
    pending.append(chunk, n);
    size_t begin = 0;
    for (size_t nl; (nl = pending.find('\n', scan)) != std::string::npos; scan = nl + 1) {
      std::string_view line(pending.data() + begin, nl - begin);
      begin = nl + 1;
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      if (line.size() > options.max_line_bytes) break;  // reported below
      if (!line.empty() && !on_line(line)) {
        conn.Close();
        return Status::Ok();
      }
    }
    pending.erase(0, begin);
    if (pending.size() > options.max_line_bytes) {
      conn.Close();
      return Status::FailedPrecondition(where + ": a line of the answer is longer than " +
                                        std::to_string(options.max_line_bytes) + " bytes");
    }
  }
  conn.Close();
  if (!head.ok()) return ParseApiError(head.status, pending, head.retry_after).ToStatus(what);
  if (!pending.empty()) {
    return Status::Unavailable(where + ": the answer ended inside a line (" +
                               std::to_string(pending.size()) + " bytes without a newline)");
  }
  return Status::Ok();
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

Status RestClient::Stream(const Request& request, const StreamOptions& options,
                          const std::function<bool(std::string_view line)>& on_line) {
  return impl_->Stream(request, options, on_line);
}

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
