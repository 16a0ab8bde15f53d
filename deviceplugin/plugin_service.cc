#include "deviceplugin/plugin_service.h"

#include <chrono>
#include <vector>

#include <grpcpp/impl/codegen/proto_utils.h>

#include "common/grpc_edge.h"
#include "common/log.h"
#include "common/strings.h"
#include "deviceplugin/cdi.h"
#include "deviceplugin/device_info.h"
#include "node/grpc_status.h"

namespace hcashare::dp {

grpc::ServerUnaryReactor* DevicePluginService::GetDevicePluginOptions(
    grpc::CallbackServerContext* ctx, const v1beta1::Empty*, v1beta1::DevicePluginOptions* resp) {
  GrpcCallbackScope edge;  // see common/grpc_edge.h
  resp->set_pre_start_required(false);
  resp->set_get_preferred_allocation_available(true);
  return node::FinishUnary(ctx, grpc::Status::OK);
}

grpc::ServerWriteReactor<grpc::ByteBuffer>* DevicePluginService::ListAndWatch(
    grpc::CallbackServerContext* ctx, const grpc::ByteBuffer*) {
  GrpcCallbackScope edge;  // see common/grpc_edge.h
  auto stream = std::make_unique<ListWatchStream>(state_, events_, ctx, stream_stall_limit_,
                                                  [this](ListWatchStream* s) {
                                                    std::lock_guard<std::mutex> lock(streams_mu_);
                                                    streams_.erase(s);
                                                  });
  ListWatchStream* raw = stream.get();
  std::lock_guard<std::mutex> lock(streams_mu_);
  streams_.emplace(raw, std::move(stream));
  raw->Begin();
  if (finishing_) raw->End();
  return raw;
}

void DevicePluginService::FinishStreams() {
  std::lock_guard<std::mutex> lock(streams_mu_);
  finishing_ = true;
  for (auto& [raw, stream] : streams_) stream->End();
}

Status CheckRequestSize(const Snapshot& snap, size_t ids) {
  if (ids <= static_cast<size_t>(snap.devices)) return Status::Ok();
  return Status::InvalidArgument("the request names " + std::to_string(ids) + " device IDs; " +
                                 snap.rc.FullName() + " has " + std::to_string(snap.devices));
}

DevicePluginService::CallSlot::CallSlot(DevicePluginService* s)
    : s_(s), held_(++s->calls_ <= kMaxConcurrentCalls) {
  if (held_) return;
  --s_->calls_;
  const uint64_t n = ++s_->refused_;
  if (n == 1 || n % 1000 == 0) {
    LogWarn("too many concurrent calls; refusing (the kubelet makes one at a time)",
            {{"resource", s_->state_.Current()->rc.FullName()},
             {"limit", kMaxConcurrentCalls},
             {"refused_so_far", n}});
  }
}

DevicePluginService::CallSlot::~CallSlot() {
  if (held_) --s_->calls_;
}

namespace {

const grpc::Status kBusy(grpc::StatusCode::RESOURCE_EXHAUSTED, "too many concurrent calls");

// The message in a raw method's request (these methods parse only once they hold a slot).
template <typename T>
grpc::Status ParseRaw(const grpc::ByteBuffer* raw, T* msg) {
  grpc::ByteBuffer copy(*raw);  // shares the slices; Deserialize consumes its argument
  return grpc::SerializationTraits<T>::Deserialize(&copy, msg);
}

// `msg` as a raw method's response.
template <typename T>
grpc::Status SerializeRaw(const T& msg, grpc::ByteBuffer* raw) {
  bool own_buffer = false;
  return grpc::SerializationTraits<T>::Serialize(msg, raw, &own_buffer);
}

}  // namespace

grpc::ServerUnaryReactor* DevicePluginService::GetPreferredAllocation(
    grpc::CallbackServerContext* ctx, const grpc::ByteBuffer* raw_req, grpc::ByteBuffer* raw_resp) {
  GrpcCallbackScope edge;  // see common/grpc_edge.h
  CallSlot slot(this);
  if (!slot.held()) return node::FinishUnary(ctx, kBusy);  // before the request is parsed
  v1beta1::PreferredAllocationRequest req;
  if (grpc::Status st = ParseRaw(raw_req, &req); !st.ok()) return node::FinishUnary(ctx, st);
  auto snap = state_.Current();
  for (const auto& c : req.container_requests()) {
    // must_include is a subset of available: each is a list of the resource's devices.
    for (int n : {c.available_deviceids_size(), c.must_include_deviceids_size()}) {
      if (Status st = CheckRequestSize(*snap, static_cast<size_t>(n)); !st.ok()) {
        return node::FinishUnary(ctx, node::ToGrpc(st));
      }
    }
  }
  v1beta1::PreferredAllocationResponse resp;
  for (const auto& c : req.container_requests()) {
    std::vector<std::string> avail(c.available_deviceids().begin(), c.available_deviceids().end());
    std::vector<std::string> must(c.must_include_deviceids().begin(),
                                  c.must_include_deviceids().end());
    auto* out = resp.add_container_responses();
    for (auto& id : PreferredIds(snap->rc, snap->pool, avail, must, c.allocation_size())) {
      out->add_deviceids(std::move(id));
    }
  }
  return node::FinishUnary(ctx, SerializeRaw(resp, raw_resp));
}

grpc::ServerUnaryReactor* DevicePluginService::Allocate(grpc::CallbackServerContext* ctx,
                                                        const grpc::ByteBuffer* raw_req,
                                                        grpc::ByteBuffer* raw_resp) {
  GrpcCallbackScope edge;  // see common/grpc_edge.h
  CallSlot slot(this);
  if (!slot.held()) return node::FinishUnary(ctx, kBusy);  // before the request is parsed
  v1beta1::AllocateRequest req;
  if (grpc::Status st = ParseRaw(raw_req, &req); !st.ok()) return node::FinishUnary(ctx, st);
  const auto start = std::chrono::steady_clock::now();
  auto snap = state_.Current();
  v1beta1::AllocateResponse resp;
  grpc::Status st = DoAllocate(*snap, req, &resp);
  if (metrics_ != nullptr) {
    metrics_->Allocated(
        snap->rc.FullName(), st.ok(),
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  return node::FinishUnary(ctx, st.ok() ? SerializeRaw(resp, raw_resp) : st);
}

grpc::Status DevicePluginService::DoAllocate(const Snapshot& snap,
                                             const v1beta1::AllocateRequest& req,
                                             v1beta1::AllocateResponse* resp) {
  if (use_cdi_ && !snap.pool.cdi_unavailable.empty()) {
    LogWarn("Allocate refused", {{"resource", snap.rc.FullName()},
                                 {"error", "no CDI spec: " + snap.pool.cdi_unavailable}});
    return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION,
                        "the CDI spec of " + snap.rc.FullName() +
                            " is not published: " + snap.pool.cdi_unavailable);
  }
  auto built = BuildAllocateResponse(snap.rc, snap.pool, req, host_);
  if (!built.ok()) {
    LogWarn("Allocate refused",
            {{"resource", snap.rc.FullName()}, {"error", built.status().message()}});
    return node::ToGrpc(built.status());
  }
  *resp = std::move(built).value();
  if (use_cdi_) ApplyCdi(snap.rc, snap.pool, req, resp, cdi_tag_);
  if (snap.rc.mode == config::PoolMode::kExclusive) {
    std::vector<const node::PciFunction*> granted;
    for (const auto& c : req.container_requests()) {
      for (const auto& id : c.devices_ids()) granted.push_back(snap.pool.Find(id));
    }
    // Multus reads these to give the pod's CNI its deviceID: an allocation without them
    // would start a pod whose secondary network cannot find its VF, so it fails instead.
    if (Status st = WriteDeviceInfoFiles(device_info_dir_, snap.rc, granted); !st.ok()) {
      LogError("Allocate failed: cannot write device-info file",
               {{"resource", snap.rc.FullName()}, {"error", st.message()}});
      return node::ToGrpc(
          Status::Unavailable("cannot write the Multus device-info file: " + st.message()));
    }
  }
  if (LogEnabled(LogLevel::kDebug)) {
    std::vector<std::string> ids;
    for (const auto& c : req.container_requests())
      ids.insert(ids.end(), c.devices_ids().begin(), c.devices_ids().end());
    LogDebug("Allocate", {{"resource", snap.rc.FullName()}, {"ids", Join(ids)}});
  }
  return grpc::Status::OK;
}

grpc::ServerUnaryReactor* DevicePluginService::PreStartContainer(
    grpc::CallbackServerContext* ctx, const v1beta1::PreStartContainerRequest*,
    v1beta1::PreStartContainerResponse*) {
  GrpcCallbackScope edge;  // see common/grpc_edge.h
  return node::FinishUnary(ctx, grpc::Status::OK);
}

pluginregistration::PluginInfo DevicePluginInfo(std::string resource_name, std::string endpoint) {
  pluginregistration::PluginInfo info;
  info.set_type("DevicePlugin");
  info.set_name(std::move(resource_name));
  info.set_endpoint(std::move(endpoint));
  info.add_supported_versions("v1beta1");
  return info;
}

}  // namespace hcashare::dp
