#include "testing/fake_kubelet.h"

#include <grpcpp/grpcpp.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include "common/grpc_edge.h"
#include "common/inotify.h"
#include "common/log.h"

namespace fs = std::filesystem;

namespace hcashare::fake {

using std::chrono::milliseconds;
using std::chrono::system_clock;

namespace {

// A channel with its own connection. gRPC C++ otherwise shares subchannels between
// channels to the same address, so a new dial could reuse a connection to a previous
// socket inode at that path; the Go kubelet always makes a fresh connection.
std::shared_ptr<grpc::Channel> PrivateChannel(const std::string& socket_path) {
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  return grpc::CreateCustomChannel("unix://" + socket_path, grpc::InsecureChannelCredentials(),
                                   args);
}

}  // namespace

struct FakeKubelet::Endpoint {
  std::string path;
  std::shared_ptr<grpc::Channel> channel;
  std::unique_ptr<v1beta1::DevicePlugin::Stub> stub;
  grpc::ClientContext stream_ctx;
  std::thread reader;

  // Ends the stream and waits for the reader.
  void Close() {
    stream_ctx.TryCancel();
    if (reader.joinable()) reader.join();
  }
};

// v1beta1.Registration as kubelet >= 1.25 serves it: synchronous dial-back.
class FakeKubelet::RegistrationImpl final : public v1beta1::Registration::Service {
 public:
  explicit RegistrationImpl(FakeKubelet* k) : k_(k) {}

  grpc::Status Register(grpc::ServerContext*, const v1beta1::RegisterRequest* req,
                        v1beta1::Empty*) override {
    GrpcCallbackScope edge;  // see common/grpc_edge.h
    {
      std::lock_guard<std::mutex> lock(k_->mu_);
      if (!k_->register_error_.empty()) {
        return {grpc::StatusCode::UNKNOWN, k_->register_error_};
      }
    }
    if (req->version() != "v1beta1") {
      return {grpc::StatusCode::INVALID_ARGUMENT, "unsupported version " + req->version()};
    }
    const std::string& name = req->resource_name();
    if (name.find('/') == std::string::npos || name.find("kubernetes.io/") != std::string::npos) {
      return {grpc::StatusCode::INVALID_ARGUMENT, "invalid extended resource name " + name};
    }
    if (req->endpoint().empty() || req->endpoint().find('/') != std::string::npos) {
      return {grpc::StatusCode::INVALID_ARGUMENT, "endpoint must be a file name"};
    }
    Status st = k_->Connect(name, k_->DevicePluginDir() + "/" + req->endpoint());
    if (!st.ok()) return {grpc::StatusCode::UNKNOWN, st.message()};
    return grpc::Status::OK;
  }

 private:
  FakeKubelet* k_;
};

FakeKubelet::FakeKubelet(std::string kubelet_root, std::string device_plugin_dir)
    : root_(std::move(kubelet_root)),
      device_plugin_dir_(device_plugin_dir.empty() ? root_ + "/device-plugins"
                                                   : std::move(device_plugin_dir)) {}

FakeKubelet::~FakeKubelet() { Stop(); }

Status FakeKubelet::Start(bool watch_registry) {
  std::error_code ec;
  fs::create_directories(DevicePluginDir(), ec);
  if (watch_registry) fs::create_directories(RegistryDir(), ec);
  service_ = std::make_unique<RegistrationImpl>(this);
  grpc::ServerBuilder builder;
  builder.AddListeningPort("unix:" + DevicePluginDir() + "/kubelet.sock",
                           grpc::InsecureServerCredentials());
  builder.RegisterService(service_.get());
  GrpcHandOff();
  server_ = builder.BuildAndStart();
  if (!server_) return Status::Unavailable("fake kubelet cannot serve kubelet.sock");
  if (watch_registry) {
    std::lock_guard<std::mutex> lock(mu_);
    watching_ = true;
    watcher_ = std::thread([this] { WatchRegistry(); });
  }
  return Status::Ok();
}

void FakeKubelet::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    watching_ = false;
  }
  if (watcher_.joinable()) watcher_.join();
  if (server_) {
    GrpcCallScope edge;
    server_->Shutdown(system_clock::now() + milliseconds(500));
    server_.reset();
  }
  std::map<std::string, std::shared_ptr<Endpoint>> eps;
  {
    std::lock_guard<std::mutex> lock(mu_);
    eps.swap(endpoints_);
    registry_sockets_.clear();
    for (auto& [name, v] : views_) v.connected = false;
  }
  for (auto& [name, ep] : eps) ep->Close();
  cv_.notify_all();
}

Status FakeKubelet::Restart(std::chrono::milliseconds startup) {
  bool watch;
  {
    std::lock_guard<std::mutex> lock(mu_);
    watch = watching_;
  }
  Stop();
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(DevicePluginDir(), ec)) {
    if (e.is_socket()) fs::remove(e.path(), ec);
  }
  std::this_thread::sleep_for(startup);  // the modelled start-up time, not a synchronisation
  return Start(watch);
}

void FakeKubelet::EndStream(const std::string& resource) {
  auto ep = EndpointOf(resource);
  if (ep) ep->stream_ctx.TryCancel();
}

void FakeKubelet::SetRegisterError(const std::string& error) {
  std::lock_guard<std::mutex> lock(mu_);
  register_error_ = error;
}

ResourceView FakeKubelet::View(const std::string& resource) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = views_.find(resource);
  return it == views_.end() ? ResourceView{} : it->second;
}

bool FakeKubelet::WaitFor(const std::string& resource,
                          const std::function<bool(const ResourceView&)>& pred,
                          milliseconds timeout) const {
  std::unique_lock<std::mutex> lock(mu_);
  return cv_.wait_for(lock, timeout, [&] {
    auto it = views_.find(resource);
    return pred(it == views_.end() ? ResourceView{} : it->second);
  });
}

Status FakeKubelet::Connect(const std::string& resource, const std::string& socket_path) {
  auto ep = std::make_shared<Endpoint>();
  ep->path = socket_path;
  ep->channel = PrivateChannel(socket_path);
  ep->stub = v1beta1::DevicePlugin::NewStub(ep->channel);
  v1beta1::DevicePluginOptions options;
  {
    // The plugin must already be serving when it registers, so fail fast (not
    // wait_for_ready): a socket that vanished meanwhile must not stall the fake kubelet.
    grpc::ClientContext ctx;
    ctx.set_deadline(system_clock::now() + milliseconds(10000));
    GrpcCallScope edge;
    grpc::Status st = ep->stub->GetDevicePluginOptions(&ctx, v1beta1::Empty(), &options);
    if (!st.ok()) return Status::Unavailable("GetDevicePluginOptions: " + st.error_message());
  }
  std::shared_ptr<Endpoint> old;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = endpoints_.find(resource);
    if (it != endpoints_.end()) old = it->second;
    endpoints_[resource] = ep;
    ResourceView& v = views_[resource];
    ++v.registrations;
    v.options = options;
    v.endpoint = socket_path;
    // Started under the lock: a concurrent Register that replaces `ep` (and so joins its
    // reader in Close) can only see it once the thread is assigned. Follow takes the lock
    // only after its call.
    ep->reader = std::thread([this, ep, resource] { Follow(ep, resource); });
  }
  if (old) old->Close();  // newest registration wins
  cv_.notify_all();
  return Status::Ok();
}

void FakeKubelet::Follow(std::shared_ptr<Endpoint> ep, std::string resource) {
  auto reader = ep->stub->ListAndWatch(&ep->stream_ctx, v1beta1::Empty());
  {
    std::lock_guard<std::mutex> lock(mu_);
    // find(), not []: after Stop() swapped the map out, this endpoint is gone and must
    // not come back as an empty entry.
    auto it = endpoints_.find(resource);
    if (it != endpoints_.end() && it->second == ep) views_[resource].connected = true;
  }
  cv_.notify_all();
  v1beta1::ListAndWatchResponse resp;
  while (reader->Read(&resp)) {
    GrpcTakeOver();
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = endpoints_.find(resource);
      if (it == endpoints_.end() || it->second != ep) continue;
      ResourceView& v = views_[resource];
      v.devices.assign(resp.devices().begin(), resp.devices().end());
      ++v.lists_received;
      v.last_list_at = std::chrono::steady_clock::now();
    }
    cv_.notify_all();
  }
  reader->Finish();
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = endpoints_.find(resource);
    if (it != endpoints_.end() && it->second == ep) views_[resource].connected = false;
  }
  cv_.notify_all();
}

std::shared_ptr<FakeKubelet::Endpoint> FakeKubelet::EndpointOf(const std::string& resource) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = endpoints_.find(resource);
  return it == endpoints_.end() ? nullptr : it->second;
}

Result<v1beta1::AllocateResponse> FakeKubelet::Allocate(const std::string& resource,
                                                        const std::vector<std::string>& ids) {
  auto ep = EndpointOf(resource);
  if (!ep) return Status::NotFound("resource " + resource + " is not registered");
  v1beta1::AllocateRequest req;
  auto* c = req.add_container_requests();
  for (const auto& id : ids) c->add_devices_ids(id);
  grpc::ClientContext ctx;
  ctx.set_deadline(system_clock::now() + milliseconds(5000));
  v1beta1::AllocateResponse resp;
  grpc::Status st;
  {
    GrpcCallScope edge;
    st = ep->stub->Allocate(&ctx, req, &resp);
  }
  if (!st.ok()) {
    StatusCode code =
        st.error_code() == grpc::StatusCode::INVALID_ARGUMENT      ? StatusCode::kInvalidArgument
        : st.error_code() == grpc::StatusCode::FAILED_PRECONDITION ? StatusCode::kFailedPrecondition
                                                                   : StatusCode::kUnavailable;
    return Status(code, st.error_message());
  }
  return resp;
}

Result<v1beta1::PreferredAllocationResponse> FakeKubelet::GetPreferredAllocation(
    const std::string& resource, const std::vector<std::string>& available,
    const std::vector<std::string>& must_include, int size) {
  auto ep = EndpointOf(resource);
  if (!ep) return Status::NotFound("resource " + resource + " is not registered");
  v1beta1::PreferredAllocationRequest req;
  auto* c = req.add_container_requests();
  for (const auto& id : available) c->add_available_deviceids(id);
  for (const auto& id : must_include) c->add_must_include_deviceids(id);
  c->set_allocation_size(size);
  grpc::ClientContext ctx;
  ctx.set_deadline(system_clock::now() + milliseconds(5000));
  v1beta1::PreferredAllocationResponse resp;
  grpc::Status st;
  {
    GrpcCallScope edge;
    st = ep->stub->GetPreferredAllocation(&ctx, req, &resp);
  }
  if (!st.ok()) return Status::Unavailable(st.error_message());
  return resp;
}

void FakeKubelet::RegisterFromRegistry(const std::string& socket_path) {
  auto channel = PrivateChannel(socket_path);
  auto stub = pluginregistration::Registration::NewStub(channel);
  pluginregistration::PluginInfo info;
  {
    // The kubelet's GetInfo deadline is 1 s; a socket that vanished fails within it.
    grpc::ClientContext ctx;
    ctx.set_wait_for_ready(true);
    ctx.set_deadline(system_clock::now() + milliseconds(1000));
    if (!stub->GetInfo(&ctx, pluginregistration::InfoRequest(), &info).ok()) return;
  }
  std::string error;
  bool versions_ok = false;
  for (const auto& v : info.supported_versions()) versions_ok = versions_ok || v == "v1beta1";
  if (info.type() != "DevicePlugin")
    error = "unsupported plugin type " + info.type();
  else if (!versions_ok)
    error = "no supported version";
  else if (info.name().find('/') == std::string::npos)
    error = "invalid resource name";
  if (error.empty()) {
    Status st = Connect(info.name(), info.endpoint().empty() ? socket_path : info.endpoint());
    if (!st.ok()) error = st.message();
  }
  if (error.empty()) {
    std::lock_guard<std::mutex> lock(mu_);
    registry_sockets_[socket_path] = info.name();
  }
  pluginregistration::RegistrationStatus status;
  status.set_plugin_registered(error.empty());
  status.set_error(error);
  grpc::ClientContext ctx;
  ctx.set_deadline(system_clock::now() + milliseconds(5000));
  pluginregistration::RegistrationStatusResponse r;
  (void)stub->NotifyRegistrationStatus(&ctx, status, &r);
}

void FakeKubelet::WatchRegistry() {
  auto watcher = InotifyWatcher::Create();
  if (!watcher.ok()) return;
  (void)(*watcher)->AddWatch(RegistryDir(), IN_CREATE | IN_MOVED_TO | IN_DELETE | IN_MOVED_FROM);
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(RegistryDir(), ec)) {
    std::string name = e.path().filename().string();
    if (e.is_socket() && name[0] != '.') RegisterFromRegistry(e.path().string());
  }
  for (;;) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!watching_) return;
    }
    auto events = (*watcher)->Wait(milliseconds(100));
    if (!events.ok()) continue;
    for (const auto& ev : *events) {
      if (ev.name.empty() || ev.name[0] == '.') continue;  // the kubelet ignores dot files
      std::string path = RegistryDir() + "/" + ev.name;
      if (ev.mask & (IN_CREATE | IN_MOVED_TO)) {
        RegisterFromRegistry(path);
      } else if (ev.mask & (IN_DELETE | IN_MOVED_FROM)) {
        std::shared_ptr<Endpoint> ep;
        {
          std::lock_guard<std::mutex> lock(mu_);
          auto it = registry_sockets_.find(path);
          if (it == registry_sockets_.end()) continue;
          auto eit = endpoints_.find(it->second);
          if (eit != endpoints_.end() && eit->second->path == path) {
            ep = eit->second;
            endpoints_.erase(eit);
            views_[it->second].connected = false;
          }
          registry_sockets_.erase(it);
        }
        if (ep) ep->Close();
        cv_.notify_all();
      }
    }
  }
}

bool AllDevices(const ResourceView& v, const std::string& health) {
  if (!v.connected || v.devices.empty()) return false;
  for (const auto& d : v.devices) {
    if (d.health() != health) return false;
  }
  return true;
}

}  // namespace hcashare::fake
