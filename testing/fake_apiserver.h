// FakeApiServer: an in-process Kubernetes API server for tests, speaking HTTPS (HTTP/1.1,
// one request per connection) on 127.0.0.1 with a certificate from a TestPki made at test
// time. Written from the API documentation (docs: shared reference "kube-api-and-dra.md").
//
// It serves an in-memory object store under /api/v1/... and /apis/<group>/<version>/...
// (namespaced or cluster-scoped, a namespaced kind also listed across namespaces): GET
// (object or LIST), POST (name or generateName; 409 AlreadyExists), PUT (409 Conflict on a
// stale metadata.resourceVersion), PATCH (merge, JSON patch, server-side apply treated as a
// merge that needs fieldManager) and DELETE (preconditions.resourceVersion). Every change
// takes the next value of one global resourceVersion counter. LIST takes `limit` and
// `continue` (tokens expire on demand: 410), `labelSelector` (k=v terms) and `fieldSelector`
// (metadata.name, metadata.namespace). WATCH (`?watch=1`) answers with a chunked stream of
// one JSON event a line: the changes after `resourceVersion` (kept for the last 1000
// changes; an older one is "too old": an ERROR event with a 410 Status, or an HTTP 410 on
// demand), or, without one, ADDED for every object first; BOOKMARKs on demand; the stream
// ends after `timeoutSeconds`, or on demand, or is cut inside an event. Every error is a
// Status object. On demand it answers the
// next requests with an injected error (e.g. 429 with Retry-After, 410, 500), reads requests
// and never answers (for client timeouts), or demands a client certificate. It checks the
// bearer token. One I/O thread; thread-safe.
//
// API groups and DRA (fake_apiserver_groups.cc, fake_apiserver_slices.cc): discovery
// `GET /apis/<group>` answers an APIGroup of the versions served (resource.k8s.io serves v1
// unless told otherwise; 404 when it serves none), and requests to a version not served get
// 404. ResourceSlices are validated as the API server does (422 Invalid naming the field;
// immutable spec.driver, spec.pool.name, spec.nodeName), stricter in two points: a device in
// the other version's shape (`basic` or not) and a body whose apiVersion is not the path's
// are refused rather than converted. LIST and WATCH of slices take the field selectors the
// API server accepts on them (spec.nodeName, spec.driver), and DELETE on the collection
// with a fieldSelector deletes what it selects (the kubelet's wipe of a node's slices).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/status.h"

namespace hcashare::fake {

class TestPki;

// What the server was started with.
struct FakeApiServerOptions {
  // The bearer token every request must carry; "" accepts any request (also none).
  std::string token = "test-token";
  // When not empty, clients must present a certificate signed by this CA (PEM); a request
  // that does so needs no token.
  std::string client_ca_pem;
  // Answers say "Connection: keep-alive" to a client that asks for it and the connection
  // serves its next request (the real API server does); false closes after each answer.
  bool keep_alive = false;
  // With keep_alive: after this many answers the connection is closed although the last
  // answer said keep-alive (a server's idle or request limit racing the client); 0: never.
  int max_requests_per_connection = 0;
};

// One request as the server saw it.
struct SeenRequest {
  std::string method;
  std::string target;  // path and query
  std::string authorization;
  std::string user_agent;
  std::string content_type;
  std::string body;
};

class FakeApiServer {
 public:
  // Listens on 127.0.0.1:<ephemeral> with a server certificate from `pki` for IP:127.0.0.1
  // and DNS:localhost.
  static Result<std::unique_ptr<FakeApiServer>> Start(TestPki* pki,
                                                      FakeApiServerOptions options = {});
  // Stops the I/O thread and closes every connection (stalled ones too).
  ~FakeApiServer();
  FakeApiServer(const FakeApiServer&) = delete;
  FakeApiServer& operator=(const FakeApiServer&) = delete;

  // The port listened on.
  int port() const;
  // "https://127.0.0.1:<port>".
  std::string url() const;

  // Changes the accepted token (a rotation on the server side).
  void SetToken(const std::string& token);
  // Stores `object` at `collection` (e.g. "/api/v1/namespaces/a/configmaps") under its
  // metadata.name, filling resourceVersion and uid.
  void Seed(const std::string& collection, nlohmann::json object);
  // Deletes a stored object (as a DELETE would, watchers told); false when absent.
  bool Delete(const std::string& collection, const std::string& name);
  // Deletes every object of `collection` (e.g. "/apis/resource.k8s.io/v1/resourceslices")
  // that `field_selector` selects ("" selects all), as `DELETE <collection>?fieldSelector=`
  // does, watchers told; the number deleted. InvalidArgument for a selector the kind does not
  // serve.
  Result<size_t> DeleteCollection(const std::string& collection,
                                  const std::string& field_selector = "");
  // The versions of API group `group` served, in preference order (discovery answers them,
  // the first preferred; other versions of the group get 404). Empty: the group is not
  // served at all (discovery 404). resource.k8s.io serves {"v1"} until told otherwise.
  void SetServedVersions(const std::string& group, std::vector<std::string> versions);
  // False: the server does not know consumable capacity (before Kubernetes 1.36): it drops
  // allowMultipleAllocations and capacity requestPolicy from the ResourceSlices it stores, as
  // a server drops fields it does not serve. True by default.
  void SetConsumableCapacity(bool served);
  // False: the server does not serve device taints (DRADeviceTaints off, as kube-apiserver
  // v1.34.9's default gates): it drops `taints` from every device of the slices it stores
  // unless the stored slice already has some. True (the default): it keeps them and sets a
  // taint's missing `timeAdded` to the time of the write, as the API server does.
  void SetDeviceTaints(bool served);
  // The stored object, or null.
  nlohmann::json Get(const std::string& collection, const std::string& name) const;
  // Every object stored in `collection`, in name order.
  std::vector<nlohmann::json> List(const std::string& collection) const;
  // Answers the next `count` requests with `code` (a Status body of `reason`) and, when
  // given, a Retry-After header.
  void InjectError(int code, const std::string& reason, int count = 1,
                   std::optional<int> retry_after = std::nullopt);
  // Sends `warning` as a Warning header with every answer ("" for none).
  void SetWarning(const std::string& warning);
  // While on, requests are read but never answered (the connection stays open).
  void SetStall(bool stall);
  // The global resourceVersion (that of the latest change).
  int64_t resource_version() const;

  // LIST: every continue token handed out so far is expired (410 Expired).
  void ExpireContinueTokens();
  // WATCH: forgets the change history; a watch from an older resourceVersion than the
  // current one is too old (410).
  void CompactHistory();
  // WATCH: too old as an HTTP 410 answer (true) or as a 200 with an ERROR event (default).
  void SetGoneAsHttp(bool http);
  // WATCH: CompactHistory() past the current version, and an ERROR event (410 Expired) on
  // every open watch, which then ends.
  void ExpireWatches();
  // WATCH: a BOOKMARK with the current resourceVersion on every open watch that allows them.
  void SendBookmarks();
  // WATCH: the next change goes out as half an event line to each open watch, whose
  // connection is then closed (a stream cut mid-event). The change stays in the history.
  void CutNextEvent();
  // WATCH: ends every open watch as the server's timeout does (last chunk, close).
  void EndWatches();
  // Watches open now, and started so far (a too-old one as an HTTP 410 not counted).
  size_t open_watches() const;
  size_t watches_started() const;

  // Requests seen so far (the last 100).
  std::vector<SeenRequest> Requests() const;
  // Forgets the requests seen so far.
  void ClearRequests();
  // Connections accepted so far (a TLS handshake that failed counts).
  size_t connections() const;

  // A Status object body.
  static nlohmann::json StatusBody(int code, const std::string& reason, const std::string& message);

  class Impl;  // the Asio objects and the store (fake_apiserver.cc)

 private:
  explicit FakeApiServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace hcashare::fake
