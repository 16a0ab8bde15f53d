#include "kube/informer.h"

#include <random>
#include <utility>

#include "common/log.h"
#include "json/dump.h"
#include "kube/list.h"
#include "kube/status_error.h"

namespace hcashare::kube {
namespace {

using json = nlohmann::json;

// "namespace/name" (or "/name" cluster-scoped); "" when the object has no name.
std::string KeyOf(const json& object) {
  auto meta = object.find("metadata");
  if (meta == object.end() || !meta->is_object()) return "";
  auto name = meta->find("name");
  if (name == meta->end() || !name->is_string() || name->get_ref<const std::string&>().empty()) {
    return "";
  }
  auto ns = meta->find("namespace");
  const std::string n = ns != meta->end() && ns->is_string() ? ns->get<std::string>() : "";
  return n + "/" + name->get<std::string>();
}

std::string ResourceVersionOf(const json& object) {
  auto meta = object.find("metadata");
  if (meta == object.end() || !meta->is_object()) return "";
  auto rv = meta->find("resourceVersion");
  return rv != meta->end() && rv->is_string() ? rv->get<std::string>() : "";
}

}  // namespace

Informer::Informer(RestClient* client, InformerOptions options)
    : client_(client), options_(std::move(options)) {}

Informer::~Informer() { Stop(); }

Status Informer::Start() {
  const std::string what = "informer " + options_.path + ": ";
  if (options_.path.empty() || options_.path.front() != '/') {
    return Status::InvalidArgument(what + "the path must start with '/'");
  }
  if (options_.max_objects == 0 || options_.max_bytes == 0) {
    return Status::InvalidArgument(what + "max_objects and max_bytes must be > 0");
  }
  if (options_.page_size < 1 || options_.page_size > 10000) {
    return Status::InvalidArgument(what + "page_size must be in 1..10000");
  }
  if (options_.watch_timeout_seconds < 1 || options_.watch_timeout_seconds > 3600) {
    return Status::InvalidArgument(what + "watch_timeout_seconds must be in 1..3600");
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (started_) return Status::FailedPrecondition(what + "started before (an informer runs once)");
  started_ = true;
  thread_ = std::thread([this] { Run(); });
  return Status::Ok();
}

void Informer::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  cancel_.Cancel();
  if (thread_.joinable()) thread_.join();
}

bool Informer::Stopping() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stopping_;
}

bool Informer::Sleep(std::chrono::milliseconds d) {
  std::unique_lock<std::mutex> lock(mu_);
  return !cv_.wait_for(lock, d, [&] { return stopping_; });
}

bool Informer::Synced() const {
  std::lock_guard<std::mutex> lock(mu_);
  return synced_;
}

bool Informer::WaitForSync(std::chrono::milliseconds timeout) const {
  std::unique_lock<std::mutex> lock(mu_);
  return cv_.wait_for(lock, timeout, [&] { return synced_ || gave_up_; }) && synced_;
}

Status Informer::LastError() const {
  std::lock_guard<std::mutex> lock(mu_);
  return last_error_;
}

bool Informer::GaveUp() const {
  std::lock_guard<std::mutex> lock(mu_);
  return gave_up_;
}

std::string Informer::ResourceVersion() const {
  std::lock_guard<std::mutex> lock(mu_);
  return resource_version_;
}

size_t Informer::Lists() const {
  std::lock_guard<std::mutex> lock(mu_);
  return lists_;
}

CachedObject Informer::Get(const std::string& ns, const std::string& name) const {
  std::shared_lock<std::shared_mutex> lock(cache_mu_);
  auto it = cache_.find(ns + "/" + name);
  return it == cache_.end() ? nullptr : it->second.object;
}

std::vector<CachedObject> Informer::List() const {
  std::shared_lock<std::shared_mutex> lock(cache_mu_);
  std::vector<CachedObject> out;
  out.reserve(cache_.size());
  for (const auto& [key, entry] : cache_) out.push_back(entry.object);
  return out;
}

size_t Informer::Size() const {
  std::shared_lock<std::shared_mutex> lock(cache_mu_);
  return cache_.size();
}

size_t Informer::Bytes() const {
  std::shared_lock<std::shared_mutex> lock(cache_mu_);
  return bytes_;
}

bool Informer::Prepare(json object, std::string* key, Entry* entry) const {
  *key = KeyOf(object);
  if (key->empty()) return false;
  if (options_.transform) object = options_.transform(std::move(object));
  entry->bytes = DumpJson(object).size();
  entry->object = std::make_shared<const json>(std::move(object));
  return true;
}

bool Informer::Reuse(const json& item, std::string* key, Entry* entry) const {
  *key = KeyOf(item);
  const std::string rv = ResourceVersionOf(item);
  if (key->empty() || rv.empty()) return false;
  std::shared_lock<std::shared_mutex> lock(cache_mu_);
  auto it = cache_.find(*key);
  if (it == cache_.end() || ResourceVersionOf(*it->second.object) != rv) return false;
  *entry = it->second;
  return true;
}

Status Informer::CheckBound(size_t objects, size_t bytes) const {
  if (objects <= options_.max_objects && bytes <= options_.max_bytes) return Status::Ok();
  return Status::FailedPrecondition(
      "informer " + options_.path + ": the cache would hold " + std::to_string(objects) +
      " objects of " + std::to_string(bytes) + " bytes, over its bound (max_objects " +
      std::to_string(options_.max_objects) + ", max_bytes " + std::to_string(options_.max_bytes) +
      "); it stopped caching: read the objects with GETs");
}

void Informer::Emit(WatchEventType type, const CachedObject& object) const {
  if (options_.on_event) options_.on_event(type, object);
}

void Informer::Fail(const Status& st, bool give_up) {
  if (give_up) {
    std::unique_lock<std::shared_mutex> cache_lock(cache_mu_);
    cache_.clear();
    bytes_ = 0;
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    last_error_ = st;
    if (give_up) {
      gave_up_ = true;
      synced_ = false;
    }
  }
  cv_.notify_all();
  LogWarn(give_up ? "informer gave up" : "informer retries",
          {{"path", options_.path}, {"error", st.ToString()}});
}

Status Informer::Relist() {
  Map fresh;
  size_t bytes = 0;
  ListOptions list;
  list.limit = options_.page_size;
  list.label_selector = options_.label_selector;
  list.field_selector = options_.field_selector;
  list.max_items = options_.max_objects + 1;  // the bound's own message comes first
  list.cancel = &cancel_;
  Result<std::string> rv = ListEach(
      *client_, options_.path, list,
      [&](json item) {
        std::string key;
        Entry entry;
        if (!Reuse(item, &key, &entry) && !Prepare(std::move(item), &key, &entry)) {
          return Status::Ok();
        }
        auto [it, added] = fresh.emplace(key, entry);
        if (!added) {  // the same key twice: keep the later
          bytes -= it->second.bytes;
          it->second = entry;
        }
        bytes += entry.bytes;
        Status bound = CheckBound(fresh.size(), bytes);
        over_bound_ = !bound.ok();
        return bound;
      },
      [&] {
        fresh.clear();
        bytes = 0;
      });
  if (!rv.ok()) return rv.status();

  // Replace the cache, then report the differences.
  Map old;
  {
    std::unique_lock<std::shared_mutex> lock(cache_mu_);
    old.swap(cache_);
    cache_ = fresh;
    bytes_ = bytes;
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    resource_version_ = *rv;
    synced_ = true;
    gave_up_ = false;
    last_error_ = Status::Ok();
    ++lists_;
  }
  cv_.notify_all();
  for (const auto& [key, entry] : old) {
    if (!fresh.count(key)) Emit(WatchEventType::kDeleted, entry.object);
  }
  for (const auto& [key, entry] : fresh) {
    auto was = old.find(key);
    if (was == old.end()) {
      Emit(WatchEventType::kAdded, entry.object);
    } else if (ResourceVersionOf(*was->second.object) != ResourceVersionOf(*entry.object)) {
      Emit(WatchEventType::kModified, entry.object);
    }
  }
  return Status::Ok();
}

Status Informer::WatchOnce() {
  WatchOptions w;
  w.resource_version = ResourceVersion();
  w.label_selector = options_.label_selector;
  w.field_selector = options_.field_selector;
  w.timeout_seconds = options_.watch_timeout_seconds;
  w.idle_timeout = options_.idle_timeout;
  w.connect_timeout = options_.connect_timeout;
  w.cancel = &cancel_;
  Status bound;
  Status st = Watch(*client_, options_.path, w, [&](const WatchEvent& e) {
    if (e.type != WatchEventType::kBookmark) {
      std::string key;
      Entry entry;
      if (Prepare(e.object, &key, &entry)) {
        std::unique_lock<std::shared_mutex> lock(cache_mu_);
        auto it = cache_.find(key);
        const size_t old_bytes = it == cache_.end() ? 0 : it->second.bytes;
        if (e.type == WatchEventType::kDeleted) {
          if (it != cache_.end()) {
            bytes_ -= old_bytes;
            cache_.erase(it);
          }
        } else {
          const size_t objects = cache_.size() + (it == cache_.end() ? 1 : 0);
          bound = CheckBound(objects, bytes_ - old_bytes + entry.bytes);
          if (!bound.ok()) {
            over_bound_ = true;
            return false;
          }
          bytes_ = bytes_ - old_bytes + entry.bytes;
          cache_[key] = entry;
        }
        lock.unlock();
        Emit(e.type, entry.object);
      }
    }
    delivered_ = true;
    std::lock_guard<std::mutex> lock(mu_);
    if (!e.resource_version.empty()) resource_version_ = e.resource_version;
    last_error_ = Status::Ok();
    return !stopping_;
  });
  return bound.ok() ? st : bound;
}

void Informer::Run() {
  Backoff backoff(options_.backoff,
                  options_.backoff_seed ? options_.backoff_seed : std::random_device{}());
  bool need_list = true;
  int gone_in_a_row = 0;
  while (!Stopping()) {
    delivered_ = false;
    Status st = need_list ? Relist() : WatchOnce();
    if (Stopping()) break;
    if (over_bound_) {
      Fail(st, /*give_up=*/true);
      if (options_.retry_after_give_up.count() <= 0) return;
      if (!Sleep(options_.retry_after_give_up)) break;
      over_bound_ = false;
      need_list = true;
      continue;
    }
    if (delivered_) gone_in_a_row = 0;
    if (st.ok()) {  // a list done, or a watch the server ended: watch (again)
      need_list = false;
      backoff.Reset();
      continue;
    }
    Fail(st, /*give_up=*/false);
    if (IsGone(st) && !need_list) {
      // The version is too old: list again at once (after a delay if it keeps happening).
      need_list = true;
      if (gone_in_a_row++ == 0) continue;
    }
    if (!Sleep(backoff.Next(RetryAfterOf(st)))) break;
  }
}

}  // namespace hcashare::kube
