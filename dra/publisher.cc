#include "dra/publisher.h"

#include <random>
#include <utility>
#include <vector>

#include "common/log.h"
#include "json/dump.h"
#include "kube/status_error.h"

namespace hcashare::dra {
namespace {

using json = nlohmann::json;

constexpr char kGroupPath[] = "/apis/resource.k8s.io";
// Plans written in one reconcile before it gives up (a server that keeps changing what it
// stores, or a 409 storm): an error, retried after the back-off.
constexpr int kMaxPlans = 8;
// Serialized slices the watch may cache.
constexpr size_t kMaxSliceBytes = size_t{64} << 20;

bool IsLabelChar(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-'; }

// A lowercase DNS-1123 subdomain of at most `max` characters.
bool IsDnsSubdomain(const std::string& s, size_t max) {
  if (s.empty() || s.size() > max) return false;
  size_t label = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '.') {
      if (label == 0 || s[i - 1] == '-') return false;
      label = 0;
      continue;
    }
    if (!IsLabelChar(c) || (label == 0 && c == '-') || ++label > 63) return false;
  }
  return label > 0 && s.back() != '-';
}

std::string Field(const json& object, const char* pointer) {
  const json::json_pointer p(pointer);
  return object.contains(p) && object[p].is_string() ? object[p].get<std::string>() : "";
}

}  // namespace

SlicePublisher::SlicePublisher(kube::RestClient* client, PublisherOptions options)
    : client_(client), options_(std::move(options)) {}

SlicePublisher::~SlicePublisher() { Stop(); }

Status SlicePublisher::Start() {
  if (!IsDnsSubdomain(options_.driver, 63)) {
    return Status::InvalidArgument("DRA driver name \"" + options_.driver +
                                   "\" is not a lowercase DNS subdomain of at most 63 "
                                   "characters");
  }
  if (!IsDnsSubdomain(options_.node_name, 253)) {
    return Status::InvalidArgument("node name \"" + options_.node_name +
                                   "\" is not a lowercase DNS subdomain (--node-name or "
                                   "NODE_NAME)");
  }
  if (options_.max_slices == 0 || options_.watch_timeout_seconds < 1 ||
      options_.watch_timeout_seconds > 3600) {
    return Status::InvalidArgument(
        "slice publisher: max_slices must be > 0 and watch_timeout_seconds in 1..3600");
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (started_) return Status::FailedPrecondition("slice publisher started before (once only)");
  started_ = true;
  thread_ = std::thread([this] { Run(); });
  return Status::Ok();
}

void SlicePublisher::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  cancel_.Cancel();
  if (thread_.joinable()) thread_.join();
}

Status SlicePublisher::Update(PoolContent pool) {
  if (pool.driver != options_.driver || pool.node_name != options_.node_name) {
    return Status::InvalidArgument(
        "slice publisher for driver \"" + options_.driver + "\" on node \"" + options_.node_name +
        "\" given the pool of driver \"" + pool.driver + "\" on node \"" + pool.node_name + "\"");
  }
  if (pool.pool_name.empty()) return Status::InvalidArgument("the pool has no name");
  if (pool.devices.size() > kMaxPoolDevices) {
    return Status::InvalidArgument("the pool has " + std::to_string(pool.devices.size()) +
                                   " devices, more than " + std::to_string(kMaxPoolDevices));
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (desired_ && *desired_ == pool) return Status::Ok();
    desired_ = std::move(pool);
    ++desired_serial_;
    if (!since_) since_ = Clock::now();
    status_.published = false;
    dirty_ = true;
  }
  cv_.notify_all();
  return Status::Ok();
}

PublisherStatus SlicePublisher::status() const {
  std::lock_guard<std::mutex> lock(mu_);
  return status_;
}

bool SlicePublisher::WaitPublished(std::chrono::milliseconds timeout) const {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait_for(lock, timeout, [&] { return status_.published || stopping_; });
  return status_.published;
}

bool SlicePublisher::Stopping() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stopping_;
}

bool SlicePublisher::Sleep(std::chrono::milliseconds d) {
  std::unique_lock<std::mutex> lock(mu_);
  return !cv_.wait_for(lock, d, [&] { return stopping_; });
}

void SlicePublisher::Fail(const Status& st) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    status_.last_error = st;
    status_.published = false;
  }
  cv_.notify_all();
  LogWarn("ResourceSlice publisher retries",
          {{"driver", options_.driver}, {"node", options_.node_name}, {"error", st.ToString()}});
}

std::string SlicePublisher::SlicesPath() const {
  return std::string(kGroupPath) + "/" + ApiVersionName(version_) + "/resourceslices";
}

Result<kube::Response> SlicePublisher::Call(kube::Verb verb, const std::string& path,
                                            std::string body) {
  kube::Request req;
  req.verb = verb;
  req.path = path;
  req.body = std::move(body);
  req.cancel = &cancel_;
  return client_->Call(req);
}

void SlicePublisher::Run() {
  kube::Backoff backoff(options_.backoff,
                        options_.backoff_seed ? options_.backoff_seed : std::random_device{}());
  bool ready = false;
  while (!Stopping()) {
    Status st;
    if (!ready) {
      st = Setup();
      ready = st.ok();
    } else {
      {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait(lock, [&] { return stopping_ || dirty_; });
        if (stopping_) break;
        dirty_ = false;
      }
      if (informer_->GaveUp()) {  // more slices under our name than the bound
        st = informer_->LastError();
        informer_->Stop();
        informer_.reset();
        ready = false;
      } else {
        st = Reconcile();
      }
    }
    if (Stopping()) break;
    if (st.ok()) {
      backoff.Reset();
      continue;
    }
    Fail(st);
    if (!Sleep(backoff.Next(kube::RetryAfterOf(st)))) break;
    std::lock_guard<std::mutex> lock(mu_);
    dirty_ = true;  // try again
  }
  if (informer_) informer_->Stop();
}

Status SlicePublisher::Setup() {
  if (!status().version) RETURN_IF_ERROR(DiscoverVersion());
  if (node_uid_.empty()) RETURN_IF_ERROR(ReadNode());
  if (!informer_) {
    view_.Clear();
    kube::InformerOptions io;
    io.path = SlicesPath();
    io.field_selector = "spec.nodeName=" + options_.node_name + ",spec.driver=" + options_.driver;
    io.watch_timeout_seconds = options_.watch_timeout_seconds;
    io.backoff = options_.backoff;
    io.backoff_seed = options_.backoff_seed;
    io.max_objects = options_.max_slices;
    io.max_bytes = kMaxSliceBytes;
    io.on_event = [this](kube::WatchEventType, const kube::CachedObject&) {
      {
        std::lock_guard<std::mutex> lock(mu_);
        dirty_ = true;
      }
      cv_.notify_all();
    };
    informer_ = std::make_unique<kube::Informer>(client_, std::move(io));
    if (Status st = informer_->Start(); !st.ok()) {
      informer_.reset();
      return st;
    }
  }
  // The informer retries by itself; its failures show in the status meanwhile.
  while (!informer_->WaitForSync(std::chrono::milliseconds(2))) {
    if (Stopping()) return Status::Unavailable("slice publisher stopping");
    if (informer_->GaveUp()) {
      Status st = informer_->LastError();
      informer_->Stop();
      informer_.reset();
      return st;
    }
    if (Status st = informer_->LastError(); !st.ok()) {
      std::lock_guard<std::mutex> lock(mu_);
      status_.last_error = st;
    }
  }
  std::lock_guard<std::mutex> lock(mu_);
  dirty_ = true;  // reconcile once synced, even with no slice to report
  return Status::Ok();
}

Status SlicePublisher::DiscoverVersion() {
  const std::string off = "the API server does not serve resource.k8s.io (DRA off?)";
  Result<kube::Response> r = Call(kube::Verb::kGet, kGroupPath);
  if (!r.ok()) {
    if (kube::IsNotFound(r.status())) {
      return Status::FailedPrecondition(off + ": GET " + kGroupPath + " answered 404");
    }
    return r.status();
  }
  json group = json::parse(r->body, nullptr, false);
  std::vector<std::string> served;
  if (group.is_object() && group.contains("versions") && group["versions"].is_array()) {
    for (const json& v : group["versions"]) {
      if (v.is_object() && v.contains("version") && v["version"].is_string()) {
        served.push_back(v["version"].get<std::string>());
      }
    }
  }
  for (ApiVersion want : {ApiVersion::kV1, ApiVersion::kV1beta2, ApiVersion::kV1beta1}) {
    for (const std::string& v : served) {
      if (v != ApiVersionName(want)) continue;
      version_ = want;
      std::lock_guard<std::mutex> lock(mu_);
      status_.version = want;
      return Status::Ok();
    }
  }
  std::string list;
  for (const std::string& v : served) list += (list.empty() ? "" : ", ") + v;
  return Status::FailedPrecondition(off + ": it serves none of v1, v1beta2, v1beta1 (served: " +
                                    (list.empty() ? "none" : list) + ")");
}

Status SlicePublisher::ReadNode() {
  const std::string path = "/api/v1/nodes/" + options_.node_name;
  Result<kube::Response> r = Call(kube::Verb::kGet, path);
  if (!r.ok()) {
    if (kube::IsNotFound(r.status())) {
      return Status::NotFound("node \"" + options_.node_name +
                              "\" not found: its ResourceSlices need it as their owner (is "
                              "--node-name / NODE_NAME right?)");
    }
    return r.status();
  }
  const json node = json::parse(r->body, nullptr, false);
  const std::string uid = Field(node, "/metadata/uid");
  if (uid.empty()) return Status::InvalidArgument("GET " + path + ": the Node has no metadata.uid");
  node_uid_ = uid;
  node_fresh_ = true;
  std::lock_guard<std::mutex> lock(mu_);
  status_.node_uid = uid;
  status_.container_runtime = Field(node, "/status/nodeInfo/containerRuntimeVersion");
  return Status::Ok();
}

Status SlicePublisher::Reconcile() {
  PoolContent pool;
  uint64_t serial = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!desired_) return Status::Ok();  // nothing given yet
    pool = *desired_;
    serial = desired_serial_;
  }
  wrote_ = false;
  for (int round = 0; round < kMaxPlans; ++round) {
    if (Stopping()) return Status::Ok();
    PoolContent wanted = shared_dropped_ ? WithoutSharedDevices(pool) : pool;
    if (taints_dropped_) wanted = WithoutTaints(wanted);
    std::vector<json> existing = view_.Merge(informer_->List(), informer_->ResourceVersion());
    SlicePlan plan = PlanSlices(existing, wanted, {version_, node_uid_, 0}, last_generation_);
    if ((existing.empty() || !plan.creates.empty()) && !node_fresh_) {
      // Slices to create: the first publication, a generation bump, or every slice gone (the
      // kubelet's wipe, which the view may not show yet while one of our writes is in it; or
      // the garbage collector after the Node was made again, with a new uid that our slices
      // must name or they go again). The Node is read first: its uid and its runtime.
      RETURN_IF_ERROR(ReadNode());
      plan = PlanSlices(existing, wanted, {version_, node_uid_, 0}, last_generation_);
    }
    if (plan.empty()) {
      last_generation_ = std::max(last_generation_, plan.generation);
      node_fresh_ = false;  // read it again when every slice is gone
      {
        std::lock_guard<std::mutex> lock(mu_);
        status_.generation = plan.generation;
        status_.slices = SplitDevices(wanted).size();
        status_.last_error = Status::Ok();
        if (wrote_) ++status_.publish_count;
        if (serial == desired_serial_) {
          status_.published = true;
          if (since_) {
            status_.last_latency =
                std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - *since_);
            since_.reset();
          }
        }
      }
      cv_.notify_all();
      if (wrote_) {
        LogInfo("ResourceSlices published", {{"driver", options_.driver},
                                             {"node", options_.node_name},
                                             {"generation", std::to_string(plan.generation)},
                                             {"devices", std::to_string(wanted.devices.size())}});
      }
      return Status::Ok();
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      status_.published = false;  // e.g. wiped: not ready until written again
    }
    RETURN_IF_ERROR(Execute(plan));
    last_generation_ = std::max(last_generation_, plan.generation);
    // A Node read is fresh for the slices it was read for: should these be wiped too before
    // the round that sees them (a kubelet restart while we re-create after its first wipe),
    // the Node is read again, with the runtime it reports by then.
    if (!plan.creates.empty()) node_fresh_ = false;
  }
  return Status::Internal("the ResourceSlices of node \"" + options_.node_name +
                          "\" did not settle after " + std::to_string(kMaxPlans) +
                          " rounds of writes (someone else keeps changing them?)");
}

Status SlicePublisher::Execute(const SlicePlan& plan) {
  const std::string base = SlicesPath() + "/";
  auto count_write = [&] {
    wrote_ = true;
    std::lock_guard<std::mutex> lock(mu_);
    ++status_.writes;
  };
  for (const json& slice : plan.deletes) {
    const std::string name = Field(slice, "/metadata/name");
    const std::string rv = Field(slice, "/metadata/resourceVersion");
    const json options = {
        {"apiVersion", "v1"},
        {"kind", "DeleteOptions"},
        {"preconditions", {{"uid", Field(slice, "/metadata/uid")}, {"resourceVersion", rv}}}};
    Result<kube::Response> r = Call(kube::Verb::kDelete, base + name, DumpJson(options));
    if (r.ok() || kube::IsNotFound(r.status())) {
      view_.Deleted(name);
      if (r.ok()) count_write();
      continue;
    }
    if (!kube::IsConflict(r.status())) return r.status();
    return Reread(name);  // and plan again
  }
  for (const json& slice : plan.updates) {
    const std::string name = Field(slice, "/metadata/name");
    Result<kube::Response> r = Call(kube::Verb::kPut, base + name, DumpJson(slice));
    if (!r.ok()) {
      if (!kube::IsConflict(r.status()) && !kube::IsNotFound(r.status())) return r.status();
      return Reread(name);  // and plan again
    }
    json stored = json::parse(r->body, nullptr, false);
    view_.Wrote(stored);
    CheckShared(slice, stored);
    CheckTaints(slice, stored);
    count_write();
  }
  for (const json& slice : plan.creates) {
    Result<kube::Response> r = Call(kube::Verb::kPost, SlicesPath(), DumpJson(slice));
    if (!r.ok()) {
      if (!kube::IsConflict(r.status())) return r.status();
      return Status::Ok();  // a generated name taken: plan again
    }
    json stored = json::parse(r->body, nullptr, false);
    view_.Wrote(stored);
    CheckShared(slice, stored);
    CheckTaints(slice, stored);
    count_write();
  }
  return Status::Ok();
}

Status SlicePublisher::Reread(const std::string& name) {
  Result<kube::Response> r = Call(kube::Verb::kGet, SlicesPath() + "/" + name);
  if (r.ok()) {
    view_.Wrote(json::parse(r->body, nullptr, false));
    return Status::Ok();
  }
  if (!kube::IsNotFound(r.status())) return r.status();
  view_.Deleted(name);
  return Status::Ok();
}

void SlicePublisher::CheckShared(const json& sent, const json& returned) {
  std::vector<std::string> dropped = DroppedSharedDevices(sent, returned, version_);
  if (dropped.empty() || shared_dropped_) return;
  shared_dropped_ = true;
  std::string names;
  for (const std::string& n : dropped) names += (names.empty() ? "" : ", ") + n;
  Status refused = Status::FailedPrecondition(
      "shared DRA resources need consumable capacity: Kubernetes 1.36+ "
      "(DRAConsumableCapacity); the API server dropped allowMultipleAllocations from " +
      names + ", so the shared devices are left out of the published pool");
  {
    std::lock_guard<std::mutex> lock(mu_);
    status_.shared_refused = refused;
  }
  LogWarn("shared DRA devices refused",
          {{"driver", options_.driver}, {"error", refused.ToString()}});
}

void SlicePublisher::CheckTaints(const json& sent, const json& returned) {
  if (taints_dropped_ || !DroppedTaints(sent, returned, version_)) return;
  taints_dropped_ = true;
  Status refused = Status::FailedPrecondition(
      "the API server does not serve device taints (DRADeviceTaints): unhealthy and vanished "
      "devices are published without them, and the DeviceClasses' healthy selector keeps new "
      "claims off them");
  {
    std::lock_guard<std::mutex> lock(mu_);
    status_.taints_refused = refused;
  }
  LogWarn("DRA device taints not served",
          {{"driver", options_.driver}, {"error", refused.ToString()}});
}

}  // namespace hcashare::dra
