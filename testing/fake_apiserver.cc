#include "testing/fake_apiserver.h"

#include <openssl/ssl.h>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <deque>
#include <list>
#include <map>
#include <mutex>
#include <thread>
#include <utility>

#include "testing/test_pki.h"

namespace hcashare::fake {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
namespace ssl = boost::asio::ssl;
using tcp = asio::ip::tcp;
using boost::system::error_code;
using json = nlohmann::json;

constexpr size_t kMaxRequestBody = 4 << 20;
constexpr size_t kMaxSeen = 100;

// An answer: code, JSON body, optional Retry-After.
struct Reply {
  Reply(int c, json b, std::optional<int> ra = std::nullopt)
      : code(c), body(std::move(b)), retry_after(ra) {}
  int code = 200;
  json body;
  std::optional<int> retry_after;
  std::string warning;  // a Warning header, or ""
};

Reply Error(int code, const std::string& reason, const std::string& message) {
  return {code, FakeApiServer::StatusBody(code, reason, message), std::nullopt};
}

// A request path split into the collection it names and, for an object, its name.
struct Target {
  std::string collection;
  std::string name;  // "" for the collection itself
  std::string ns;    // the namespace in the path, or ""
};

std::vector<std::string> Split(const std::string& path) {
  std::vector<std::string> out;
  size_t i = 1;
  while (i <= path.size()) {
    size_t j = path.find('/', i);
    if (j == std::string::npos) j = path.size();
    out.push_back(path.substr(i, j - i));
    i = j + 1;
  }
  return out;
}

// /api/v1/[namespaces/<ns>/]<res>[/<name>] and /apis/<g>/<v>/... (see the file comment).
std::optional<Target> ParseTarget(const std::string& path) {
  std::vector<std::string> seg = Split(path);
  size_t prefix = 0;
  if (seg.size() >= 2 && seg[0] == "api") prefix = 2;
  if (seg.size() >= 3 && seg[0] == "apis") prefix = 3;
  if (prefix == 0 || seg.size() <= prefix) return std::nullopt;
  for (const std::string& s : seg) {
    if (s.empty()) return std::nullopt;
  }
  std::vector<std::string> rest(seg.begin() + static_cast<long>(prefix), seg.end());
  std::string base;
  for (size_t i = 0; i < prefix; ++i) base += "/" + seg[i];
  Target t;
  size_t res = 0;
  if (rest[0] == "namespaces" && rest.size() >= 3) {
    t.ns = rest[1];
    res = 2;
  }
  if (rest.size() > res + 2) return std::nullopt;  // subresources are not served
  for (size_t i = 0; i <= res; ++i) t.collection += "/" + rest[i];
  t.collection = base + t.collection;
  if (rest.size() == res + 2) t.name = rest[res + 1];
  return t;
}

std::string QueryParam(const std::string& query, const std::string& key) {
  size_t i = 0;
  while (i < query.size()) {
    size_t amp = query.find('&', i);
    if (amp == std::string::npos) amp = query.size();
    const std::string kv = query.substr(i, amp - i);
    if (kv.compare(0, key.size() + 1, key + "=") == 0) return kv.substr(key.size() + 1);
    i = amp + 1;
  }
  return "";
}

}  // namespace

json FakeApiServer::StatusBody(int code, const std::string& reason, const std::string& message) {
  return {{"kind", "Status"},    {"apiVersion", "v1"}, {"metadata", json::object()},
          {"status", "Failure"}, {"message", message}, {"reason", reason},
          {"code", code}};
}

class FakeApiServer::Impl {
 public:
  explicit Impl(FakeApiServerOptions options) : options_(std::move(options)) {}
  ~Impl() {
    io_.stop();
    if (thread_.joinable()) thread_.join();
  }

  Status Start(TestPki* pki) {
    ASSIGN_OR_RETURN(KeyPair server,
                     pki->IssueServer("fake-apiserver", {"IP:127.0.0.1", "DNS:localhost"}));
    error_code ec;
    ctx_.use_certificate_chain(asio::buffer(server.cert_pem), ec);
    if (!ec) ctx_.use_private_key(asio::buffer(server.key_pem), ssl::context::pem, ec);
    if (!ec && !options_.client_ca_pem.empty()) {
      ctx_.add_certificate_authority(asio::buffer(options_.client_ca_pem), ec);
      ctx_.set_verify_mode(ssl::verify_peer | ssl::verify_fail_if_no_peer_cert, ec);
    }
    if (ec) return Status::Internal("fake API server TLS setup: " + ec.message());
    const tcp::endpoint ep(asio::ip::make_address_v4("127.0.0.1"), 0);
    acceptor_.open(ep.protocol(), ec);
    if (!ec) acceptor_.bind(ep, ec);
    if (!ec) acceptor_.listen(64, ec);
    if (ec) return Status::Internal("fake API server listen: " + ec.message());
    port_ = acceptor_.local_endpoint().port();
    Accept();
    thread_ = std::thread([this] { io_.run(); });
    return Status::Ok();
  }

  int port() const { return port_; }

  // The answer to one request, nullopt to stall; Answer() runs under mu_.
  std::optional<Reply> Handle(SeenRequest req, bool client_cert_ok);
  std::optional<Reply> Answer(SeenRequest req, bool client_cert_ok);

  void Seed(const std::string& collection, json object) {
    std::lock_guard<std::mutex> lock(mu_);
    Store(collection, std::move(object));
  }

  mutable std::mutex mu_;
  FakeApiServerOptions options_;
  std::map<std::string, std::map<std::string, json>> store_;
  int64_t resource_version_ = 1;
  int uid_ = 0;
  std::deque<SeenRequest> seen_;
  size_t connections_ = 0;
  std::optional<Reply> injected_;
  int injected_count_ = 0;
  bool stall_ = false;
  std::string warning_;

 private:
  class Session;
  void Accept();

  // Stores `object` under its name with a new resourceVersion (a uid when new). Under mu_.
  json& Store(const std::string& collection, json object) {
    json& meta = object["metadata"];
    const std::string name = meta.value("name", "");
    auto& slot = store_[collection][name];
    if (slot.is_null() || !slot["metadata"].contains("uid")) {
      meta["uid"] = "uid-" + std::to_string(++uid_);
      meta["creationTimestamp"] = "2026-01-01T00:00:00Z";
    } else {
      meta["uid"] = slot["metadata"]["uid"];
    }
    meta["resourceVersion"] = std::to_string(++resource_version_);
    slot = std::move(object);
    return slot;
  }

  Reply Object(const Target& t, const SeenRequest& req, const std::string& query);
  Reply Collection(const Target& t, const SeenRequest& req);

  asio::io_context io_{1};
  ssl::context ctx_{ssl::context::tls_server};
  tcp::acceptor acceptor_{io_};
  std::list<std::shared_ptr<Session>> stalled_;  // kept open until the server stops
  int port_ = 0;
  std::thread thread_;
};

std::optional<Reply> FakeApiServer::Impl::Handle(SeenRequest req, bool client_cert_ok) {
  std::lock_guard<std::mutex> lock(mu_);
  std::optional<Reply> reply = Answer(std::move(req), client_cert_ok);
  if (reply) reply->warning = warning_;
  return reply;
}

std::optional<Reply> FakeApiServer::Impl::Answer(SeenRequest req, bool client_cert_ok) {
  seen_.push_back(req);
  if (seen_.size() > kMaxSeen) seen_.pop_front();
  if (stall_) return std::nullopt;
  if (!client_cert_ok && !options_.token.empty() &&
      req.authorization != "Bearer " + options_.token) {
    return Error(401, "Unauthorized", "Unauthorized");
  }
  if (injected_count_ > 0) {
    --injected_count_;
    return injected_;
  }
  const size_t q = req.target.find('?');
  const std::string path = req.target.substr(0, q);
  const std::string query = q == std::string::npos ? "" : req.target.substr(q + 1);
  std::optional<Target> t = ParseTarget(path);
  if (!t) return Error(404, "NotFound", "the server could not find the requested resource");
  return t->name.empty() ? Collection(*t, req) : Object(*t, req, query);
}

Reply FakeApiServer::Impl::Collection(const Target& t, const SeenRequest& req) {
  if (req.method == "GET") {
    json items = json::array();
    for (const auto& [name, obj] : store_[t.collection]) items.push_back(obj);
    return {200,
            {{"kind", "List"},
             {"apiVersion", "v1"},
             {"metadata", {{"resourceVersion", std::to_string(resource_version_)}}},
             {"items", std::move(items)}},
            std::nullopt};
  }
  if (req.method != "POST") return Error(405, "MethodNotAllowed", req.method + " on a collection");
  json obj = json::parse(req.body, nullptr, false);
  if (!obj.is_object()) return Error(400, "BadRequest", "the body is not a JSON object");
  json& meta = obj["metadata"];
  if (!meta.is_object()) return Error(422, "Invalid", "metadata must be an object");
  std::string name = meta.value("name", "");
  if (name.empty() && meta.contains("generateName")) {
    name = meta.value("generateName", "") + std::to_string(resource_version_ + 1);
  }
  if (name.empty()) return Error(422, "Invalid", "metadata.name: Required value");
  if (store_[t.collection].count(name)) {
    return Error(409, "AlreadyExists", "\"" + name + "\" already exists");
  }
  meta["name"] = name;
  if (!t.ns.empty()) meta["namespace"] = t.ns;
  return {201, Store(t.collection, std::move(obj)), std::nullopt};
}

Reply FakeApiServer::Impl::Object(const Target& t, const SeenRequest& req,
                                  const std::string& query) {
  auto& objects = store_[t.collection];
  auto it = objects.find(t.name);
  const bool apply = req.content_type == "application/apply-patch+yaml";
  const std::string not_found = "\"" + t.name + "\" not found";
  if (it == objects.end() && !(req.method == "PATCH" && apply)) {
    return Error(404, "NotFound", not_found);
  }
  if (req.method == "GET") return {200, it->second, std::nullopt};
  json body = req.body.empty() ? json() : json::parse(req.body, nullptr, false);
  if (body.is_discarded()) return Error(400, "BadRequest", "the body is not JSON");
  const std::string current =
      it == objects.end() ? "" : it->second["metadata"].value("resourceVersion", "");
  if (req.method == "DELETE") {
    const std::string want = body.is_object() && body.contains("preconditions")
                                 ? body["preconditions"].value("resourceVersion", current)
                                 : current;
    if (want != current) return Error(409, "Conflict", "precondition failed: resourceVersion");
    json gone = std::move(it->second);
    objects.erase(it);
    return {200, std::move(gone), std::nullopt};
  }
  if (req.method == "PUT") {
    if (!body.is_object()) return Error(400, "BadRequest", "the body is not a JSON object");
    const std::string sent = body["metadata"].value("resourceVersion", current);
    if (sent != current) {
      return Error(409, "Conflict",
                   "the object has been modified; please apply your changes to the latest "
                   "version and try again");
    }
    body["metadata"]["name"] = t.name;
    return {200, Store(t.collection, std::move(body)), std::nullopt};
  }
  if (req.method != "PATCH") return Error(405, "MethodNotAllowed", req.method);
  json patched = it == objects.end() ? json::object() : it->second;
  if (req.content_type == "application/merge-patch+json" || apply) {
    if (apply && QueryParam(query, "fieldManager").empty()) {
      return Error(400, "BadRequest", "fieldManager is required for apply patch");
    }
    patched.merge_patch(body);
  } else if (req.content_type == "application/json-patch+json") {
    try {
      patched = patched.patch(body);
    } catch (const json::exception& e) {
      return Error(422, "Invalid", e.what());
    }
  } else {
    return Error(415, "UnsupportedMediaType", "content type " + req.content_type);
  }
  patched["metadata"]["name"] = t.name;
  return {it == objects.end() ? 201 : 200, Store(t.collection, std::move(patched)), std::nullopt};
}

// One connection: handshake, one request, one answer (or none while stalling), close.
class FakeApiServer::Impl::Session : public std::enable_shared_from_this<Session> {
 public:
  Session(Impl* server, tcp::socket socket, ssl::context& ctx)
      : server_(server), stream_(std::move(socket), ctx) {
    parser_.header_limit(16 * 1024);
    parser_.body_limit(kMaxRequestBody);
  }

  void Start() {
    stream_.async_handshake(ssl::stream_base::server, [s = shared_from_this()](error_code ec) {
      if (!ec) s->Read();
    });
  }

 private:
  void Read() {
    bhttp::async_read(stream_, buffer_, parser_,
                      [s = shared_from_this()](error_code ec, size_t) { s->OnRead(ec); });
  }

  void OnRead(error_code ec) {
    if (ec) return;
    const auto& r = parser_.get();
    SeenRequest req{std::string(r.method_string()),
                    std::string(r.target()),
                    std::string(r[bhttp::field::authorization]),
                    std::string(r[bhttp::field::user_agent]),
                    std::string(r[bhttp::field::content_type]),
                    r.body()};
    X509* peer = SSL_get0_peer_certificate(stream_.native_handle());
    std::optional<Reply> reply = server_->Handle(std::move(req), peer != nullptr);
    if (!reply) {
      server_->stalled_.push_back(shared_from_this());  // I/O thread only
      return;
    }
    res_.result(static_cast<unsigned>(reply->code));
    res_.version(11);
    res_.set(bhttp::field::content_type, "application/json");
    if (reply->retry_after)
      res_.set(bhttp::field::retry_after, std::to_string(*reply->retry_after));
    if (!reply->warning.empty()) {
      res_.insert(bhttp::field::warning, reply->warning);
      res_.insert(bhttp::field::warning, reply->warning + " (again)");
    }
    res_.keep_alive(false);
    res_.body() = reply->body.dump();
    res_.prepare_payload();
    bhttp::async_write(stream_, res_, [s = shared_from_this()](error_code, size_t) {
      error_code ignored;
      beast::get_lowest_layer(s->stream_).socket().shutdown(tcp::socket::shutdown_both, ignored);
    });
  }

  Impl* const server_;
  beast::ssl_stream<beast::tcp_stream> stream_;
  beast::flat_buffer buffer_;
  bhttp::request_parser<bhttp::string_body> parser_;
  bhttp::response<bhttp::string_body> res_;
};

void FakeApiServer::Impl::Accept() {
  acceptor_.async_accept([this](error_code ec, tcp::socket socket) {
    if (ec == asio::error::operation_aborted) return;
    if (!ec) {
      {
        std::lock_guard<std::mutex> lock(mu_);
        ++connections_;
      }
      std::make_shared<Session>(this, std::move(socket), ctx_)->Start();
    }
    Accept();
  });
}

FakeApiServer::FakeApiServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
FakeApiServer::~FakeApiServer() = default;

Result<std::unique_ptr<FakeApiServer>> FakeApiServer::Start(TestPki* pki,
                                                            FakeApiServerOptions options) {
  auto impl = std::make_unique<Impl>(std::move(options));
  RETURN_IF_ERROR(impl->Start(pki));
  return std::unique_ptr<FakeApiServer>(new FakeApiServer(std::move(impl)));
}

int FakeApiServer::port() const { return impl_->port(); }

std::string FakeApiServer::url() const { return "https://127.0.0.1:" + std::to_string(port()); }

void FakeApiServer::SetToken(const std::string& token) {
  std::lock_guard<std::mutex> lock(impl_->mu_);
  impl_->options_.token = token;
}

void FakeApiServer::Seed(const std::string& collection, json object) {
  impl_->Seed(collection, std::move(object));
}

json FakeApiServer::Get(const std::string& collection, const std::string& name) const {
  std::lock_guard<std::mutex> lock(impl_->mu_);
  auto c = impl_->store_.find(collection);
  if (c == impl_->store_.end()) return nullptr;
  auto o = c->second.find(name);
  return o == c->second.end() ? json(nullptr) : o->second;
}

void FakeApiServer::InjectError(int code, const std::string& reason, int count,
                                std::optional<int> retry_after) {
  std::lock_guard<std::mutex> lock(impl_->mu_);
  impl_->injected_ = Reply{code, StatusBody(code, reason, "injected " + reason), retry_after};
  impl_->injected_count_ = count;
}

void FakeApiServer::SetWarning(const std::string& warning) {
  std::lock_guard<std::mutex> lock(impl_->mu_);
  impl_->warning_ = warning;
}

void FakeApiServer::SetStall(bool stall) {
  std::lock_guard<std::mutex> lock(impl_->mu_);
  impl_->stall_ = stall;
}

std::vector<SeenRequest> FakeApiServer::Requests() const {
  std::lock_guard<std::mutex> lock(impl_->mu_);
  return {impl_->seen_.begin(), impl_->seen_.end()};
}

size_t FakeApiServer::connections() const {
  std::lock_guard<std::mutex> lock(impl_->mu_);
  return impl_->connections_;
}

}  // namespace hcashare::fake
