// The OpenSSL settings and key loading that every TLS endpoint of hcashare shares: the
// webhook's server (http/tls_server.h) and the API client (kube/rest.h).
#pragma once

#include <boost/asio/ssl/context.hpp>
#include <cstdint>
#include <optional>
#include <string>

#include "common/status.h"

namespace hcashare::tls {

// The last OpenSSL error queued on this thread as text ("" when none); clears the queue.
std::string TakeOpenSslError();

// TLS 1.2 or later only (no SSLv2/3, TLS 1.0/1.1), with OpenSSL's usual workarounds.
Status SetModernDefaults(boost::asio::ssl::context* ctx);

// A server's policy on top of SetModernDefaults: for TLS 1.2 only ECDHE key exchange with
// AEAD ciphers (AES-GCM, ChaCha20-Poly1305; TLS 1.3's suites are all of that kind), the
// server's order preferred, no renegotiation, no compression.
Status SetServerPolicy(boost::asio::ssl::context* ctx);

// The notAfter of the certificate loaded in `ctx` (its leaf), as seconds since the epoch;
// nullopt when there is none or it cannot be read.
std::optional<int64_t> CertificateNotAfter(boost::asio::ssl::context* ctx);

// Loads a certificate chain and its private key (both PEM) into `ctx` and checks that they
// match. InvalidArgument saying which part is wrong and OpenSSL's reason ("the <role>
// certificate: ...", "the <role> key: ...", "the <role> key does not match the <role>
// certificate: ..."); `role` is e.g. "client", or "" for none.
Status UseKeyPair(boost::asio::ssl::context* ctx, const std::string& cert_pem,
                  const std::string& key_pem, const std::string& role = "");

}  // namespace hcashare::tls
