// The inside of FakeApiServer (testing/fake_apiserver.h), shared by fake_apiserver.cc (the
// store, LIST and the verbs), fake_apiserver_select.cc (paths, queries, selectors) and
// fake_apiserver_watch.cc (connections, WATCH streams and their hooks).
#pragma once

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <cstdint>
#include <deque>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/strings.h"
#include "testing/fake_apiserver.h"

namespace hcashare::fake {

// An answer: code, JSON body, optional Retry-After.
struct Reply {
  Reply(int c, nlohmann::json b, std::optional<int> ra = std::nullopt)
      : code(c), body(std::move(b)), retry_after(ra) {}
  int code = 200;
  nlohmann::json body;
  std::optional<int> retry_after;
  std::string warning;  // a Warning header, or ""
  bool watch = false;   // the answer is a watch stream (the session was registered)
};

// An error answer with a Status body.
Reply ErrorReply(int code, const std::string& reason, const std::string& message);

// A request path split into the collection it names and, for an object, its name.
struct Target {
  std::string collection;   // the path of the collection (with its namespace, if any)
  std::string name;         // "" for the collection itself
  std::string ns;           // the namespace in the path, or ""
  std::string kind_key;     // the collection without "/namespaces/<ns>": the same for all
  std::string subresource;  // "status" for <object>/status, else ""
};

// /api/v1/[namespaces/<ns>/]<res>[/<name>] and /apis/<g>/<v>/...; nullopt for anything else.
std::optional<Target> ParseTarget(const std::string& path);
// True for a collection of ResourceSlices (/apis/resource.k8s.io/<version>/resourceslices).
bool IsResourceSlices(const Target& t);
// The value of `key` in a query string, percent-decoded ("" when absent).
std::string QueryParam(const std::string& query, const std::string& key);

// Which objects a LIST or WATCH takes: a kind, a namespace or all, and selectors.
struct Selection {
  std::string kind_key;
  std::string ns;                                           // "" = every namespace
  std::vector<std::pair<std::string, std::string>> labels;  // k=v, all must hold
  // metadata.name / .namespace, and spec.nodeName / spec.driver for ResourceSlices
  std::vector<std::pair<std::string, std::string>> fields;
  // Parses labelSelector and fieldSelector of `query`; an error message or "".
  std::string Parse(const Target& t, const std::string& query);
  // The same from the two selectors' texts.
  std::string ParseSelectors(const Target& t, const std::string& label_selector,
                             const std::string& field_selector);
  // True when the object stored in `collection` is selected.
  bool Matches(const std::string& collection, const nlohmann::json& object) const;
};

class FakeApiServer::Impl {
 public:
  class Session;

  explicit Impl(FakeApiServerOptions options) : options_(std::move(options)) {}
  ~Impl();

  Status Start(TestPki* pki);
  int port() const { return port_; }

  // The answer to one request, nullopt to stall. A watch registers `session`.
  std::optional<Reply> Handle(SeenRequest req, bool client_cert_ok,
                              const std::shared_ptr<Session>& session);

  // Stores `object` under its name with a new resourceVersion (a uid when new) and tells the
  // watchers. Under mu_.
  nlohmann::json& Store(const std::string& collection, nlohmann::json object);
  // Removes the object, with a new resourceVersion, and tells the watchers; false when
  // absent. Under mu_.
  bool Remove(const std::string& collection, const std::string& name, nlohmann::json* gone);

  // API groups (fake_apiserver_groups.cc), under mu_: discovery of a group, or 404 for a
  // version not served; nullopt for requests that go on to the store.
  std::optional<Reply> Groups(const std::string& method, const std::string& path);
  // DELETE on a collection: every object the query's selectors select.
  Reply DeleteCollection(const Target& t, const std::string& query);
  // Removes every object `sel` selects (watchers told); the objects removed.
  nlohmann::json RemoveSelected(const Selection& sel);
  // Admission of a write to `t` (fake_apiserver_slices.cc): for ResourceSlices validates
  // `object` (against `old` for PUT/PATCH, null for POST) and drops the fields the server does
  // not serve; nullopt to go on, else the error to answer. Other kinds pass.
  std::optional<Reply> Admit(const Target& t, nlohmann::json& object, const nlohmann::json* old);

  // <object>/status (fake_apiserver_claims.cc), under mu_: GET, and server-side apply of a
  // ResourceClaim's status.devices, validated and merged per field manager.
  Reply Subresource(const Target& t, const SeenRequest& req, const std::string& query);

  // The watch parts (fake_apiserver_watch.cc), all under mu_.
  // Starts a watch on `session`: HTTP 410 as a reply, or nullopt when streaming.
  std::optional<Reply> StartWatch(const Target& t, const std::string& query,
                                  const std::shared_ptr<Session>& session);
  // Records a change and sends it to the watchers that select it.
  void Notify(const std::string& collection, const char* type, const nlohmann::json& object);
  // Forgets a watcher (its connection ended).
  void Unregister(const Session* session);

  mutable std::mutex mu_;
  FakeApiServerOptions options_;
  std::map<std::string, std::map<std::string, nlohmann::json>> store_;
  int64_t resource_version_ = 1;
  int uid_ = 0;
  std::deque<SeenRequest> seen_;
  size_t connections_ = 0;
  std::optional<Reply> injected_;
  int injected_count_ = 0;
  bool stall_ = false;
  std::string warning_;
  // Served versions by API group (Groups()); a group absent here is not gated.
  std::map<std::string, std::vector<std::string>> served_{{"resource.k8s.io", {"v1"}}};
  bool consumable_capacity_ = true;
  // Server-side apply of claim status: "<collection>/<name>" -> field manager -> the keys
  // ("driver/pool/device/shareID") of the status.devices entries it owns.
  std::map<std::string, std::map<std::string, std::set<std::string>>> status_owners_;
  bool device_taints_ = true;

  // LIST pages: tokens of an older generation are expired (410).
  int continue_generation_ = 0;
  // WATCH: the changes kept (oldest first) and the oldest resourceVersion that can still be
  // watched from; older ones are "too old" (410).
  struct Change {
    int64_t rv;
    std::string collection;
    std::string type;
    nlohmann::json object;
  };
  std::deque<Change> history_;
  int64_t history_floor_ = 1;
  bool gone_as_http_ = false;  // "too old" as an HTTP 410 instead of an ERROR event
  bool cut_next_event_ = false;
  std::list<std::shared_ptr<Session>> watchers_;
  size_t watches_started_ = 0;

  boost::asio::io_context io_{1};

 private:
  void Accept();
  std::optional<Reply> Answer(SeenRequest req, bool client_cert_ok,
                              const std::shared_ptr<Session>& session);
  Reply Object(const Target& t, const SeenRequest& req, const std::string& query);
  Reply Collection(const Target& t, const SeenRequest& req, const std::string& query);
  Reply List(const Target& t, const std::string& query);

  boost::asio::ssl::context ctx_{boost::asio::ssl::context::tls_server};
  boost::asio::ip::tcp::acceptor acceptor_{io_};
  std::list<std::shared_ptr<Session>> stalled_;  // kept open until the server stops
  int port_ = 0;
  std::thread thread_;
};

// One connection: handshake, one request, then one answer (more in turn with keep-alive),
// none while stalling, or a watch stream (chunked, one JSON event a line) fed by the
// store's changes.
class FakeApiServer::Impl::Session : public std::enable_shared_from_this<Session> {
 public:
  Session(Impl* server, boost::asio::ip::tcp::socket socket, boost::asio::ssl::context& ctx);
  void Start();

  // The watch this session serves (set by StartWatch, under mu_).
  Selection selection;
  bool bookmarks = false;

  // Queue raw bytes of the stream (any thread; the I/O thread writes them in order).
  // The head of a chunked 200 answer.
  void SendHead();
  // One event line as a chunk.
  void SendLine(const std::string& line);
  // The first half of `line`, then the connection closed (a stream cut mid-event).
  void SendCut(const std::string& line);
  // The last chunk, then the connection closed (the server's timeout).
  void SendEnd();
  // Ends the stream after `seconds` (timeoutSeconds).
  void EndAfter(int seconds);

 private:
  struct Frame {
    std::string bytes;
    bool close_after = false;
  };
  void Read();
  void OnRead(boost::system::error_code ec);
  // After an answer: the next request on a kept connection, else the connection closed.
  void AfterAnswer(bool keep);
  void Queue(Frame frame);
  void Pump();        // I/O thread
  void WatchClose();  // I/O thread
  void WatchReadForClose();

  Impl* const server_;
  boost::beast::ssl_stream<boost::beast::tcp_stream> stream_;
  boost::beast::flat_buffer buffer_;
  // One parser per request (a Beast parser is not reusable).
  std::optional<boost::beast::http::request_parser<boost::beast::http::string_body>> parser_;
  int answered_ = 0;  // requests answered on this connection
  boost::beast::http::response<boost::beast::http::string_body> res_;
  // The watch stream.
  std::mutex frames_mu_;
  std::deque<Frame> frames_;
  bool queued_close_ = false;  // a closing frame is queued: nothing more is sent
  Frame current_;              // I/O thread
  bool writing_ = false;       // I/O thread
  bool closed_ = false;        // I/O thread
  char sink_[64];
  std::unique_ptr<boost::asio::steady_timer> timeout_;
};

}  // namespace hcashare::fake
