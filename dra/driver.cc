#include "dra/driver.h"

#include <utility>

#include "common/log.h"
#include "dra/node_server.h"
#include "dra/publisher.h"
#include "kube/config.h"
#include "kube/rest.h"
#include "kubelet/podresources.h"

namespace hcashare::dra {
namespace {

// The claims of `driver` this node's containers hold, from the kubelet's pod-resources.
std::function<Result<std::vector<KubeletClaim>>()> KubeletClaimsOf(const DriverOptions& o) {
  kubelet::PodResourcesOptions pr;
  pr.kubelet_root = o.kubelet_root;
  pr.timeout = std::chrono::seconds(10);
  const std::string driver = o.driver;
  return [pr, driver] { return kubelet::ListKubeletDraClaims(pr, driver); };
}

// Claims read with the resource.k8s.io version the publisher found the server to serve.
class DiscoveredClaimSource final : public ClaimSource {
 public:
  DiscoveredClaimSource(kube::RestClient* client, const SlicePublisher* publisher)
      : client_(client), publisher_(publisher) {}
  Result<std::string> GetClaim(const std::string& ns, const std::string& name) override {
    const ApiVersion v = publisher_->status().version.value_or(ApiVersion::kV1);
    // 10 s per GET: the kubelet gives a whole Prepare call 45 s.
    return RestClaimSource(client_, ApiVersionName(v)).GetClaim(ns, name);
  }

 private:
  kube::RestClient* const client_;
  const SlicePublisher* const publisher_;
};

}  // namespace

DraDriver::DraDriver(DriverOptions options) : opts_(std::move(options)) {}

DraDriver::~DraDriver() { Stop(); }

Result<std::unique_ptr<DraDriver>> DraDriver::Create(DriverOptions options) {
  if (options.node_name.empty()) {
    return Status::InvalidArgument(
        "DRA resources need this node's name: set --node-name, or NODE_NAME (the DaemonSet "
        "sets it from spec.nodeName)");
  }
  std::unique_ptr<DraDriver> d(new DraDriver(std::move(options)));
  ASSIGN_OR_RETURN(kube::ClusterConfig cluster, kube::LoadClusterConfig(d->opts_.kubeconfig, ""));
  kube::RestOptions rest;
  rest.user_agent = kube::UserAgent("hcashare-device-plugin");
  // A node's pods starting at once each GET their claims; the publisher's writes share it.
  rest.qps = 20;
  rest.burst = 40;
  ASSIGN_OR_RETURN(d->client_, kube::RestClient::Create(cluster, rest));
  PublisherOptions po;
  po.driver = d->opts_.driver;
  po.node_name = d->opts_.node_name;
  d->publisher_ = std::make_unique<SlicePublisher>(d->client_.get(), po);
  d->claims_ = std::make_unique<DiscoveredClaimSource>(d->client_.get(), d->publisher_.get());
  // Collection reads claims at a pace of its own, never in the way of Prepare's reads.
  kube::RestOptions slow = rest;
  slow.qps = d->opts_.collect_qps;
  slow.burst = 1;
  ASSIGN_OR_RETURN(d->collect_client_, kube::RestClient::Create(cluster, slow));
  d->collect_claims_ =
      std::make_unique<DiscoveredClaimSource>(d->collect_client_.get(), d->publisher_.get());
  PreparerOptions prep;
  prep.driver = d->opts_.driver;
  prep.pool = d->opts_.node_name;
  prep.cdi_dir = d->opts_.cdi_dir;
  prep.checkpoint_path = CheckpointPath(d->opts_.kubelet_root, d->opts_.driver);
  prep.owner = d->opts_.owner.empty() ? d->opts_.kubelet_root : d->opts_.owner;
  DraDriver* self = d.get();
  prep.runtime_refusal = [self] { return self->RuntimeRefusal(); };
  prep.kubelet_claims = KubeletClaimsOf(d->opts_);
  ASSIGN_OR_RETURN(d->preparer_,
                   Preparer::Create(prep, d->claims_.get(),
                                    [self](const std::string& pool, const std::string& device) {
                                      return self->Lookup(pool, device);
                                    }));
  NodeServerOptions so;
  so.kubelet_root = d->opts_.kubelet_root;
  so.driver = d->opts_.driver;
  so.serve_health = d->opts_.serve_health;
  ClaimStatusOptions cs;
  cs.dir = NetworkStatusDir(d->opts_.kubelet_root, d->opts_.driver);
  cs.driver = d->opts_.driver;
  const SlicePublisher* publisher = d->publisher_.get();
  cs.api_version = [publisher] {
    return std::string(ApiVersionName(publisher->status().version.value_or(ApiVersion::kV1)));
  };
  d->status_writer_ = std::make_unique<ClaimStatusWriter>(cs, d->client_.get());
  d->health_.StartKeepAlive(kHealthKeepAlive);
  d->server_ = std::make_unique<NodeServer>(so, *d->preparer_, d->health_);
  return d;
}

Status DraDriver::Start() {
  RETURN_IF_ERROR(publisher_->Start());
  Status served = server_->Start();
  if (!served.ok()) {
    publisher_->Stop();
    return served;
  }
  if (opts_.collect_interval.count() > 0) collector_ = std::thread([this] { CollectLoop(); });
  if (opts_.status_interval.count() > 0) status_thread_ = std::thread([this] { StatusLoop(); });
  LogInfo("DRA driver started", {{"driver", opts_.driver},
                                 {"node", opts_.node_name},
                                 {"endpoint", server_->DraSocketPath()}});
  return Status::Ok();
}

void DraDriver::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  stop_cv_.notify_all();
  if (collector_.joinable()) collector_.join();
  if (status_thread_.joinable()) status_thread_.join();
  if (server_) server_->Stop();
  if (publisher_) publisher_->Stop();
}

void DraDriver::CollectLoop() {
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(mu_);
      if (stop_cv_.wait_for(lock, opts_.collect_interval, [this] { return stopping_; })) return;
    }
    const CollectReport r =
        preparer_->Collect(collect_claims_.get(), opts_.collect_max_checks, opts_.collect_grace);
    if (r.collected > 0) {
      std::lock_guard<std::mutex> lock(mu_);
      collected_ += r.collected;
    }
  }
}

void DraDriver::StatusLoop() {
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(mu_);
      if (stop_cv_.wait_for(lock, opts_.status_interval, [this] { return stopping_; })) return;
    }
    status_writer_->Sync();
  }
}

void DraDriver::Update(PoolContent pool, std::vector<PreparableDevice> devices,
                       std::vector<DeviceHealthEntry> health) {
  auto table = std::make_shared<std::map<std::string, PreparableDevice>>();
  for (auto& d : devices) {
    std::string name = d.name;
    table->emplace(std::move(name), std::move(d));
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    devices_ = std::move(table);
  }
  preparer_->CompleteRecovered();
  health_.Publish(std::move(health));
  if (Status st = publisher_->Update(std::move(pool)); !st.ok()) {
    LogError("cannot publish the DRA pool", {{"driver", opts_.driver}, {"error", st.ToString()}});
  }
}

std::optional<PreparableDevice> DraDriver::Lookup(const std::string& pool,
                                                  const std::string& device) const {
  if (pool != opts_.node_name) return std::nullopt;
  std::shared_ptr<const std::map<std::string, PreparableDevice>> table;
  {
    std::lock_guard<std::mutex> lock(mu_);
    table = devices_;
  }
  if (!table) return std::nullopt;
  auto it = table->find(device);
  if (it == table->end()) return std::nullopt;
  return it->second;
}

hostfacts::RuntimeCdi DraDriver::Runtime(const std::string& reported) const {
  if (reported.empty()) return {};
  hostfacts::RuntimeCdi r = hostfacts::ClassifyContainerRuntime(reported);
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (logged_runtime_ == reported) return r;
    logged_runtime_ = reported;
  }
  const bool none = r.support == hostfacts::CdiSupport::kNone;
  std::string msg = none ? "the node's container runtime cannot give containers CDI devices: "
                           "DRA claims of this driver are refused until it can"
                         : "the node's container runtime";
  msg += " (" + r.why + ")";
  if (r.support == hostfacts::CdiSupport::kWhenEnabled) {
    msg += "; `hcashare doctor` on the node checks its config";
  }
  const LogLevel level = none                                           ? LogLevel::kError
                         : r.support == hostfacts::CdiSupport::kDefault ? LogLevel::kInfo
                                                                        : LogLevel::kWarn;
  Log(level, msg,
      {{"driver", opts_.driver},
       {"runtime", r.runtime},
       {"cdi", hostfacts::CdiSupportName(r.support)}});
  return r;
}

std::string DraDriver::RuntimeRefusal() const {
  const hostfacts::RuntimeCdi r = Runtime(publisher_->status().container_runtime);
  if (r.support != hostfacts::CdiSupport::kNone) return "";
  return "the node's container runtime " + r.runtime + " cannot give containers CDI devices (" +
         r.why +
         "), so the pod would start without its RDMA devices; DRA needs containerd 1.7+ "
         "with enable_cdi = true, containerd 2.x, or CRI-O 1.23+";
}

std::vector<HeldDevice> DraDriver::HeldDevices() const {
  std::vector<HeldDevice> out;
  for (const PreparedDevice& d : preparer_->PreparedDevices()) {
    if (d.pool != opts_.node_name || d.pci_address.empty()) continue;
    out.push_back({d.device, d.pci_address, d.resource, d.rdma_devices});
  }
  return out;
}

DriverState DraDriver::State() const {
  DriverState s;
  const RegistrationState reg = server_->registration();
  const PublisherStatus pub = publisher_->status();
  s.registered = reg.registered;
  s.published = pub.published;
  s.generation = pub.generation;
  s.publish_latency = pub.last_latency;
  s.checkpoint_kept_aside = preparer_->kept_aside();
  s.prepared_claims = preparer_->PreparedCount();
  {
    std::lock_guard<std::mutex> lock(mu_);
    s.collected_claims = collected_;
  }
  s.claim_status_written = status_writer_->applied_total();
  s.claim_status_refused = status_writer_->refused();
  if (!pub.shared_refused.ok()) s.shared_refused = pub.shared_refused.message();
  if (!pub.taints_refused.ok()) s.taints_refused = pub.taints_refused.message();
  const hostfacts::RuntimeCdi runtime = Runtime(pub.container_runtime);
  s.container_runtime = runtime.runtime;
  s.runtime_cdi = runtime.support;
  if (!s.registered) {
    s.why_not = reg.notifications == 0 ? "the kubelet has not registered the DRA driver yet"
                                       : "the kubelet refused the DRA driver: " + reg.error;
  } else if (!s.published) {
    s.why_not = pub.last_error.ok() ? "ResourceSlices not published yet"
                                    : "ResourceSlices not published: " + pub.last_error.message();
  }
  return s;
}

}  // namespace hcashare::dra
