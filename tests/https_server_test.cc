// Tests for http/tls_server (HttpsServer): requests over TLS through the project's own API
// client (kube::RestClient, which verifies the server certificate), POST bodies and their
// cap, certificate rotation (a new pair served without a restart, a broken pair refused
// while the old one is kept), and hostile clients (TLS garbage, stalled handshakes) that
// must not keep others from being answered.
#include "http/tls_server.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <sys/socket.h>

#include <atomic>
#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <string>
#include <vector>

#include "common/temp_dir.h"
#include "kube/rest.h"
#include "tests/kube_test_util.h"
#include "tests/metrics_test_util.h"
#include "tests/test_util.h"

namespace hcashare {
namespace {

using std::chrono::milliseconds;
using ::testing::HasSubstr;

// Writes `text` to `path` through a rename, as a Secret volume update replaces files.
void Replace(const std::string& path, const std::string& text) {
  testing::WriteText(path + ".tmp", text);
  ASSERT_EQ(std::rename((path + ".tmp").c_str(), path.c_str()), 0) << path;
}

class HttpsServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    files_.cert_file = dir_.path() + "/tls.crt";
    files_.key_file = dir_.path() + "/tls.key";
    auto pair = testing::SharedPki().IssueServer("webhook", {"IP:127.0.0.1"});
    ASSERT_TRUE(pair.ok()) << pair.status().ToString();
    Replace(files_.cert_file, pair->cert_pem);
    Replace(files_.key_file, pair->key_pem);
  }

  void Start(HttpServerOptions options = Options()) {
    auto s = HttpsServer::Start(
        "127.0.0.1:0", files_,
        [this](const HttpRequest& r) {
          ++handled_;
          HttpResponse out;
          out.content_type = "application/json";
          out.body = r.method + " " + r.path + " " + r.query + " " + r.content_type + " " +
                     std::to_string(r.body.size());
          return out;
        },
        std::move(options));
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    server_ = std::move(s).value();
  }

  static HttpServerOptions Options() {
    HttpServerOptions o;
    o.max_body_bytes = 64 * 1024;
    o.io_timeout = milliseconds(1000);
    o.worker_paths = {"/mutate"};
    o.worker_threads = 2;
    return o;
  }

  // A client that trusts `ca_pem` only.
  std::unique_ptr<kube::RestClient> Client(const std::string& ca_pem) {
    return testing::LoopbackClient(server_->port(), ca_pem, milliseconds(3000));
  }

  static Result<kube::Response> Post(kube::RestClient* client, const std::string& body) {
    kube::Request r;
    r.verb = kube::Verb::kPost;
    r.path = "/mutate?timeout=5s";
    r.body = body;
    return client->Do(r);
  }

  TempDir dir_;
  TlsFiles files_;
  std::atomic<int> handled_{0};
  std::unique_ptr<HttpsServer> server_;  // last: stopped before the members the handler uses
};

TEST_F(HttpsServerTest, ServesPostAndGetOverTls) {
  Start();
  auto client = Client(testing::SharedPki().ca_pem());
  auto r = Post(client.get(), std::string(1000, 'x'));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body, "POST /mutate timeout=5s application/json 1000");
  EXPECT_EQ(r->content_type, "application/json");
  auto g = client->Do(kube::Request{kube::Verb::kGet, "/healthz", "", "", milliseconds(0)});
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_EQ(g->body, "GET /healthz   0");  // no query, no Content-Type, no body
}

// The answer is 413, sent as soon as the head announces too much; the client may see the
// connection closed under its unsent body instead. Either way the handler never runs.
TEST_F(HttpsServerTest, BodyOverTheCapIs413AndNotHandled) {
  Start();
  auto client = Client(testing::SharedPki().ca_pem());
  auto r = Post(client.get(), std::string(64 * 1024 + 1, 'x'));
  if (r.ok()) {
    EXPECT_EQ(r->status, 413);
  }
  EXPECT_EQ(handled_.load(), 0);
  auto exact = Post(client.get(), std::string(64 * 1024, 'x'));
  ASSERT_TRUE(exact.ok()) << exact.status().ToString();
  EXPECT_EQ(exact->status, 200);
}

TEST_F(HttpsServerTest, StartFailsClearlyWithoutItsFiles) {
  TlsFiles missing{dir_.path() + "/absent.crt", files_.key_file, ""};
  auto s =
      HttpsServer::Start("127.0.0.1:0", missing, [](const HttpRequest&) { return HttpResponse{}; });
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.status().message(), HasSubstr("absent.crt"));

  auto other = testing::SharedPki().IssueServer("other", {"IP:127.0.0.1"});
  ASSERT_TRUE(other.ok());
  Replace(files_.key_file, other->key_pem);  // the key of another certificate
  auto mismatched =
      HttpsServer::Start("127.0.0.1:0", files_, [](const HttpRequest&) { return HttpResponse{}; });
  ASSERT_FALSE(mismatched.ok());
  EXPECT_THAT(mismatched.status().message(), HasSubstr("key values mismatch"));
}

// Issue 34: anyone who could reach the webhook could POST AdmissionReviews (a
// cross-namespace oracle for NADs, and a way to tie up its workers). With a client CA, only
// a client whose certificate that CA signed is served; others fail the handshake, before
// any handler runs. A CA file that is not a certificate fails the start, naming it.
TEST_F(HttpsServerTest, AClientCaAdmitsOnlyItsClients) {
  files_.client_ca_file = dir_.path() + "/client-ca.crt";
  Replace(files_.client_ca_file, testing::SharedPki().ca_pem());
  Start();
  auto anonymous = Client(testing::SharedPki().ca_pem());
  ASSERT_NE(anonymous, nullptr);
  auto refused = Post(anonymous.get(), "{}");
  EXPECT_FALSE(refused.ok() && refused->status == 200);
  EXPECT_EQ(handled_.load(), 0);

  auto apiserver =
      testing::LoopbackClientWithCertificate(server_->port(), "kube-apiserver", milliseconds(3000));
  ASSERT_NE(apiserver, nullptr);
  auto served = Post(apiserver.get(), "{}");
  ASSERT_TRUE(served.ok()) << served.status().ToString();
  EXPECT_EQ(served->status, 200);
  EXPECT_EQ(handled_.load(), 1);

  server_.reset();
  Replace(files_.client_ca_file, "not a certificate\n");
  auto bad =
      HttpsServer::Start("127.0.0.1:0", files_, [](const HttpRequest&) { return HttpResponse{}; });
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("client-ca.crt"));
}

// cert-manager renews the Secret: connections accepted after the change get the new pair,
// without a restart.
TEST_F(HttpsServerTest, RotatedCertificateIsServedWithoutRestart) {
  Start();
  auto pki2 = fake::TestPki::Create("rotated-ca");
  ASSERT_TRUE(pki2.ok());
  auto pair = (*pki2)->IssueServer("webhook", {"IP:127.0.0.1"});
  ASSERT_TRUE(pair.ok());
  auto new_client = Client((*pki2)->ca_pem());
  EXPECT_FALSE(Post(new_client.get(), "{}").ok());  // the old certificate is not trusted
  Replace(files_.key_file, pair->key_pem);
  Replace(files_.cert_file, pair->cert_pem);
  EXPECT_TRUE(testing::WaitUntil(
      [&] {
        auto r = Post(new_client.get(), "{}");
        return r.ok() && r->status == 200;
      },
      milliseconds(5000)));
  EXPECT_EQ(server_->reloads(), 1u);
  EXPECT_EQ(server_->reload_failures(), 0u);
}

// A rotation caught half-way (the new certificate, the old key) is refused; the previous
// pair keeps serving until the files change again.
TEST_F(HttpsServerTest, BrokenRotationKeepsThePreviousPair) {
  Start();
  auto old_client = Client(testing::SharedPki().ca_pem());
  auto other = testing::SharedPki().IssueServer("other", {"IP:127.0.0.1"});
  ASSERT_TRUE(other.ok());
  Replace(files_.cert_file, other->cert_pem);  // the key stays the old one
  EXPECT_TRUE(testing::WaitUntil(
      [&] {
        auto r = Post(old_client.get(), "{}");
        EXPECT_TRUE(r.ok() && r->status == 200) << (r.ok() ? r->body : r.status().ToString());
        return server_->reload_failures() >= 1;
      },
      milliseconds(5000)));
  EXPECT_EQ(server_->reloads(), 0u);
  Replace(files_.key_file, other->key_pem);  // the rotation completes
  EXPECT_TRUE(testing::WaitUntil(
      [&] {
        auto r = Post(old_client.get(), "{}");
        return r.ok() && r->status == 200 && server_->reloads() == 1;
      },
      milliseconds(5000)));
}

// With keep-alive, one TLS connection carries request after request (as the API server
// sends them), each answered in turn: one handshake, not one per request.
TEST_F(HttpsServerTest, KeepAliveCarriesSeveralRequestsOverOneHandshake) {
  HttpServerOptions o = Options();
  o.keep_alive = true;
  Start(o);
  namespace asio = boost::asio;
  namespace beast = boost::beast;
  namespace bhttp = beast::http;
  asio::io_context io;
  asio::ssl::context ctx(asio::ssl::context::tls_client);
  ctx.add_certificate_authority(asio::buffer(testing::SharedPki().ca_pem()));
  ctx.set_verify_mode(asio::ssl::verify_peer);
  beast::ssl_stream<beast::tcp_stream> stream(io, ctx);
  beast::get_lowest_layer(stream).expires_after(std::chrono::seconds(10));
  beast::get_lowest_layer(stream).connect(asio::ip::tcp::endpoint(
      asio::ip::make_address("127.0.0.1"), static_cast<unsigned short>(server_->port())));
  stream.handshake(asio::ssl::stream_base::client);
  beast::flat_buffer buffer;
  for (int i = 0; i < 3; ++i) {
    bhttp::request<bhttp::string_body> req(bhttp::verb::post, "/mutate", 11);
    req.set(bhttp::field::host, "127.0.0.1");
    req.body() = std::string(10 + i, 'x');
    req.prepare_payload();
    bhttp::write(stream, req);
    bhttp::response<bhttp::string_body> res;
    bhttp::read(stream, buffer, res);
    EXPECT_EQ(res.result_int(), 200);
    EXPECT_EQ(res.body(), "POST /mutate   " + std::to_string(10 + i));
    EXPECT_TRUE(res.keep_alive());
  }
  EXPECT_EQ(handled_.load(), 3);
}

// Plain HTTP and random bytes on the TLS port get the connection closed, not an answer.
TEST_F(HttpsServerTest, TlsGarbageIsDropped) {
  Start();
  testing::Reply plain = testing::HttpGet(server_->port(), "/healthz");
  EXPECT_EQ(plain.status, 0);
  std::string junk(4096, '\x16');
  for (size_t i = 0; i < junk.size(); i += 7) junk[i] = static_cast<char>(i);
  testing::Reply garbage = testing::Exchange(server_->port(), junk);
  EXPECT_EQ(garbage.status, 0);
  EXPECT_EQ(handled_.load(), 0);
  auto client = Client(testing::SharedPki().ca_pem());
  auto r = Post(client.get(), "{}");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->status, 200);
}

// More clients than connection slots, each stalled before or during its handshake: a real
// client is still answered at once (the oldest stalled connection gives way).
TEST_F(HttpsServerTest, StalledHandshakesDoNotBlockOthers) {
  HttpServerOptions o = Options();
  o.io_timeout = milliseconds(5000);  // longer than the test: only eviction can help
  o.max_connections = 16;
  Start(o);
  std::vector<UniqueFd> stalled;
  for (int i = 0; i < 40; ++i) {
    UniqueFd fd = testing::Connect(server_->port());
    ASSERT_TRUE(fd.valid());
    if (i % 2 == 0) {
      const char hello_start[] = "\x16\x03\x01\x02\x00\x01";  // a ClientHello cut short
      ::send(fd.get(), hello_start, sizeof(hello_start) - 1, MSG_NOSIGNAL);
    }
    stalled.push_back(std::move(fd));
  }
  auto client = Client(testing::SharedPki().ca_pem());
  for (int i = 0; i < 5; ++i) {
    const auto start = std::chrono::steady_clock::now();
    auto r = Post(client.get(), "{}");
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(r->status, 200);
    EXPECT_LT(std::chrono::steady_clock::now() - start, milliseconds(2000));
  }
}

// A blocking OpenSSL client over TLS 1.2 offering only `ciphers`, connected to `port`; the
// SSL object after a handshake (null when the handshake failed). Frees everything itself.
class Tls12Client {
 public:
  Tls12Client(int port, const char* ciphers) : ctx_(SSL_CTX_new(TLS_client_method())) {
    SSL_CTX_set_max_proto_version(ctx_, TLS1_2_VERSION);
    SSL_CTX_set_cipher_list(ctx_, ciphers);
    fd_ = testing::Connect(port);
    ssl_ = SSL_new(ctx_);
    SSL_set_fd(ssl_, fd_.get());
    connected_ = SSL_connect(ssl_) == 1;
  }
  ~Tls12Client() {
    SSL_free(ssl_);
    SSL_CTX_free(ctx_);
  }
  bool connected() const { return connected_; }
  SSL* ssl() { return ssl_; }

 private:
  SSL_CTX* ctx_;
  UniqueFd fd_;
  SSL* ssl_ = nullptr;
  bool connected_ = false;
};

// Issue 34, part 7: OpenSSL's default ciphers and renegotiation. For TLS 1.2 only ECDHE
// with an AEAD cipher is accepted (a client offering only CBC ciphers fails the handshake;
// the test key is ECDSA, so there is no static RSA exchange to offer), and a client's
// renegotiation is refused.
TEST_F(HttpsServerTest, OnlyEcdheAeadCiphersAndNoRenegotiation) {
  Start();
  EXPECT_FALSE(
      Tls12Client(server_->port(), "ECDHE-ECDSA-AES128-SHA:ECDHE-RSA-AES128-SHA").connected());
  EXPECT_FALSE(Tls12Client(server_->port(), "ECDHE-ECDSA-AES256-SHA384").connected());
  Tls12Client good(server_->port(),
                   "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:"
                   "ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305");
  ASSERT_TRUE(good.connected());
  EXPECT_THAT(SSL_get_cipher_name(good.ssl()), ::testing::HasSubstr("ECDHE"));
  // The client asks to renegotiate: the server refuses, so the client's handshake fails.
  // (OpenSSL 3 refuses client-initiated renegotiation by default too; the server's
  // SSL_OP_NO_RENEGOTIATION keeps it so whatever the build, and it never starts one.)
  ASSERT_EQ(SSL_renegotiate(good.ssl()), 1);
  EXPECT_NE(SSL_do_handshake(good.ssl()), 1);
  // TLS 1.3 (the API server's usual) is served as before.
  auto client = Client(testing::SharedPki().ca_pem());
  auto r = Post(client.get(), "{}");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->status, 200);
}

// Issue 34, part 7: no expiry metric. The server reports its certificate's notAfter, and the
// new one after a rotation.
TEST_F(HttpsServerTest, TheCertificatesExpiryIsReportedAndFollowsRotation) {
  Start();
  auto not_after = [](const std::string& pem) -> int64_t {
    BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
    X509* x = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr);
    BIO_free(bio);
    if (x == nullptr) return -1;
    struct tm tm {};
    const int ok = ASN1_TIME_to_tm(X509_get0_notAfter(x), &tm);
    X509_free(x);
    return ok == 1 ? static_cast<int64_t>(timegm(&tm)) : -1;
  };
  const int64_t first = not_after(testing::ReadTextFile(files_.cert_file));
  ASSERT_GT(first, static_cast<int64_t>(std::time(nullptr)));
  EXPECT_EQ(server_->certificate_not_after(), first);
  // The test CA's certificates expire a day after they are made: one made a second later
  // expires a second later.
  ASSERT_TRUE(testing::WaitUntil([&] { return std::time(nullptr) + 24 * 3600 > first; }));
  auto next = testing::SharedPki().IssueServer("rotated", {"IP:127.0.0.1"});
  ASSERT_TRUE(next.ok());
  Replace(files_.cert_file, next->cert_pem);
  Replace(files_.key_file, next->key_pem);
  const int64_t second = not_after(next->cert_pem);
  auto client = Client(testing::SharedPki().ca_pem());
  ASSERT_TRUE(testing::WaitUntil([&] {
    (void)Post(client.get(), "{}");  // a connection makes the server look at its files
    return server_->reloads() == 1;
  }));
  EXPECT_GT(second, first);
  EXPECT_EQ(server_->certificate_not_after(), second);
}

}  // namespace
}  // namespace hcashare
