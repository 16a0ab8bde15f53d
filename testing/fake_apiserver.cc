#include "testing/fake_apiserver.h"

#include <openssl/ssl.h>

#include <algorithm>
#include <utility>

#include "testing/fake_apiserver_impl.h"
#include "testing/test_pki.h"

namespace hcashare::fake {
namespace {

namespace asio = boost::asio;
namespace ssl = boost::asio::ssl;
using tcp = asio::ip::tcp;
using boost::system::error_code;
using json = nlohmann::json;

constexpr size_t kMaxSeen = 100;

Reply Error(int code, const std::string& reason, const std::string& message) {
  return ErrorReply(code, reason, message);
}

}  // namespace

Reply ErrorReply(int code, const std::string& reason, const std::string& message) {
  return {code, FakeApiServer::StatusBody(code, reason, message), std::nullopt};
}

json FakeApiServer::StatusBody(int code, const std::string& reason, const std::string& message) {
  return {{"kind", "Status"},    {"apiVersion", "v1"}, {"metadata", json::object()},
          {"status", "Failure"}, {"message", message}, {"reason", reason},
          {"code", code}};
}

FakeApiServer::Impl::~Impl() {
  io_.stop();
  if (thread_.joinable()) thread_.join();
  watchers_.clear();
  stalled_.clear();
}

Status FakeApiServer::Impl::Start(TestPki* pki) {
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

json& FakeApiServer::Impl::Store(const std::string& collection, json object) {
  json& meta = object["metadata"];
  const std::string name = meta.value("name", "");
  if (std::optional<Target> t = ParseTarget(collection); t && !t->ns.empty()) {
    meta["namespace"] = t->ns;  // as the API server fills it
  }
  auto& slot = store_[collection][name];
  const bool added = slot.is_null();
  if (slot.is_null() || !slot["metadata"].contains("uid")) {
    meta["uid"] = "uid-" + std::to_string(++uid_);
    meta["creationTimestamp"] = "2026-01-01T00:00:00Z";
  } else {
    meta["uid"] = slot["metadata"]["uid"];
  }
  meta["resourceVersion"] = std::to_string(++resource_version_);
  slot = std::move(object);
  Notify(collection, added ? "ADDED" : "MODIFIED", slot);
  return slot;
}

bool FakeApiServer::Impl::Remove(const std::string& collection, const std::string& name,
                                 json* gone) {
  auto c = store_.find(collection);
  if (c == store_.end()) return false;
  auto it = c->second.find(name);
  if (it == c->second.end()) return false;
  *gone = std::move(it->second);
  c->second.erase(it);
  // As the API server does: the deleted object carries the deletion's resourceVersion.
  (*gone)["metadata"]["resourceVersion"] = std::to_string(++resource_version_);
  Notify(collection, "DELETED", *gone);
  return true;
}

std::optional<Reply> FakeApiServer::Impl::Handle(SeenRequest req, bool client_cert_ok,
                                                 const std::shared_ptr<Session>& session) {
  std::lock_guard<std::mutex> lock(mu_);
  std::optional<Reply> reply = Answer(std::move(req), client_cert_ok, session);
  if (reply) reply->warning = warning_;
  return reply;
}

std::optional<Reply> FakeApiServer::Impl::Answer(SeenRequest req, bool client_cert_ok,
                                                 const std::shared_ptr<Session>& session) {
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
  if (std::optional<Reply> group = Groups(req.method, path)) return group;
  std::optional<Target> t = ParseTarget(path);
  if (!t) return Error(404, "NotFound", "the server could not find the requested resource");
  if (t->name.empty() && req.method == "GET") {
    const std::string watch = QueryParam(query, "watch");
    if (watch == "1" || watch == "true") return StartWatch(*t, query, session);
  }
  if (!t->subresource.empty()) return Subresource(*t, req, query);
  return t->name.empty() ? Collection(*t, req, query) : Object(*t, req, query);
}

// Pages: items in (collection, name) order; a continue token names the generation, the
// list's resourceVersion and the last key sent. Pages after the first read the store as it
// is then (not a snapshot) but report the first page's resourceVersion.
Reply FakeApiServer::Impl::List(const Target& t, const std::string& query) {
  Selection sel;
  if (std::string bad = sel.Parse(t, query); !bad.empty()) return Error(400, "BadRequest", bad);
  const std::string limit_text = QueryParam(query, "limit");
  const long limit = limit_text.empty() ? 0 : std::strtol(limit_text.c_str(), nullptr, 10);
  std::string rv = std::to_string(resource_version_);
  std::string after;  // "collection|name" of the last item sent
  if (const std::string token = QueryParam(query, "continue"); !token.empty()) {
    std::vector<std::string> parts = SplitOn(token, ':');
    if (parts.size() < 3 || parts[0] != "g" + std::to_string(continue_generation_)) {
      return Error(410, "Expired",
                   "The provided continue parameter is too old to display a consistent list "
                   "result. You can start a new list without the continue parameter.");
    }
    rv = parts[1];
    after = token.substr(parts[0].size() + parts[1].size() + 2);
  }
  json items = json::array();
  std::string last_key;
  bool more = false;
  for (const auto& [collection, objects] : store_) {
    for (const auto& [name, obj] : objects) {
      const std::string key = collection + "|" + name;
      if ((!after.empty() && key <= after) || !sel.Matches(collection, obj)) continue;
      if (limit > 0 && items.size() == static_cast<size_t>(limit)) {
        more = true;
        break;
      }
      items.push_back(obj);
      last_key = key;
    }
    if (more) break;
  }
  const std::string next =
      more ? "g" + std::to_string(continue_generation_) + ":" + rv + ":" + last_key : "";
  json meta = {{"resourceVersion", rv}};
  if (!next.empty()) meta["continue"] = next;
  return {200,
          {{"kind", "List"}, {"apiVersion", "v1"}, {"metadata", meta}, {"items", std::move(items)}},
          std::nullopt};
}

Reply FakeApiServer::Impl::Collection(const Target& t, const SeenRequest& req,
                                      const std::string& query) {
  if (req.method == "GET") return List(t, query);
  if (req.method == "DELETE") return DeleteCollection(t, query);
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
  if (std::optional<Reply> refused = Admit(t, obj, nullptr)) return *refused;
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
    const json pre =
        body.is_object() && body.contains("preconditions") ? body["preconditions"] : json::object();
    if (!pre.is_object()) return Error(400, "BadRequest", "preconditions must be an object");
    const std::string uid = it->second["metadata"].value("uid", "");
    if (pre.value("uid", json(uid)) != uid) {
      return Error(409, "Conflict",
                   "precondition failed: UID in precondition: " + pre.value("uid", json()).dump() +
                       ", UID in object meta: " + uid);
    }
    const json want = pre.value("resourceVersion", json(current));
    if (want != current) return Error(409, "Conflict", "precondition failed: resourceVersion");
    json gone;
    Remove(t.collection, t.name, &gone);
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
    if (std::optional<Reply> refused = Admit(t, body, &it->second)) return *refused;
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
  if (std::optional<Reply> refused =
          Admit(t, patched, it == objects.end() ? nullptr : &it->second)) {
    return *refused;
  }
  return {it == objects.end() ? 201 : 200, Store(t.collection, std::move(patched)), std::nullopt};
}

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
  std::lock_guard<std::mutex> lock(impl_->mu_);
  impl_->Store(collection, std::move(object));
}

bool FakeApiServer::Delete(const std::string& collection, const std::string& name) {
  std::lock_guard<std::mutex> lock(impl_->mu_);
  json gone;
  return impl_->Remove(collection, name, &gone);
}

int64_t FakeApiServer::resource_version() const {
  std::lock_guard<std::mutex> lock(impl_->mu_);
  return impl_->resource_version_;
}

void FakeApiServer::ExpireContinueTokens() {
  std::lock_guard<std::mutex> lock(impl_->mu_);
  ++impl_->continue_generation_;
}

json FakeApiServer::Get(const std::string& collection, const std::string& name) const {
  std::lock_guard<std::mutex> lock(impl_->mu_);
  auto c = impl_->store_.find(collection);
  if (c == impl_->store_.end()) return nullptr;
  auto o = c->second.find(name);
  return o == c->second.end() ? json(nullptr) : o->second;
}

std::vector<json> FakeApiServer::List(const std::string& collection) const {
  std::lock_guard<std::mutex> lock(impl_->mu_);
  std::vector<json> out;
  auto c = impl_->store_.find(collection);
  if (c == impl_->store_.end()) return out;
  for (const auto& [name, object] : c->second) out.push_back(object);
  return out;
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

void FakeApiServer::ClearRequests() {
  std::lock_guard<std::mutex> lock(impl_->mu_);
  impl_->seen_.clear();
}

size_t FakeApiServer::connections() const {
  std::lock_guard<std::mutex> lock(impl_->mu_);
  return impl_->connections_;
}

}  // namespace hcashare::fake
