// Informer: an in-memory cache of one kind of object, kept current by LIST then WATCH on a
// thread of its own, for callers that read the objects often (the webhook reads every NAD).
//
// It lists the collection in pages, then watches from the list's resourceVersion;
// bookmarks and events advance that version. When the server ends a watch it watches
// again from there (no relist). A 410 (the version is too old, as an HTTP answer or an
// ERROR event) makes it list again and replace the cache: objects gone meanwhile are
// deleted (and reported as DELETED). Any other failure is retried after a jittered,
// growing delay (kube/backoff.h), or after the server's Retry-After (429, 5xx).
//
// Every object goes through `transform` before it is stored (keep only what is read: the
// webhook keeps a NAD's name, namespace and annotations). The cache is bounded by
// `max_objects` and `max_bytes` (the serialized size of the stored, transformed objects).
// Past either bound the informer gives up: it empties the cache, turns un-synced, records a
// FailedPrecondition naming the bound in LastError(); callers then fall back to GETs. With
// `retry_after_give_up` it lists again that long after (the kind may have shrunk), and
// gives up again while it is still over; without it the thread ends (a kind that outgrew
// the bound on every node would be listed again and again for nothing). A relist reuses
// the stored object of every item whose resourceVersion is unchanged, so its peak is the
// cache, the changed objects and one page, not two caches.
//
// Reads (Get, List, Size, ...) are thread-safe and never wait for network I/O: they take a
// shared lock that the informer thread holds only to change the map in memory. Objects
// are handed out as shared pointers to immutable JSON.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/status.h"
#include "kube/backoff.h"
#include "kube/rest.h"
#include "kube/watch.h"

namespace hcashare::kube {

// An object as the cache holds it.
using CachedObject = std::shared_ptr<const nlohmann::json>;

// What an Informer watches and how.
struct InformerOptions {
  std::string path;            // the collection, e.g. "/apis/k8s.cni.cncf.io/v1/network-..."
  std::string label_selector;  // as in ListOptions, for the list and the watch
  std::string field_selector;
  int page_size = 500;                               // LIST limit
  int watch_timeout_seconds = 300;                   // the server ends each watch after this
  std::chrono::milliseconds idle_timeout{330000};    // a watch silent this long is redone
  std::chrono::milliseconds connect_timeout{30000};  // up to a watch answer's head
  BackoffPolicy backoff;                             // between failed attempts
  uint64_t backoff_seed = 0;                         // 0: random
  // Applied to every object before it is stored (and before on_event); must not throw.
  // nullptr keeps objects whole. The key (namespace/name) is taken before it.
  std::function<nlohmann::json(nlohmann::json)> transform;
  size_t max_objects = 10000;           // more objects: the informer gives up (see above)
  size_t max_bytes = size_t{32} << 20;  // more serialized bytes: the same
  // After giving up, list again this long after (0: never; see above).
  std::chrono::milliseconds retry_after_give_up{0};
  // Called on the informer thread after the cache has changed (ADDED, MODIFIED, DELETED;
  // a relist reports the differences). Must not call Stop().
  std::function<void(WatchEventType type, const CachedObject& object)> on_event;
};

class Informer {
 public:
  // An informer on `client` (which must outlive it). Nothing runs before Start().
  Informer(RestClient* client, InformerOptions options);
  // Stop().
  ~Informer();
  Informer(const Informer&) = delete;
  Informer& operator=(const Informer&) = delete;

  // Starts the thread. InvalidArgument for bad options (no path, a bound of 0, a page size
  // or watch timeout out of range); FailedPrecondition when started before (once only).
  Status Start();
  // Stops the thread promptly (a list or watch in progress is cut off) and joins it. The
  // cache keeps its contents. Idempotent.
  void Stop();

  // True once a list has filled the cache, until the informer gives up (memory bound).
  // Stays true across watch reconnects (the cache may then lag the server).
  bool Synced() const;
  // Waits until Synced() or `timeout`; Synced().
  bool WaitForSync(std::chrono::milliseconds timeout) const;
  // The last failure (list, watch or bound), OK after a success since.
  Status LastError() const;
  // True once the informer gave up on its memory bound.
  bool GaveUp() const;
  // The resourceVersion the next watch starts from.
  std::string ResourceVersion() const;
  // Lists done so far (the first one included).
  size_t Lists() const;

  // The cached object `name` in namespace `ns` ("" for a cluster-scoped kind), or null.
  CachedObject Get(const std::string& ns, const std::string& name) const;
  // Every cached object, in no particular order.
  std::vector<CachedObject> List() const;
  // Objects cached, and their serialized size.
  size_t Size() const;
  size_t Bytes() const;

 private:
  struct Entry {
    CachedObject object;
    size_t bytes = 0;
  };
  using Map = std::unordered_map<std::string, Entry>;

  void Run();
  // A list replacing the cache.
  Status Relist();
  // One watch from the current resourceVersion; OK when the server ended it.
  Status WatchOnce();
  // The object as stored, its key and size; false for one without a name.
  bool Prepare(nlohmann::json object, std::string* key, Entry* entry) const;
  // FailedPrecondition naming the bound when `objects`/`bytes` exceed it, else OK.
  Status CheckBound(size_t objects, size_t bytes) const;
  // Records `st` as LastError(); gives up when it is the bound's.
  // The stored entry of list item `item` (its key in `key`) when the cache holds it at the
  // same resourceVersion; false otherwise (a transform that drops metadata.resourceVersion
  // never shares).
  bool Reuse(const nlohmann::json& item, std::string* key, Entry* entry) const;
  void Fail(const Status& st, bool give_up);
  // Waits `d` or until Stop(); false when stopping.
  bool Sleep(std::chrono::milliseconds d);
  bool Stopping() const;
  void Emit(WatchEventType type, const CachedObject& object) const;

  RestClient* const client_;
  const InformerOptions options_;

  mutable std::shared_mutex cache_mu_;  // guards cache_, bytes_
  Map cache_;
  size_t bytes_ = 0;

  mutable std::mutex mu_;  // guards what follows
  mutable std::condition_variable cv_;
  bool started_ = false;
  bool stopping_ = false;
  bool synced_ = false;
  bool gave_up_ = false;
  Status last_error_;
  std::string resource_version_;
  size_t lists_ = 0;

  // The informer thread's own.
  bool over_bound_ = false;  // the last list or watch hit the memory bound
  bool delivered_ = false;   // the last watch delivered an event

  StreamCancel cancel_;
  std::thread thread_;
};

}  // namespace hcashare::kube
