// TestPki: a throw-away certificate authority made at test time with OpenSSL's API (no
// files shipped, no network): EC P-256 keys, a self-signed CA, and leaf certificates it
// signs for a server (with subjectAltNames) or a client. For tests only.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "common/status.h"

namespace hcashare::fake {

// A certificate and its private key, both PEM.
struct KeyPair {
  std::string cert_pem;
  std::string key_pem;
};

class TestPki {
 public:
  // A new CA named `common_name`.
  static Result<std::unique_ptr<TestPki>> Create(const std::string& common_name = "test-ca");
  ~TestPki();
  TestPki(const TestPki&) = delete;
  TestPki& operator=(const TestPki&) = delete;

  // The CA certificate (PEM), what clients trust.
  const std::string& ca_pem() const { return ca_.cert_pem; }

  // A server certificate for `alt_names`: "IP:127.0.0.1", "DNS:localhost", ...
  Result<KeyPair> IssueServer(const std::string& common_name,
                              const std::vector<std::string>& alt_names);
  // A client certificate (extendedKeyUsage clientAuth) for `common_name`.
  Result<KeyPair> IssueClient(const std::string& common_name);

  class Impl;  // the OpenSSL objects (test_pki.cc)

 private:
  explicit TestPki(std::unique_ptr<Impl> impl);
  Result<KeyPair> Issue(const std::string& common_name, const std::string& alt_names, bool server);
  std::unique_ptr<Impl> impl_;
  KeyPair ca_;
};

}  // namespace hcashare::fake
