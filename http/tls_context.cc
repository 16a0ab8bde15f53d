#include "http/tls_context.h"

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <ctime>

#include <array>
#include <boost/asio/buffer.hpp>

namespace hcashare::tls {

namespace ssl = boost::asio::ssl;
using boost::system::error_code;

std::string TakeOpenSslError() {
  unsigned long last = 0;
  while (unsigned long e = ERR_get_error()) last = e;
  if (last == 0) return "";
  std::array<char, 256> buf{};
  ERR_error_string_n(last, buf.data(), buf.size());
  return buf.data();
}

Status SetModernDefaults(ssl::context* ctx) {
  error_code ec;
  ctx->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 |
                       ssl::context::no_sslv3 | ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1,
                   ec);
  if (ec) return Status::Internal("TLS options: " + ec.message());
  return Status::Ok();
}

Status SetServerPolicy(ssl::context* ctx) {
  SSL_CTX* native = ctx->native_handle();
  // ECDHE (forward secrecy) with an AEAD cipher, for either key type.
  if (SSL_CTX_set_cipher_list(native, "ECDHE+AESGCM:ECDHE+CHACHA20") != 1) {
    return Status::Internal("TLS cipher list: " + TakeOpenSslError());
  }
  SSL_CTX_set_options(
      native, SSL_OP_NO_RENEGOTIATION | SSL_OP_CIPHER_SERVER_PREFERENCE | SSL_OP_NO_COMPRESSION);
  return Status::Ok();
}

std::optional<int64_t> CertificateNotAfter(ssl::context* ctx) {
  X509* cert = SSL_CTX_get0_certificate(ctx->native_handle());
  if (cert == nullptr) return std::nullopt;
  const ASN1_TIME* not_after = X509_get0_notAfter(cert);
  struct tm tm {};
  if (not_after == nullptr || ASN1_TIME_to_tm(not_after, &tm) != 1) return std::nullopt;
  return static_cast<int64_t>(timegm(&tm));
}

Status UseKeyPair(ssl::context* ctx, const std::string& cert_pem, const std::string& key_pem,
                  const std::string& role) {
  const std::string cert = role.empty() ? "the certificate" : "the " + role + " certificate";
  const std::string key = role.empty() ? "the key" : "the " + role + " key";
  error_code ec;
  auto fail = [&](const std::string& what) {
    std::string why = TakeOpenSslError();
    if (why.empty()) why = ec.message();
    return Status::InvalidArgument(what + ": " + why);
  };
  if (ctx->use_certificate_chain(boost::asio::buffer(cert_pem), ec)) return fail(cert);
  if (ctx->use_private_key(boost::asio::buffer(key_pem), ssl::context::pem, ec)) {
    return fail(key);
  }
  if (SSL_CTX_check_private_key(ctx->native_handle()) != 1) {
    return fail(key + " does not match " + cert);
  }
  return Status::Ok();
}

}  // namespace hcashare::tls
