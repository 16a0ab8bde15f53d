// RestClient: synchronous HTTPS requests to the Kubernetes API server, on Boost.Beast and
// OpenSSL.
//
// Every call opens its own TLS connection (no pooling yet; a Stream() keeps its one
// connection for as long as the answer lasts), verifies the server certificate
// against the configured CA and the server's name or IP address (or tls-server-name),
// presents the client certificate when one is configured, and sends the bearer token (a
// token file is re-read when it changes, and once more after a 401). Each call has one
// deadline covering the wait for a rate-limit slot, resolve, connect, handshake, request and
// response (and a second exchange after a 401); a response larger
// than the cap is refused (resolving a name may outlast the deadline: getaddrinfo() cannot be
// interrupted; in-cluster and most kubeconfig servers are IP addresses). Stream() reads a
// long answer (a watch) line by line as it arrives: its deadline covers everything up to the
// answer's head, then an idle timeout bounds each wait for more bytes, a line longer than
// its cap is an error, and a StreamCancel stops it from another thread without waiting for
// the server. Thread-safe: calls may run on several threads at once.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "kube/config.h"

namespace hcashare::kube {

// HTTP methods the client sends.
enum class Verb { kGet, kPost, kPut, kPatch, kDelete };

// "GET", "POST", ...
const char* VerbName(Verb verb);

// The kinds of PATCH the API server takes.
enum class PatchType {
  kMerge,           // application/merge-patch+json (RFC 7386)
  kJson,            // application/json-patch+json (RFC 6902)
  kStrategicMerge,  // application/strategic-merge-patch+json (built-in types only)
  kApply,           // application/apply-patch+yaml: server-side apply (a JSON body is fine)
};

// The Content-Type for `type`.
const char* PatchContentType(PatchType type);

// "hcashare/<version> (<git describe>)", or with `component` in place of "hcashare".
std::string UserAgent(const std::string& component = "hcashare");

// How a RestClient bounds its calls.
struct RestOptions {
  std::chrono::milliseconds timeout{30000};      // per call, unless the Request says otherwise
  size_t max_response_bytes = size_t{64} << 20;  // body; a larger answer is an error
  std::string user_agent = UserAgent();
  // Client-side rate limit (kube/backoff.h): calls a second, and how many may be saved up;
  // qps <= 0 turns it off. A call waits for its slot within its timeout, or fails at once
  // (Unavailable) when the slot is further away.
  double qps = 5;
  int burst = 10;
  // Connections kept open after a call for the next ones (HTTP keep-alive), which then skip
  // the TCP and TLS handshakes; 0 opens one per call. A kept connection unused for
  // `idle_connection_timeout` is closed instead of reused. Streams never keep theirs.
  size_t max_idle_connections = 2;
  std::chrono::milliseconds idle_connection_timeout{30000};
  // How often, at most, a new connection checks the CA and client certificate files (the
  // config's ca_file, client_cert_file, client_key_file) for a change; changed files that
  // load are used by the connections that follow (a CA rotation, a renewed certificate).
  std::chrono::milliseconds credential_check_interval{1000};
};

// Stops a RestClient::Stream() (or a Do()) from another thread, promptly: the connection is
// closed without waiting for the server. Guards one call at a time; once cancelled it stays
// so, and a call started with it afterwards fails at once. Thread-safe.
class StreamCancel {
 public:
  // Cancels the call it guards, now or when it starts.
  void Cancel();
  // True after Cancel().
  bool cancelled() const;

  // For the client: registers how to stop the running call; false when cancelled already.
  bool Attach(std::function<void()> stop);
  // For the client: the call is over (`stop` is not called any more once this returns).
  void Detach();

 private:
  mutable std::mutex mu_;
  bool cancelled_ = false;
  std::function<void()> stop_;
};

// One request.
struct Request {
  Verb verb = Verb::kGet;
  // Below the server's base path: "/api/v1/namespaces/ns/pods?limit=5". Must start with '/'
  // and hold no space or control character.
  std::string path;
  std::string body;                               // sent when not empty
  std::string content_type = "application/json";  // of the body
  std::chrono::milliseconds timeout{0};           // 0: RestOptions::timeout
  StreamCancel* cancel = nullptr;                 // optional; must outlive the call
};

// One HTTP answer, whatever its code.
struct Response {
  int status = 0;
  std::string body;
  std::string content_type;
  std::string retry_after;  // the Retry-After header, or ""
  // Warning headers (at most kMaxWarnings, each cut to 1 KiB); each is also logged.
  std::vector<std::string> warnings;
  static constexpr size_t kMaxWarnings = 16;  // Warning headers kept

  // A 2xx answer.
  bool ok() const { return status >= 200 && status <= 299; }
};

// How a Stream() reads its answer.
struct StreamOptions {
  // No byte for this long once the answer has started: an error (Unavailable).
  std::chrono::milliseconds idle_timeout{60000};
  // A line (one watch event) longer than this: an error (FailedPrecondition).
  size_t max_line_bytes = size_t{4} << 20;
  // true: the body goes to the callback in the pieces it arrives in, newlines or not
  // (max_line_bytes unused; the callback bounds what it keeps), for answers parsed as they
  // stream (kube/list_stream.h).
  bool raw_pieces = false;
};

class RestClient {
 public:
  // A client for `config`. InvalidArgument when its CA, client certificate or key cannot be
  // loaded (or the key does not match the certificate).
  static Result<std::unique_ptr<RestClient>> Create(const ClusterConfig& config,
                                                    RestOptions options = {});
  ~RestClient();
  RestClient(const RestClient&) = delete;
  RestClient& operator=(const RestClient&) = delete;

  // Sends `request` and returns the answer, whatever its HTTP code. Errors: InvalidArgument
  // for a bad path; Unavailable when the server cannot be reached, the TLS handshake or
  // certificate verification fails, or the connection breaks; Unavailable naming the
  // timeout when the deadline passes, or "cancelled" when request.cancel is;
  // FailedPrecondition when the answer exceeds the cap.
  // Messages name the verb, the path and the server.
  Result<Response> Do(const Request& request);

  // The verbs: Do(), then a non-2xx answer becomes its ApiError's Status (kube/status_error.h:
  // IsNotFound(), IsConflict(), HttpCodeOf() ...).
  Result<Response> Get(const std::string& path);
  Result<Response> Post(const std::string& path, const std::string& body);
  Result<Response> Put(const std::string& path, const std::string& body);
  Result<Response> Patch(const std::string& path, const std::string& body, PatchType type);
  // `body` (DeleteOptions, e.g. with preconditions) may be empty.
  Result<Response> Delete(const std::string& path, const std::string& body = "");
  // Do(), then the same conversion as the verbs.
  Result<Response> Call(const Request& request);

  // Sends `request` and hands each newline-terminated line of a 2xx answer's body (without
  // the newline; empty lines skipped) to `on_line` as it arrives, until the server ends the
  // answer (OK) or `on_line` returns false (OK). request.timeout (or RestOptions::timeout)
  // bounds everything up to the answer's head; then options.idle_timeout bounds each read.
  // Errors: a non-2xx answer as by Call(); Unavailable when the connection breaks, the answer
  // ends inside a line (a part line is never delivered), no byte arrives within the idle
  // timeout, or request.cancel is cancelled ("cancelled"); FailedPrecondition for a line
  // longer than options.max_line_bytes.
  Status Stream(const Request& request, const StreamOptions& options,
                const std::function<bool(std::string_view line)>& on_line);

  class Impl;  // the TLS context and credentials (rest.cc)

 private:
  explicit RestClient(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace hcashare::kube
