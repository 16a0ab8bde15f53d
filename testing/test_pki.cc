#include "testing/test_pki.h"

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <utility>

#include "common/strings.h"

namespace hcashare::fake {
namespace {

struct Free {
  void operator()(EVP_PKEY* p) const { EVP_PKEY_free(p); }
  void operator()(X509* p) const { X509_free(p); }
  void operator()(BIO* p) const { BIO_free(p); }
  void operator()(X509_EXTENSION* p) const { X509_EXTENSION_free(p); }
};
using KeyPtr = std::unique_ptr<EVP_PKEY, Free>;
using CertPtr = std::unique_ptr<X509, Free>;

Status Failed(const std::string& what) {
  ERR_clear_error();
  return Status::Internal("test PKI: " + what + " failed");
}

KeyPtr NewKey() { return KeyPtr(EVP_EC_gen("P-256")); }

// The PEM text written by `write` into a memory BIO.
template <typename F>
Result<std::string> ToPem(F write) {
  std::unique_ptr<BIO, Free> bio(BIO_new(BIO_s_mem()));
  if (!bio || write(bio.get()) != 1) return Failed("PEM write");
  char* data = nullptr;
  const long n = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<size_t>(n));
}

Status AddExtension(X509* cert, X509* issuer, int nid, const std::string& value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  std::unique_ptr<X509_EXTENSION, Free> ext(X509V3_EXT_conf_nid(nullptr, &ctx, nid, value.c_str()));
  if (!ext || X509_add_ext(cert, ext.get(), -1) != 1) return Failed("extension " + value);
  return Status::Ok();
}

// A certificate for `key` named `cn`, valid from an hour ago for a day, not yet signed.
Result<CertPtr> NewCert(EVP_PKEY* key, const std::string& cn) {
  CertPtr cert(X509_new());
  if (!cert) return Failed("X509_new");
  X509_set_version(cert.get(), 2);
  unsigned char serial[16];
  RAND_bytes(serial, sizeof serial);
  serial[0] &= 0x7f;
  BIGNUM* bn = BN_bin2bn(serial, sizeof serial, nullptr);
  BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(cert.get()));
  BN_free(bn);
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), -3600);
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), 24 * 3600);
  X509_set_pubkey(cert.get(), key);
  X509_NAME* name = X509_get_subject_name(cert.get());
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>(cn.c_str()), -1, -1, 0);
  return cert;
}

}  // namespace

class TestPki::Impl {
 public:
  KeyPtr key;
  CertPtr cert;
};

TestPki::TestPki(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
TestPki::~TestPki() = default;

Result<std::unique_ptr<TestPki>> TestPki::Create(const std::string& common_name) {
  auto impl = std::make_unique<Impl>();
  impl->key = NewKey();
  if (!impl->key) return Failed("key generation");
  ASSIGN_OR_RETURN(impl->cert, NewCert(impl->key.get(), common_name));
  X509* c = impl->cert.get();
  X509_set_issuer_name(c, X509_get_subject_name(c));
  RETURN_IF_ERROR(AddExtension(c, c, NID_basic_constraints, "critical,CA:TRUE"));
  RETURN_IF_ERROR(AddExtension(c, c, NID_key_usage, "critical,keyCertSign,cRLSign"));
  RETURN_IF_ERROR(AddExtension(c, c, NID_subject_key_identifier, "hash"));
  if (X509_sign(c, impl->key.get(), EVP_sha256()) == 0) return Failed("CA signing");
  std::unique_ptr<TestPki> pki(new TestPki(std::move(impl)));
  ASSIGN_OR_RETURN(pki->ca_.cert_pem, ToPem([c](BIO* b) { return PEM_write_bio_X509(b, c); }));
  EVP_PKEY* k = pki->impl_->key.get();
  ASSIGN_OR_RETURN(pki->ca_.key_pem, ToPem([k](BIO* b) {
                     return PEM_write_bio_PrivateKey(b, k, nullptr, nullptr, 0, nullptr, nullptr);
                   }));
  return pki;
}

Result<KeyPair> TestPki::Issue(const std::string& common_name, const std::string& alt_names,
                               bool server) {
  KeyPtr key = NewKey();
  if (!key) return Failed("key generation");
  ASSIGN_OR_RETURN(CertPtr cert, NewCert(key.get(), common_name));
  X509* c = cert.get();
  X509* ca = impl_->cert.get();
  X509_set_issuer_name(c, X509_get_subject_name(ca));
  RETURN_IF_ERROR(AddExtension(c, ca, NID_basic_constraints, "critical,CA:FALSE"));
  RETURN_IF_ERROR(AddExtension(c, ca, NID_key_usage, "critical,digitalSignature"));
  RETURN_IF_ERROR(AddExtension(c, ca, NID_ext_key_usage, server ? "serverAuth" : "clientAuth"));
  RETURN_IF_ERROR(AddExtension(c, ca, NID_authority_key_identifier, "keyid:always"));
  if (!alt_names.empty()) {
    RETURN_IF_ERROR(AddExtension(c, ca, NID_subject_alt_name, alt_names));
  }
  if (X509_sign(c, impl_->key.get(), EVP_sha256()) == 0) return Failed("signing");
  KeyPair out;
  ASSIGN_OR_RETURN(out.cert_pem, ToPem([c](BIO* b) { return PEM_write_bio_X509(b, c); }));
  EVP_PKEY* k = key.get();
  ASSIGN_OR_RETURN(out.key_pem, ToPem([k](BIO* b) {
                     return PEM_write_bio_PrivateKey(b, k, nullptr, nullptr, 0, nullptr, nullptr);
                   }));
  return out;
}

Result<KeyPair> TestPki::IssueServer(const std::string& common_name,
                                     const std::vector<std::string>& alt_names) {
  return Issue(common_name, Join(alt_names, ","), true);
}

Result<KeyPair> TestPki::IssueClient(const std::string& common_name) {
  return Issue(common_name, "", false);
}

}  // namespace hcashare::fake
