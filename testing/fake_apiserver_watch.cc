// FakeApiServer's connections and WATCH streams: the session that reads a request and
// writes its answer, the chunked event stream a watch gets (one JSON event a line), the
// change history a watch replays from its resourceVersion, and the test hooks on open
// watches (bookmarks, 410, a stream cut mid-event, the server's end of a stream).
#include <openssl/ssl.h>

#include <boost/asio/write.hpp>
#include <cstdio>
#include <utility>

#include "testing/fake_apiserver_impl.h"

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
constexpr size_t kMaxHistory = 1000;

std::string Chunk(const std::string& data) {
  char size[24];
  std::snprintf(size, sizeof(size), "%zx\r\n", data.size());
  return size + data + "\r\n";
}

std::string EventLine(const std::string& type, const json& object) {
  return json{{"type", type}, {"object", object}}.dump() + "\n";
}

}  // namespace

FakeApiServer::Impl::Session::Session(Impl* server, tcp::socket socket, ssl::context& ctx)
    : server_(server), stream_(std::move(socket), ctx) {
  // Answers and events go out as written, as the API server's do (Go sets TCP_NODELAY).
  error_code ignored;
  beast::get_lowest_layer(stream_).socket().set_option(tcp::no_delay(true), ignored);
}

void FakeApiServer::Impl::Session::Start() {
  stream_.async_handshake(ssl::stream_base::server, [s = shared_from_this()](error_code ec) {
    if (!ec) s->Read();
  });
}

void FakeApiServer::Impl::Session::Read() {
  parser_.emplace();
  parser_->header_limit(16 * 1024);
  parser_->body_limit(kMaxRequestBody);
  bhttp::async_read(stream_, buffer_, *parser_,
                    [s = shared_from_this()](error_code ec, size_t) { s->OnRead(ec); });
}

void FakeApiServer::Impl::Session::OnRead(error_code ec) {
  if (ec) return;
  const auto& r = parser_->get();
  SeenRequest req{std::string(r.method_string()),
                  std::string(r.target()),
                  std::string(r[bhttp::field::authorization]),
                  std::string(r[bhttp::field::user_agent]),
                  std::string(r[bhttp::field::content_type]),
                  r.body()};
  X509* peer = SSL_get0_peer_certificate(stream_.native_handle());
  std::optional<Reply> reply = server_->Handle(std::move(req), peer != nullptr, shared_from_this());
  if (!reply) {
    server_->stalled_.push_back(shared_from_this());  // I/O thread only
    return;
  }
  if (reply->watch) {  // the stream's frames are queued already
    WatchReadForClose();
    return;
  }
  const FakeApiServerOptions& opts = server_->options_;
  const bool keep = opts.keep_alive && r.keep_alive();
  ++answered_;
  const bool last = !keep || (opts.max_requests_per_connection > 0 &&
                              answered_ >= opts.max_requests_per_connection);
  res_ = {};
  res_.result(static_cast<unsigned>(reply->code));
  res_.version(11);
  res_.set(bhttp::field::content_type, "application/json");
  if (reply->retry_after) res_.set(bhttp::field::retry_after, std::to_string(*reply->retry_after));
  if (!reply->warning.empty()) {
    res_.insert(bhttp::field::warning, reply->warning);
    res_.insert(bhttp::field::warning, reply->warning + " (again)");
  }
  res_.keep_alive(keep);
  res_.body() = reply->body.dump();
  res_.prepare_payload();
  bhttp::async_write(stream_, res_, [s = shared_from_this(), last](error_code ec, size_t) {
    s->AfterAnswer(!ec && !last);
  });
}

void FakeApiServer::Impl::Session::AfterAnswer(bool keep) {
  if (keep) {
    Read();
    return;
  }
  error_code ignored;
  beast::get_lowest_layer(stream_).socket().shutdown(tcp::socket::shutdown_both, ignored);
}

void FakeApiServer::Impl::Session::SendHead() {
  Queue(
      {"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n"
       "Connection: close\r\n\r\n",
       false});
}

void FakeApiServer::Impl::Session::SendLine(const std::string& line) {
  Queue({Chunk(line), false});
}

void FakeApiServer::Impl::Session::SendCut(const std::string& line) {
  Queue({Chunk(line.substr(0, line.size() / 2)), true});
}

void FakeApiServer::Impl::Session::SendEnd() { Queue({"0\r\n\r\n", true}); }

void FakeApiServer::Impl::Session::EndAfter(int seconds) {
  timeout_ = std::make_unique<asio::steady_timer>(server_->io_, std::chrono::seconds(seconds));
  timeout_->async_wait([s = shared_from_this()](error_code ec) {
    if (!ec) s->SendEnd();
  });
}

void FakeApiServer::Impl::Session::Queue(Frame frame) {
  {
    std::lock_guard<std::mutex> lock(frames_mu_);
    if (queued_close_) return;
    queued_close_ = frame.close_after;
    frames_.push_back(std::move(frame));
  }
  asio::post(server_->io_, [s = shared_from_this()] { s->Pump(); });
}

void FakeApiServer::Impl::Session::Pump() {
  if (writing_ || closed_) return;
  {
    std::lock_guard<std::mutex> lock(frames_mu_);
    if (frames_.empty()) return;
    current_ = std::move(frames_.front());
    frames_.pop_front();
  }
  writing_ = true;
  asio::async_write(stream_, asio::buffer(current_.bytes),
                    [s = shared_from_this()](error_code ec, size_t) {
                      s->writing_ = false;
                      if (ec || s->current_.close_after) {
                        s->WatchClose();
                        return;
                      }
                      s->Pump();
                    });
}

// The client sends nothing more on a watch: a read ends when it closes the connection.
void FakeApiServer::Impl::Session::WatchReadForClose() {
  stream_.async_read_some(asio::buffer(sink_), [s = shared_from_this()](error_code ec, size_t) {
    if (ec) {
      s->WatchClose();
    } else {
      s->WatchReadForClose();
    }
  });
}

void FakeApiServer::Impl::Session::WatchClose() {
  if (closed_) return;
  closed_ = true;
  if (timeout_) timeout_->cancel();
  error_code ignored;
  beast::get_lowest_layer(stream_).socket().shutdown(tcp::socket::shutdown_both, ignored);
  beast::get_lowest_layer(stream_).socket().close(ignored);
  std::lock_guard<std::mutex> lock(server_->mu_);
  server_->Unregister(this);
}

std::optional<Reply> FakeApiServer::Impl::StartWatch(const Target& t, const std::string& query,
                                                     const std::shared_ptr<Session>& session) {
  Selection sel;
  if (std::string bad = sel.Parse(t, query); !bad.empty()) {
    return ErrorReply(400, "BadRequest", bad);
  }
  const std::string rv_text = QueryParam(query, "resourceVersion");
  const int64_t rv = rv_text.empty() ? 0 : std::strtoll(rv_text.c_str(), nullptr, 10);
  const bool too_old = rv > 0 && rv < history_floor_;
  const std::string too_old_message =
      "too old resource version: " + rv_text + " (" + std::to_string(history_floor_) + ")";
  if (too_old && gone_as_http_) return ErrorReply(410, "Expired", too_old_message);
  ++watches_started_;
  session->selection = sel;
  session->bookmarks = QueryParam(query, "allowWatchBookmarks") == "true";
  session->SendHead();
  if (too_old) {
    session->SendLine(
        EventLine("ERROR", FakeApiServer::StatusBody(410, "Expired", too_old_message)));
    session->SendEnd();
  } else {
    if (rv == 0) {  // from now, with the current state as ADDED events
      for (const auto& [collection, objects] : store_) {
        for (const auto& [name, obj] : objects) {
          if (sel.Matches(collection, obj)) session->SendLine(EventLine("ADDED", obj));
        }
      }
    }
    for (const Change& c : history_) {
      if (c.rv > rv && rv > 0 && sel.Matches(c.collection, c.object)) {
        session->SendLine(EventLine(c.type, c.object));
      }
    }
    watchers_.push_back(session);
    const std::string timeout = QueryParam(query, "timeoutSeconds");
    if (!timeout.empty()) session->EndAfter(std::max(1, std::atoi(timeout.c_str())));
  }
  Reply r(200, json());
  r.watch = true;
  return r;
}

void FakeApiServer::Impl::Notify(const std::string& collection, const char* type,
                                 const json& object) {
  history_.push_back({resource_version_, collection, type, object});
  if (history_.size() > kMaxHistory) {
    history_floor_ = history_.front().rv;
    history_.pop_front();
  }
  const std::string line = EventLine(type, object);
  for (const auto& w : watchers_) {
    if (!w->selection.Matches(collection, object)) continue;
    if (cut_next_event_) {
      w->SendCut(line);
    } else {
      w->SendLine(line);
    }
  }
  cut_next_event_ = false;
}

void FakeApiServer::Impl::Unregister(const Session* session) {
  watchers_.remove_if([&](const std::shared_ptr<Session>& w) { return w.get() == session; });
}

void FakeApiServer::CompactHistory() {
  std::lock_guard<std::mutex> lock(impl_->mu_);
  impl_->history_.clear();
  impl_->history_floor_ = impl_->resource_version_;
}

void FakeApiServer::ExpireWatches() {
  std::lock_guard<std::mutex> lock(impl_->mu_);
  impl_->history_.clear();
  impl_->history_floor_ = impl_->resource_version_ + 1;
  const std::string line =
      EventLine("ERROR", StatusBody(410, "Expired",
                                    "The resourceVersion for the provided watch "
                                    "is too old."));
  for (const auto& w : impl_->watchers_) {
    w->SendLine(line);
    w->SendEnd();
  }
}

void FakeApiServer::SetGoneAsHttp(bool http) {
  std::lock_guard<std::mutex> lock(impl_->mu_);
  impl_->gone_as_http_ = http;
}

void FakeApiServer::SendBookmarks() {
  std::lock_guard<std::mutex> lock(impl_->mu_);
  const json object = {
      {"metadata", {{"resourceVersion", std::to_string(impl_->resource_version_)}}}};
  for (const auto& w : impl_->watchers_) {
    if (w->bookmarks) w->SendLine(EventLine("BOOKMARK", object));
  }
}

void FakeApiServer::CutNextEvent() {
  std::lock_guard<std::mutex> lock(impl_->mu_);
  impl_->cut_next_event_ = true;
}

void FakeApiServer::EndWatches() {
  std::lock_guard<std::mutex> lock(impl_->mu_);
  for (const auto& w : impl_->watchers_) w->SendEnd();
}

size_t FakeApiServer::open_watches() const {
  std::lock_guard<std::mutex> lock(impl_->mu_);
  return impl_->watchers_.size();
}

size_t FakeApiServer::watches_started() const {
  std::lock_guard<std::mutex> lock(impl_->mu_);
  return impl_->watches_started_;
}

}  // namespace hcashare::fake
