#include "deviceplugin/resource_server.h"

#include <grpcpp/grpcpp.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <random>

#include "common/grpc_edge.h"
#include "common/log.h"
#include "deviceplugin/cdi.h"
#include "deviceplugin/kubelet_client.h"
#include "node/registration.h"
#include "node/socket_files.h"

namespace hcashare::dp {

using Clock = std::chrono::steady_clock;

namespace {

constexpr auto kNever = Clock::time_point::max();

// A random 8-hex-digit nonce for private socket names.
std::string Nonce() {
  static thread_local std::mt19937 rng{std::random_device{}()};
  char buf[9];
  std::snprintf(buf, sizeof(buf), "%08x", static_cast<unsigned>(rng()));
  return buf;
}

}  // namespace

Result<RegistrationMode> ParseRegistrationMode(const std::string& s) {
  if (s == "auto") return RegistrationMode::kAuto;
  if (s == "kubelet") return RegistrationMode::kKubelet;
  if (s == "plugins-registry") return RegistrationMode::kPluginsRegistry;
  return Status::InvalidArgument("unknown registration mode \"" + s +
                                 "\" (want auto, kubelet or plugins-registry)");
}

const char* RegistrationModeName(RegistrationMode m) {
  switch (m) {
    case RegistrationMode::kAuto:
      return "auto";
    case RegistrationMode::kKubelet:
      return "kubelet";
    case RegistrationMode::kPluginsRegistry:
      return "plugins-registry";
  }
  return "auto";
}

// One gRPC server bound to one socket. Services must outlive the server, so they live here.
struct ResourceServer::Incarnation {
  std::unique_ptr<DevicePluginService> plugin;
  std::unique_ptr<node::RegistrationService> registration;
  std::unique_ptr<grpc::Server> server;
  std::string private_path;
};

ResourceServer::ResourceServer(const config::ResourceConfig& rc, ServerOptions opts,
                               const Host& host, KubeletRegistrar& registrar)
    : opts_(std::move(opts)),
      host_(host),
      registrar_(registrar),
      full_name_(rc.FullName()),
      socket_name_(rc.resource_name + ".sock"),
      state_(rc),
      retry_at_(kNever),
      check_at_(kNever),
      backoff_(opts_.backoff_initial) {
  events_.stream_changed = [this](int delta, bool by_peer) { OnStreamChanged(delta, by_peer); };
  events_.registration_status = [this](bool ok, const std::string& e) {
    OnRegistrationStatus(ok, e);
  };
}

ResourceServer::~ResourceServer() { Stop(); }

void ResourceServer::Start() {
  std::lock_guard<std::mutex> lock(mu_);
  if (started_) return;
  started_ = true;
  restart_pending_ = true;
  restart_reason_ = "start";
  supervisor_ = std::thread([this] { Supervise(); });
}

void ResourceServer::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!started_ || shutdown_) return;
    shutdown_ = true;
  }
  cv_.notify_all();
  register_cancel_.Cancel();  // a kubelet that never answers must not hold the shutdown
  if (supervisor_.joinable()) supervisor_.join();
  // The daemon is leaving: a list still being sent is of no use to the kubelet, which
  // marks the devices unhealthy once our socket is gone.
  StopIncarnation(std::chrono::milliseconds(0));
  std::lock_guard<std::mutex> lock(mu_);
  const ino_t now = public_path_.empty() ? 0 : node::InodeOf(public_path_);
  if (now != 0 && now == public_inode_) {
    ::unlink(public_path_.c_str());
    LogInfo("removed socket", {{"resource", full_name_}, {"socket", public_path_}});
  } else if (now != 0) {
    standby_ = true;
    LogInfo("left socket in place: another instance owns it",
            {{"resource", full_name_}, {"socket", public_path_}});
  }
}

void ResourceServer::Supervise() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!shutdown_) {
    auto next = std::min(retry_at_, check_at_);
    auto wait = next == kNever ? std::chrono::hours(1) : next - Clock::now();
    cv_.wait_for(lock, wait, [&] {
      return shutdown_ || restart_pending_ || Clock::now() >= std::min(retry_at_, check_at_);
    });
    if (shutdown_) break;
    auto now = Clock::now();
    if (standby_) {
      retry_at_ = check_at_ = kNever;
      if (inc_) {
        lock.unlock();
        StopIncarnation();
        lock.lock();
      }
      continue;
    }
    if (restart_pending_ && restart_unless_healthy_ && now < retry_at_ && HealthyLocked()) {
      // The trigger was already handled by the incarnation we have (see Request()).
      LogDebug("restart not needed: registered and socket intact",
               {{"resource", full_name_}, {"trigger", restart_reason_}});
      restart_pending_ = false;
      continue;
    }
    if (restart_pending_ || now >= retry_at_) {
      std::string reason = restart_pending_ ? restart_reason_ : "retry";
      restart_pending_ = false;
      retry_at_ = kNever;
      lock.unlock();
      bool ok = DoRestart(reason);
      lock.lock();
      if (ok) {
        backoff_ = opts_.backoff_initial;
      } else if (!restart_pending_) {
        retry_at_ = Clock::now() + backoff_;
        backoff_ = std::min(backoff_ * 2, opts_.backoff_max);
      }
      continue;
    }
    if (now >= check_at_) {
      check_at_ = kNever;
      lock.unlock();
      DoStreamCheck();
      lock.lock();
    }
  }
}

void ResourceServer::StopIncarnation(std::chrono::milliseconds grace) {
  if (!inc_) return;
  inc_->plugin->FinishStreams();
  {
    GrpcCallScope edge;  // see common/grpc_edge.h
    inc_->server->Shutdown(std::chrono::system_clock::now() + grace);
    inc_->server->Wait();
  }
  ::unlink(inc_->private_path.c_str());  // normally gone already (renamed)
  inc_.reset();
  serving_ = false;
  registered_ = false;
  if (opts_.metrics != nullptr) opts_.metrics->Unregistered(full_name_);
}

bool ResourceServer::DoRestart(const std::string& reason) {
  StopIncarnation();
  {
    // A check scheduled for the previous incarnation means nothing for the next one.
    std::lock_guard<std::mutex> lock(mu_);
    check_at_ = kNever;
  }
  RegistrationMode mode = opts_.mode;
  const std::string kubelet_sock = opts_.KubeletSocket();
  if (mode == RegistrationMode::kAuto) {
    RegistrationMode settled;
    {
      std::lock_guard<std::mutex> lock(mu_);
      settled = settled_mode_;
    }
    const bool kubelet_serves = node::InodeOf(kubelet_sock) != 0;
    if (settled == RegistrationMode::kKubelet && !kubelet_serves) {
      // A restarting kubelet removes every socket, kubelet.sock too, before it serves again:
      // wait for it rather than register the other way for a moment.
      return Fail("kubelet.sock is gone (the kubelet is restarting?); waiting for it");
    }
    // Classic registration is the most widely supported; use it whenever the kubelet
    // serves kubelet.sock, and plugins_registry only when it does not, or when the kubelet
    // has accepted us there already.
    if (settled == RegistrationMode::kPluginsRegistry && node::IsDir(opts_.RegistryDir())) {
      mode = RegistrationMode::kPluginsRegistry;
    } else if (kubelet_serves) {
      mode = RegistrationMode::kKubelet;
    } else if (node::IsDir(opts_.RegistryDir())) {
      mode = RegistrationMode::kPluginsRegistry;
    } else {
      return Fail("kubelet not ready: neither " + kubelet_sock + " nor " + opts_.RegistryDir() +
                  " exists; waiting");
    }
  }
  const std::string dir =
      mode == RegistrationMode::kKubelet ? opts_.DevicePluginDir() : opts_.RegistryDir();
  const std::string public_path = dir + "/" + socket_name_;
  {
    // A socket of ours left in the other directory has no listener from now on.
    std::lock_guard<std::mutex> lock(mu_);
    if (!public_path_.empty() && public_path_ != public_path && public_inode_ != 0 &&
        node::InodeOf(public_path_) == public_inode_) {
      ::unlink(public_path_.c_str());
      LogInfo("removed socket", {{"resource", full_name_}, {"socket", public_path_}});
    }
  }
  if (!node::IsDir(dir)) return Fail("kubelet directory " + dir + " does not exist yet; waiting");
  auto inc = std::make_unique<Incarnation>();
  inc->private_path = dir + "/.hcashare-" + Nonce() + ".sock";
  if (public_path.size() >= sizeof(sockaddr_un::sun_path) ||
      inc->private_path.size() >= sizeof(sockaddr_un::sun_path)) {
    return Fail("socket path " + public_path + " is too long for a unix socket (max 107 bytes)");
  }
  LogInfo("starting device plugin server", {{"resource", full_name_},
                                            {"reason", reason},
                                            {"mode", RegistrationModeName(mode)},
                                            {"socket", public_path}});

  inc->plugin = std::make_unique<DevicePluginService>(
      state_, host_, events_, opts_.device_info_dir, opts_.use_cdi,
      opts_.use_cdi ? CdiInstanceTag(opts_.kubelet_root) : "", opts_.metrics,
      opts_.stream_stall_limit);
  grpc::ServerBuilder builder;
  builder.AddListeningPort("unix:" + inc->private_path, grpc::InsecureServerCredentials());
  builder.SetMaxReceiveMessageSize(kMaxRequestBytes);
  builder.RegisterService(inc->plugin.get());
  if (mode == RegistrationMode::kPluginsRegistry) {
    inc->registration = std::make_unique<node::RegistrationService>(
        DevicePluginInfo(full_name_, public_path),
        [&events = events_](bool registered, const std::string& error) {
          events.registration_status(registered, error);
        });
    builder.RegisterService(inc->registration.get());
  }
  const auto build_start = Clock::now();
  GrpcHandOff();  // the services, to gRPC's threads
  inc->server = builder.BuildAndStart();
  if (!inc->server) {
    return Fail("cannot serve a unix socket in " + dir);
  }
  int rename_err = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (::rename(inc->private_path.c_str(), public_path.c_str()) != 0) {
      rename_err = errno;
    } else {
      public_path_ = public_path;
      public_inode_ = node::InodeOf(public_path);
      active_mode_ = mode;
    }
  }
  if (rename_err != 0) {
    inc_ = std::move(inc);
    StopIncarnation();
    return Fail("cannot publish socket " + public_path + ": " + std::strerror(rename_err));
  }
  inc_ = std::move(inc);
  serving_ = true;

  if (mode == RegistrationMode::kPluginsRegistry) {
    LogInfo("serving in plugins_registry; waiting for the kubelet",
            {{"resource", full_name_}, {"socket", public_path}});
    last_failure_.clear();
    return true;
  }
  const auto reg_start = Clock::now();
  const ino_t kubelet_inode = node::InodeOf(kubelet_sock);
  Status st = registrar_.Register(socket_name_, full_name_, opts_.connect_timeout,
                                  opts_.register_timeout, &register_cancel_);
  if (!st.ok()) {
    return Fail("registration failed: " + st.message());
  }
  last_failure_.clear();
  {
    std::lock_guard<std::mutex> lock(mu_);
    registered_kubelet_inode_ = kubelet_inode;
    settled_mode_ = RegistrationMode::kKubelet;
  }
  registered_ = true;
  ++registrations_;
  if (opts_.metrics != nullptr) opts_.metrics->Registered(full_name_);
  auto us = [](Clock::duration d) {
    return std::chrono::duration_cast<std::chrono::microseconds>(d).count();
  };
  LogInfo("registered with kubelet", {{"resource", full_name_},
                                      {"mode", "kubelet"},
                                      {"serve_us", us(reg_start - build_start)},
                                      {"register_us", us(Clock::now() - reg_start)}});
  ScheduleCheck(opts_.stream_check_delay);
  return true;
}

bool ResourceServer::Fail(const std::string& message) {
  // Repeats of the same failure (every back-off step) go to debug: one warning per change.
  if (message != last_failure_) {
    LogWarn(message + "; will retry", {{"resource", full_name_}});
    last_failure_ = message;
  } else {
    LogDebug(message + "; will retry", {{"resource", full_name_}});
  }
  return false;
}

}  // namespace hcashare::dp
