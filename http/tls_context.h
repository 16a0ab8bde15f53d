// The OpenSSL settings and key loading that every TLS endpoint of hcashare shares: the
// webhook's server (http/tls_server.h) and the API client (kube/rest.h).
#pragma once

#include <boost/asio/ssl/context.hpp>
#include <string>

#include "common/status.h"

namespace hcashare::tls {

// The last OpenSSL error queued on this thread as text ("" when none); clears the queue.
std::string TakeOpenSslError();

// TLS 1.2 or later only (no SSLv2/3, TLS 1.0/1.1), with OpenSSL's usual workarounds.
Status SetModernDefaults(boost::asio::ssl::context* ctx);

// Loads a certificate chain and its private key (both PEM) into `ctx` and checks that they
// match. InvalidArgument saying which part is wrong and OpenSSL's reason ("the <role>
// certificate: ...", "the <role> key: ...", "the <role> key does not match the <role>
// certificate: ..."); `role` is e.g. "client", or "" for none.
Status UseKeyPair(boost::asio::ssl::context* ctx, const std::string& cert_pem,
                  const std::string& key_pem, const std::string& role = "");

}  // namespace hcashare::tls
