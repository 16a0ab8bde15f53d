// SlicePublisher: keeps one node's pool of DRA devices published as ResourceSlices in the
// API server, on a thread of its own.
//
// It finds the resource.k8s.io version the server serves (v1, else v1beta2, else v1beta1),
// GETs the Node for the owner reference (the slices go with the Node), lists and watches its
// own slices (field selector spec.nodeName=<node>,spec.driver=<driver>; kube::Informer) and
// reconciles them with the pool it was last given (Update()): when no slice is created and
// at most one changes it updates that one in place and keeps the pool generation; otherwise
// it bumps the generation, deletes obsolete slices first (with uid and resourceVersion
// preconditions), then updates, then creates (the upstream helper's order, shared reference
// "kube-api-and-dra.md" §3.5). The watch brings it back when someone deletes (the kubelet's
// wipe at its start and after 30 s without a plugin) or edits its slices. A 409 re-reads the
// object and retries at once; other failures retry after a jittered, growing delay, or the
// server's Retry-After.
//
// Shared devices (allowMultipleAllocations and a consumable capacity) need a server with
// DRAConsumableCapacity (Kubernetes 1.36+). An older server drops those fields from what it
// stores; when a slice comes back without an allowMultipleAllocations it was sent with, the
// publisher leaves the shared devices out from then on (they are never published as
// something else) and says so in Status::shared_refused.
//
// Update(), status() and Stop() are thread-safe; Stop() is prompt (a request in progress is
// cut off).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "common/status.h"
#include "dra/slice_plan.h"
#include "dra/slices.h"
#include "kube/backoff.h"
#include "kube/informer.h"
#include "kube/rest.h"

namespace hcashare::dra {

// Devices one pool may hold (64 slices of 128); Update() refuses more.
inline constexpr size_t kMaxPoolDevices = 8192;

// What to publish and how.
struct PublisherOptions {
  std::string driver = kDefaultDriver;  // spec.driver: a DNS subdomain, <= 63
  std::string node_name;                // spec.nodeName and the Node owning the slices
  kube::BackoffPolicy backoff;          // between failed attempts
  uint64_t backoff_seed = 0;            // 0: random
  int watch_timeout_seconds = 300;      // the server ends each watch of the slices after this
  // Slices of the driver on the node the watch may cache; more make the publisher fail
  // (someone else writes slices under our name).
  size_t max_slices = 1000;
};

// What the publisher has done, for readiness and metrics.
struct PublisherStatus {
  // The server holds the pool last given to Update() (less refused shared devices).
  bool published = false;
  // The last failure (discovery, the Node, a write), OK after a success since.
  Status last_error;
  // Non-OK once the server was found without consumable capacity and the shared devices
  // are left out: the message says why and what is needed.
  Status shared_refused;
  // Non-OK once the server dropped device taints (DRADeviceTaints off): they are not sent
  // any more, and only the DeviceClasses' healthy selector keeps new claims off unhealthy
  // devices.
  Status taints_refused;
  std::optional<ApiVersion> version;  // the resource.k8s.io version in use, once found
  std::string node_uid;               // the Node's metadata.uid, once read
  // The Node's status.nodeInfo.containerRuntimeVersion ("containerd://1.7.24"), once read.
  std::string container_runtime;
  int64_t generation = 0;      // the pool generation on the server
  size_t slices = 0;           // slices of the pool on the server
  uint64_t publish_count = 0;  // publications acknowledged (each one or more writes)
  uint64_t writes = 0;         // POST, PUT and DELETE calls that succeeded
  // From the Update() that gave the content to the server's acknowledgement of the last
  // publication (the answer to its last write); zero before the first.
  std::chrono::microseconds last_latency{0};
};

class SlicePublisher {
 public:
  // A publisher on `client` (which must outlive it). Nothing runs before Start().
  SlicePublisher(kube::RestClient* client, PublisherOptions options);
  // Stop().
  ~SlicePublisher();
  SlicePublisher(const SlicePublisher&) = delete;
  SlicePublisher& operator=(const SlicePublisher&) = delete;

  // Starts the thread. InvalidArgument for a driver name that is no DNS subdomain of at most
  // 63 characters, a missing or invalid node name, or bad bounds; FailedPrecondition when
  // started before (once only).
  Status Start();
  // Stops the thread promptly (a request in progress is cut off) and joins it. What was
  // published stays in the server. Idempotent.
  void Stop();

  // The pool to publish from now on (before or after Start()). Content equal to the last
  // given: nothing happens. InvalidArgument (nothing changes) when the pool's driver or node
  // is not the publisher's, its pool name is empty, or it has more than kMaxPoolDevices.
  Status Update(PoolContent pool);

  // A copy of the status.
  PublisherStatus status() const;
  // Waits until the pool last given is published or `timeout` passes; status().published.
  bool WaitPublished(std::chrono::milliseconds timeout) const;

 private:
  using Clock = std::chrono::steady_clock;

  void Run();
  // Discovery, the Node and the informer; OK once the informer is synced.
  Status Setup();
  Status DiscoverVersion();
  Status ReadNode();
  // Plans and writes until the server holds the wanted pool.
  Status Reconcile();
  // One plan's writes, in order; stops early (OK) after a 409 or 404 that a re-read
  // resolved, for the next plan.
  Status Execute(const SlicePlan& plan);
  // The slice `name` read again into the view after a 409 or 404.
  Status Reread(const std::string& name);
  // Checks an answer for shared devices the server dropped.
  void CheckShared(const nlohmann::json& sent, const nlohmann::json& returned);
  // Notices the server dropping the taints of `sent` from `returned` (once).
  void CheckTaints(const nlohmann::json& sent, const nlohmann::json& returned);
  // A request through the publisher's cancel; non-2xx answers as errors.
  Result<kube::Response> Call(kube::Verb verb, const std::string& path, std::string body = "");
  // Waits `d` or until Stop(); false when stopping.
  bool Sleep(std::chrono::milliseconds d);
  bool Stopping() const;
  void Fail(const Status& st);
  std::string SlicesPath() const;

  kube::RestClient* const client_;
  const PublisherOptions options_;

  mutable std::mutex mu_;  // guards what follows
  mutable std::condition_variable cv_;
  bool started_ = false;
  bool stopping_ = false;
  bool dirty_ = false;                      // the pool or the slices changed since the last plan
  std::optional<PoolContent> desired_;      // the pool last given
  std::optional<Clock::time_point> since_;  // the first Update() not yet acknowledged
  uint64_t desired_serial_ = 0;             // Update() calls that changed desired_
  PublisherStatus status_;

  // The publisher thread's own.
  ApiVersion version_ = ApiVersion::kV1;
  std::string node_uid_;
  bool node_fresh_ = false;  // node_uid_ read since the last publication
  std::unique_ptr<kube::Informer> informer_;
  SliceView view_;
  int64_t last_generation_ = 0;
  bool shared_dropped_ = false;  // the server dropped allowMultipleAllocations
  bool taints_dropped_ = false;  // the server dropped device taints
  bool wrote_ = false;           // the running reconcile wrote something

  kube::StreamCancel cancel_;
  std::thread thread_;
};

}  // namespace hcashare::dra
