// DraDriver: the DRA front-end of hcashare-device-plugin (issue 27), beside the device
// plugin's servers in the same daemon, on the same config and host model.
//
// It owns the API client (kubeconfig, or the in-cluster config), the ResourceSlice publisher
// (dra/publisher.h), the Preparer (dra/prepare.h) and the kubelet-facing sockets
// (dra/node_server.h). The daemon's control loop hands it each new view of the host
// (Update): the pool to publish, the devices Prepare may hand out and their health; readers
// (Prepare, the health stream) never wait for the loop. Nothing contacts the API server
// before Start(), and the daemon creates no DraDriver without DRA resources.
#pragma once

#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "common/status.h"
#include "dra/claim_status.h"
#include "dra/devices.h"
#include "dra/health.h"
#include "dra/prepare.h"
#include "dra/slices.h"
#include "hostfacts/container_runtime.h"

namespace hcashare::kube {
class RestClient;
}

namespace hcashare::dra {

class NodeServer;
class SlicePublisher;

// Where and as whom the driver runs.
struct DriverOptions {
  std::string driver = kDefaultDriver;  // the config's draDriver
  std::string node_name;                // --node-name, else $NODE_NAME
  std::string kubeconfig;               // "" for the in-cluster config
  std::string kubelet_root = "/var/lib/kubelet";
  std::string cdi_dir = "/var/run/cdi";
  // Names the CDI files' ledger (the canonical kubelet root, as the device plugin's).
  std::string owner;
  bool serve_health = true;
  // Collection of checkpoint entries no pod holds (Preparer::Collect): a round each
  // `collect_interval` (0: never), at most `collect_max_checks` claims read per round with an
  // API client of its own at `collect_qps`, entries younger than `collect_grace` left.
  std::chrono::milliseconds collect_interval{std::chrono::seconds(30)};
  size_t collect_max_checks = 150;
  double collect_qps = 5;
  std::chrono::seconds collect_grace{std::chrono::minutes(5)};
  // Claims' device status from the CNI's network status files (dra/claim_status.h): a round
  // each `status_interval` (0: never written).
  std::chrono::milliseconds status_interval{1000};
};

// What the probes and metrics report.
struct DriverState {
  bool registered = false;     // the kubelet accepted our registration
  bool published = false;      // the API server holds the pool last given
  std::string why_not;         // what readiness waits for; "" when ready
  std::string shared_refused;  // non-empty: shared devices left out, and why
  std::string taints_refused;  // non-empty: the server does not serve device taints
  // The node's container runtime as the kubelet reports it ("" until the Node is read), and
  // whether its containers get CDI devices.
  std::string container_runtime;
  hostfacts::CdiSupport runtime_cdi = hostfacts::CdiSupport::kUnknown;
  int64_t generation = 0;
  std::chrono::microseconds publish_latency{0};
  std::string checkpoint_kept_aside;  // where an unusable checkpoint went at start, or ""
  size_t prepared_claims = 0;         // entries of the checkpoint
  uint64_t collected_claims = 0;      // entries collected since start
  uint64_t claim_status_written = 0;  // claims' device status writes since start
  bool claim_status_refused = false;  // the server refused the last one with 403
};

class DraDriver {
 public:
  // Reads the cluster configuration and makes the API client, the publisher and the
  // Preparer (which loads its checkpoint). InvalidArgument for an empty or invalid node name
  // ("set --node-name or NODE_NAME"); the config loader's errors otherwise.
  static Result<std::unique_ptr<DraDriver>> Create(DriverOptions options);
  // Stop().
  ~DraDriver();
  DraDriver(const DraDriver&) = delete;
  DraDriver& operator=(const DraDriver&) = delete;

  // Starts publishing, serves the kubelet's sockets and starts collecting.
  Status Start();
  // Stops serving and publishing; what was published and prepared stays (the successor
  // adopts it). Idempotent.
  void Stop();

  // The host's current view: the pool to publish (its driver and node are ours), the devices
  // Prepare may hand out by name, and their health. Thread-safe; never blocks on the network.
  void Update(PoolContent pool, std::vector<PreparableDevice> devices,
              std::vector<DeviceHealthEntry> health);

  // For /readyz and the metrics.
  DriverState State() const;
  // The devices of this node's pool that prepared claims hold (the checkpoint), for
  // KeepHeldDevices.
  std::vector<HeldDevice> HeldDevices() const;
  const DriverOptions& options() const { return opts_; }

 private:
  explicit DraDriver(DriverOptions options);
  // The device `device` of pool `pool`, or nullopt (Prepare's DeviceLookup).
  std::optional<PreparableDevice> Lookup(const std::string& pool, const std::string& device) const;
  // `reported` (the Node's containerRuntimeVersion, "" unread) classified; logs each new
  // one once.
  hostfacts::RuntimeCdi Runtime(const std::string& reported) const;
  // Prepare's runtime_refusal: why this node's containers cannot get CDI devices, or "".
  std::string RuntimeRefusal() const;
  // The collector thread: a Collect round each collect_interval until Stop.
  void CollectLoop();
  // The status thread: a ClaimStatusWriter round each status_interval until Stop.
  void StatusLoop();

  const DriverOptions opts_;
  std::unique_ptr<kube::RestClient> client_;
  std::unique_ptr<kube::RestClient> collect_client_;  // its own rate limit
  std::unique_ptr<ClaimSource> claims_;
  std::unique_ptr<ClaimSource> collect_claims_;
  std::unique_ptr<SlicePublisher> publisher_;
  std::unique_ptr<Preparer> preparer_;
  HealthSource health_;
  std::unique_ptr<NodeServer> server_;

  mutable std::mutex mu_;
  std::shared_ptr<const std::map<std::string, PreparableDevice>> devices_;  // guarded by mu_
  mutable std::string logged_runtime_;  // guarded by mu_: the runtime last logged
  bool stopping_ = false;               // guarded by mu_
  uint64_t collected_ = 0;              // guarded by mu_
  std::condition_variable stop_cv_;
  std::thread collector_;
  std::unique_ptr<ClaimStatusWriter> status_writer_;
  std::thread status_thread_;
};

}  // namespace hcashare::dra
