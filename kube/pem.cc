#include "kube/pem.h"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <array>
#include <memory>

#include "http/tls_context.h"

namespace hcashare::kube {
namespace {

struct BioFree {
  void operator()(BIO* b) const { BIO_free(b); }
};
using BioPtr = std::unique_ptr<BIO, BioFree>;

BioPtr MemoryBio(const std::string& data) {
  return BioPtr(BIO_new_mem_buf(data.data(), static_cast<int>(data.size())));
}

// The 6-bit value of a base64 character, or -1.
int Base64Value(unsigned char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

}  // namespace

std::string EncodeBase64(std::string_view bytes) {
  std::string out(4 * ((bytes.size() + 2) / 3) + 1, '\0');
  const int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                reinterpret_cast<const unsigned char*>(bytes.data()),
                                static_cast<int>(bytes.size()));
  out.resize(static_cast<size_t>(n));
  return out;
}

Result<std::string> DecodeBase64(std::string_view text) {
  std::string out;
  out.reserve(text.size() / 4 * 3);
  uint32_t acc = 0;
  int bits = 0;
  size_t chars = 0;
  size_t padding = 0;
  for (unsigned char c : text) {
    if (c == ' ' || c == '\n' || c == '\r' || c == '\t') continue;
    ++chars;
    if (c == '=') {
      ++padding;
      continue;
    }
    const int v = Base64Value(c);
    if (v < 0 || padding > 0) {
      return Status::InvalidArgument(padding > 0 ? "invalid base64: data after '=' padding"
                                                 : "invalid base64: unexpected character");
    }
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((acc >> bits) & 0xff));
    }
  }
  if (padding > 2 || chars % 4 != 0) {
    return Status::InvalidArgument("invalid base64: bad length or padding");
  }
  return out;
}

Result<int> CountPemCertificates(const std::string& pem) {
  BioPtr bio = MemoryBio(pem);
  if (!bio) return Status::Internal("out of memory");
  int count = 0;
  while (X509* cert = PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr)) {
    X509_free(cert);
    ++count;
  }
  // The loop ends at the end of the data (PEM_R_NO_START_LINE) or at a bad block.
  const unsigned long err = ERR_peek_last_error();
  const bool at_end = ERR_GET_LIB(err) == ERR_LIB_PEM && ERR_GET_REASON(err) == PEM_R_NO_START_LINE;
  std::string detail = tls::TakeOpenSslError();
  if (err != 0 && !at_end) return Status::InvalidArgument("bad PEM certificate: " + detail);
  if (count == 0) return Status::InvalidArgument("no PEM certificate found");
  return count;
}

Status CheckPemPrivateKey(const std::string& pem) {
  BioPtr bio = MemoryBio(pem);
  if (!bio) return Status::Internal("out of memory");
  EVP_PKEY* key = PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr);
  if (key == nullptr) {
    return Status::InvalidArgument("no PEM private key found (" + tls::TakeOpenSslError() + ")");
  }
  EVP_PKEY_free(key);
  return Status::Ok();
}

}  // namespace hcashare::kube
