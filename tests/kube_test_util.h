// Helpers shared by the kube_* tests: files in a temporary directory, a test PKI, and a fake
// API server with a client for it.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <memory>
#include <string>

#include "common/temp_dir.h"
#include "kube/config.h"
#include "kube/rest.h"
#include "testing/fake_apiserver.h"
#include "testing/test_pki.h"

namespace hcashare::testing {

// Writes `text` to `path` (replacing it).
inline void WriteText(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  ASSERT_TRUE(out.good()) << path;
}

// Base64 of `bytes` (the kubeconfig's *-data fields).
inline std::string Base64(const std::string& bytes) {
  static const char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  size_t i = 0;
  for (; i + 2 < bytes.size(); i += 3) {
    const unsigned v = (static_cast<unsigned char>(bytes[i]) << 16) |
                       (static_cast<unsigned char>(bytes[i + 1]) << 8) |
                       static_cast<unsigned char>(bytes[i + 2]);
    for (int s = 18; s >= 0; s -= 6) out += kAlphabet[(v >> s) & 63];
  }
  if (i < bytes.size()) {
    unsigned v = static_cast<unsigned char>(bytes[i]) << 16;
    if (i + 1 < bytes.size()) v |= static_cast<unsigned char>(bytes[i + 1]) << 8;
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    out += i + 1 < bytes.size() ? kAlphabet[(v >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

// A test PKI, made once per test binary (key generation is the slow part).
inline fake::TestPki& SharedPki() {
  static std::unique_ptr<fake::TestPki> pki = [] {
    auto p = fake::TestPki::Create();
    if (!p.ok()) std::abort();
    return std::move(*p);
  }();
  return *pki;
}

// A fake API server on loopback with the shared PKI (null, with a failure, when it fails).
inline std::unique_ptr<fake::FakeApiServer> StartFakeApiServer(
    fake::FakeApiServerOptions options = {}) {
  auto s = fake::FakeApiServer::Start(&SharedPki(), std::move(options));
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return s.ok() ? std::move(*s) : nullptr;
}

// A config for the HTTPS server at `url` trusting `ca_pem` only, with `token` ("" for none).
inline kube::ClusterConfig ConfigForUrl(const std::string& url, const std::string& ca_pem,
                                        const std::string& token = "") {
  kube::ClusterConfig c;
  c.server = url;
  c.url = kube::ParseServerUrl(c.server, "test").value();
  c.ca_pem = ca_pem;
  c.token = token;
  c.source = "test";
  return c;
}

// A config for `server` trusting the shared test CA, with the server's default token.
inline kube::ClusterConfig ConfigFor(const fake::FakeApiServer& server) {
  return ConfigForUrl(server.url(), SharedPki().ca_pem(), "test-token");
}

// A client of the HTTPS server on 127.0.0.1:`port` that trusts `ca_pem` only, without the
// client-side rate limit, with `timeout` per call.
inline std::unique_ptr<kube::RestClient> LoopbackClient(int port, const std::string& ca_pem,
                                                        std::chrono::milliseconds timeout) {
  kube::RestOptions o;
  o.qps = 0;
  o.timeout = timeout;
  auto c = kube::RestClient::Create(
      ConfigForUrl("https://127.0.0.1:" + std::to_string(port), ca_pem), o);
  EXPECT_TRUE(c.ok()) << c.status().ToString();
  return c.ok() ? std::move(*c) : nullptr;
}

// LoopbackClient trusting the shared test CA and presenting a client certificate it issued
// for `name` (as the API server presents one to a webhook); null, with a failure, on error.
inline std::unique_ptr<kube::RestClient> LoopbackClientWithCertificate(
    int port, const std::string& name, std::chrono::milliseconds timeout) {
  auto pair = SharedPki().IssueClient(name);
  EXPECT_TRUE(pair.ok()) << pair.status().ToString();
  if (!pair.ok()) return nullptr;
  kube::ClusterConfig c =
      ConfigForUrl("https://127.0.0.1:" + std::to_string(port), SharedPki().ca_pem());
  c.client_cert_pem = pair->cert_pem;
  c.client_key_pem = pair->key_pem;
  kube::RestOptions o;
  o.qps = 0;
  o.timeout = timeout;
  auto client = kube::RestClient::Create(c, o);
  EXPECT_TRUE(client.ok()) << client.status().ToString();
  return client.ok() ? std::move(*client) : nullptr;
}

// A kubeconfig naming the HTTPS server at `url` (its CA inline) and a bearer token.
inline std::string KubeconfigFor(const std::string& url, const std::string& ca_pem,
                                 const std::string& token = "test-token") {
  return "apiVersion: v1\nkind: Config\ncurrent-context: test\n"
         "clusters:\n- name: fake\n  cluster:\n    server: " +
         url + "\n    certificate-authority-data: " + Base64(ca_pem) +
         "\nusers:\n- name: u\n  user:\n    token: " + token +
         "\ncontexts:\n- name: test\n  context: {cluster: fake, user: u}\n";
}

// A client for `server` without the client-side rate limit.
inline std::unique_ptr<kube::RestClient> UnlimitedClient(const fake::FakeApiServer& server) {
  kube::RestOptions o;
  o.qps = 0;
  auto c = kube::RestClient::Create(ConfigFor(server), o);
  EXPECT_TRUE(c.ok()) << c.status().ToString();
  return c.ok() ? std::move(*c) : nullptr;
}

}  // namespace hcashare::testing
