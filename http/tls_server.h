// HttpsServer: HttpServer (http/server.h) over TLS, for endpoints the API server calls, such
// as an admission webhook's /mutate. The same bounds apply, the TLS handshake counting
// against the request's deadline, so a client that sends garbage or stalls mid-handshake
// holds only its own connection until its deadline or its eviction.
//
// The certificate and key are read from files and read again when they change (a Secret
// rotated by cert-manager is replaced under its mount), checked at most once a second as
// connections arrive: a connection is served with the pair that was current when it was
// accepted. A changed pair that does not load (a key that does not match the certificate,
// a half-written file) is logged and the previous pair kept until the files change again.
// TLS 1.2 or later; for TLS 1.2 only ECDHE with AEAD ciphers, and no renegotiation
// (tls::SetServerPolicy). Lives in its own library (hcashare_https) so that plain servers do not
// link OpenSSL.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "common/status.h"
#include "http/server.h"

namespace hcashare {

// Where the server's certificate chain and private key are (PEM).
struct TlsFiles {
  std::string cert_file;  // the certificate, then its chain
  std::string key_file;   // the private key matching it
  // Not empty: clients must present a certificate that one of these CAs (PEM) signed, or
  // the handshake fails. Read again with the pair when the pair's files change.
  std::string client_ca_file;
};

class HttpsServer {
 public:
  // Loads `files` (an error naming the file and what is wrong when they do not load), then
  // listens on `address` (as HttpServer::Start takes it) and starts the threads.
  static Result<std::unique_ptr<HttpsServer>> Start(const std::string& address, TlsFiles files,
                                                    HttpServer::RequestHandler handler,
                                                    HttpServerOptions options = {});
  // Stops the threads promptly and closes the sockets.
  ~HttpsServer();
  HttpsServer(const HttpsServer&) = delete;
  HttpsServer& operator=(const HttpsServer&) = delete;

  // The port listened on.
  int port() const;
  // From now on every answer closes its connection (Connection: close), so that clients
  // (the API server) take their next request elsewhere while this one shuts down.
  void StartDraining();
  // Stops accepting and waits up to `budget` until every request already read is answered;
  // true when all were. Then the destructor drops nothing that was asked.
  bool Drain(std::chrono::milliseconds budget);
  // Certificate pairs loaded after the first.
  uint64_t reloads() const;
  // When the serving certificate in use expires (notAfter, seconds since the epoch; 0 when
  // unknown). Follows reloads.
  int64_t certificate_not_after() const;
  // Changed pairs that failed to load.
  uint64_t reload_failures() const;

  class Impl;  // the Asio objects (tls_server.cc)

 private:
  explicit HttpsServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace hcashare
