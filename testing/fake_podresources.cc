#include "testing/fake_podresources.h"

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <filesystem>
#include <utility>

#include <nlohmann/json.hpp>

#include "kubelet/api/podresources_v1.grpc.pb.h"
#include "kubelet/api/podresources_v1alpha1.grpc.pb.h"

namespace fs = std::filesystem;

namespace hcashare::fake {

namespace {

const char kRateLimited[] = "rejected by rate limit";
const char kNoV1[] = "unknown service v1.PodResourcesLister";

// The NUMA node of a v1 entry; v1alpha1 has no topology.
void SetNuma(v1::ContainerDevices* cd, int64_t node) {
  cd->mutable_topology()->add_nodes()->set_id(node);
}
void SetNuma(v1alpha1::ContainerDevices*, int64_t) {}

void AddClaims(v1::ContainerResources* cr, const std::vector<FakeClaimDevice>& claims) {
  for (const FakeClaimDevice& c : claims) {
    auto* dr = cr->add_dynamic_resources();
    dr->set_claim_namespace(c.claim_namespace);
    dr->set_claim_name(c.claim_name);
    auto* r = dr->add_claim_resources();
    r->set_driver_name(c.driver);
    r->set_pool_name(c.pool);
    r->set_device_name(c.device);
    for (const std::string& name : c.cdi_devices) r->add_cdi_devices()->set_name(name);
  }
}
void AddClaims(v1alpha1::ContainerResources*, const std::vector<FakeClaimDevice>&) {}

// Fills `out` (a v1 or v1alpha1 PodResources) the way the kubelet does: one
// ContainerDevices entry per device ID and NUMA node, each carrying its node (v1 only).
template <typename PodResourcesMsg>
void FillPod(const std::string& ns, const std::string& name,
             const std::vector<FakeContainer>& containers, PodResourcesMsg* out) {
  out->set_name(name);
  out->set_namespace_(ns);
  for (const FakeContainer& c : containers) {
    auto* cr = out->add_containers();
    cr->set_name(c.name);
    AddClaims(cr, c.claims);
    for (const FakeDevices& d : c.devices) {
      for (const std::string& id : d.ids) {
        if (d.numa.empty()) {
          auto* cd = cr->add_devices();
          cd->set_resource_name(d.resource);
          cd->add_device_ids(id);
          continue;
        }
        for (int64_t node : d.numa) {
          auto* cd = cr->add_devices();
          cd->set_resource_name(d.resource);
          cd->add_device_ids(id);
          SetNuma(cd, node);
        }
      }
    }
  }
}

}  // namespace

class FakePodResources::V1Service final : public v1::PodResourcesLister::Service {
 public:
  explicit V1Service(FakePodResources* f) : f_(f) {}

  grpc::Status List(grpc::ServerContext*, const v1::ListPodResourcesRequest*,
                    v1::ListPodResourcesResponse* resp) override {
    if (f_->CountAndLimit(Method::kV1List)) return Exhausted();
    std::lock_guard<std::mutex> lock(f_->mu_);
    if (f_->v1_mode_ == V1Mode::kUnimplemented) return {grpc::StatusCode::UNIMPLEMENTED, kNoV1};
    for (const Pod& p : f_->pods_) {
      FillPod(p.ns, p.name, p.containers, resp->add_pod_resources());
    }
    return grpc::Status::OK;
  }

  grpc::Status Get(grpc::ServerContext*, const v1::GetPodResourcesRequest* req,
                   v1::GetPodResourcesResponse* resp) override {
    if (f_->CountAndLimit(Method::kV1Get)) return Exhausted();
    std::lock_guard<std::mutex> lock(f_->mu_);
    if (f_->v1_mode_ == V1Mode::kUnimplemented) return {grpc::StatusCode::UNIMPLEMENTED, kNoV1};
    switch (f_->get_mode_) {
      case GetMode::kServe:
        break;
      case GetMode::kDisabled:
        return {grpc::StatusCode::UNKNOWN, "PodResources API Get method disabled"};
      case GetMode::kUnimplemented:
        return {grpc::StatusCode::UNIMPLEMENTED,
                "unknown method Get for service v1.PodResourcesLister"};
    }
    // The kubelet's pod manager keeps one pod per namespace/name: the latest.
    for (auto it = f_->pods_.rbegin(); it != f_->pods_.rend(); ++it) {
      if (it->ns == req->pod_namespace() && it->name == req->pod_name()) {
        FillPod(it->ns, it->name, it->containers, resp->mutable_pod_resources());
        return grpc::Status::OK;
      }
    }
    return {grpc::StatusCode::UNKNOWN,
            "pod " + req->pod_name() + " not found in namespace " + req->pod_namespace()};
  }

 private:
  static grpc::Status Exhausted() { return {grpc::StatusCode::RESOURCE_EXHAUSTED, kRateLimited}; }
  FakePodResources* f_;
};

class FakePodResources::V1alpha1Service final : public v1alpha1::PodResourcesLister::Service {
 public:
  explicit V1alpha1Service(FakePodResources* f) : f_(f) {}

  grpc::Status List(grpc::ServerContext*, const v1alpha1::ListPodResourcesRequest*,
                    v1alpha1::ListPodResourcesResponse* resp) override {
    if (f_->CountAndLimit(Method::kV1alpha1List)) {
      return {grpc::StatusCode::RESOURCE_EXHAUSTED, kRateLimited};
    }
    std::lock_guard<std::mutex> lock(f_->mu_);
    for (const Pod& p : f_->pods_) {
      FillPod(p.ns, p.name, p.containers, resp->add_pod_resources());
    }
    return grpc::Status::OK;
  }

 private:
  FakePodResources* f_;
};

FakePodResources::FakePodResources(std::string socket_path)
    : socket_path_(std::move(socket_path)) {}

FakePodResources::~FakePodResources() { Stop(); }

Status FakePodResources::Start() {
  std::error_code ec;
  fs::create_directories(fs::path(socket_path_).parent_path(), ec);
  v1_ = std::make_unique<V1Service>(this);
  v1alpha1_ = std::make_unique<V1alpha1Service>(this);
  grpc::ServerBuilder builder;
  builder.AddListeningPort("unix:" + socket_path_, grpc::InsecureServerCredentials());
  builder.RegisterService(v1_.get());
  builder.RegisterService(v1alpha1_.get());
  server_ = builder.BuildAndStart();
  if (!server_) return Status::Unavailable("fake pod-resources cannot serve " + socket_path_);
  return Status::Ok();
}

void FakePodResources::Stop() {
  if (!server_) return;
  server_->Shutdown(std::chrono::system_clock::now() + std::chrono::milliseconds(500));
  server_.reset();
}

void FakePodResources::AddPod(const std::string& ns, const std::string& name,
                              const std::string& uid, std::vector<FakeContainer> containers) {
  std::lock_guard<std::mutex> lock(mu_);
  pods_.push_back(Pod{ns, name, uid, std::move(containers)});
}

void FakePodResources::ClearPods() {
  std::lock_guard<std::mutex> lock(mu_);
  pods_.clear();
}

void FakePodResources::SetGetMode(GetMode mode) {
  std::lock_guard<std::mutex> lock(mu_);
  get_mode_ = mode;
}

void FakePodResources::SetV1Mode(V1Mode mode) {
  std::lock_guard<std::mutex> lock(mu_);
  v1_mode_ = mode;
}

void FakePodResources::FailNextWithResourceExhausted(int n, std::optional<Method> only) {
  std::lock_guard<std::mutex> lock(mu_);
  exhausted_left_ = n;
  exhausted_only_ = only;
}

int FakePodResources::Calls(Method method) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = calls_.find(method);
  return it == calls_.end() ? 0 : it->second;
}

void FakePodResources::ResetCalls() {
  std::lock_guard<std::mutex> lock(mu_);
  calls_.clear();
}

bool FakePodResources::CountAndLimit(Method method) {
  std::lock_guard<std::mutex> lock(mu_);
  ++calls_[method];
  // The kubelet's rate limiter is an interceptor: it runs before the handler, but an
  // unknown service never reaches it.
  if (v1_mode_ == V1Mode::kUnimplemented && method != Method::kV1alpha1List) return false;
  if (exhausted_left_ == 0 || (exhausted_only_ && *exhausted_only_ != method)) return false;
  if (exhausted_left_ > 0) --exhausted_left_;
  return true;
}

std::string FakePodResources::CheckpointJson(bool legacy_flat_ids) const {
  using nlohmann::json;
  std::lock_guard<std::mutex> lock(mu_);
  json entries = json::array();
  for (const Pod& p : pods_) {
    for (const FakeContainer& c : p.containers) {
      for (const FakeDevices& d : c.devices) {
        json ids;
        if (legacy_flat_ids) {
          ids = d.ids;
        } else {
          // The kubelet files a device under each of its NUMA nodes.
          ids = json::object();
          for (int64_t node : d.numa) ids[std::to_string(node)] = d.ids;
          if (d.numa.empty()) ids["-1"] = d.ids;
        }
        entries.push_back({{"PodUID", p.uid},
                           {"ContainerName", c.name},
                           {"ResourceName", d.resource},
                           {"DeviceIDs", ids},
                           {"AllocResp", ""}});
      }
    }
  }
  json doc = {{"Data", {{"PodDeviceEntries", entries}, {"RegisteredDevices", json::object()}}},
              {"Checksum", 1234567890}};
  return doc.dump();
}

}  // namespace hcashare::fake
