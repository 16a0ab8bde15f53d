#include "dra/node_server.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <random>

#include <grpcpp/security/server_credentials.h>

#include "common/atomic_file.h"
#include "common/grpc_edge.h"
#include "common/log.h"
#include "node/socket_files.h"

namespace hcashare::dra {
namespace {

// The largest request the DRA socket accepts (kMaxClaimsPerRequest claims of ~400 bytes
// each are far less).
constexpr int kMaxRequestBytes = 1 << 20;

using node::InodeOf;
using node::IsDir;

std::string Nonce() {
  std::random_device rd;
  char buf[17];
  std::snprintf(buf, sizeof buf, "%08x%08x", rd(), rd());
  return buf;
}

}  // namespace

NodeServer::NodeServer(NodeServerOptions options, Preparer& preparer, HealthSource& health)
    : opts_(std::move(options)), preparer_(preparer), health_(health) {}

NodeServer::~NodeServer() { Stop(); }

std::string NodeServer::DraSocketPath() const {
  return opts_.kubelet_root + "/plugins/" + opts_.driver + "/dra.sock";
}

std::string NodeServer::RegistrationSocketPath() const {
  return opts_.kubelet_root + "/plugins_registry/" + opts_.driver + "-reg.sock";
}

RegistrationState NodeServer::registration() const {
  std::lock_guard<std::mutex> lock(mu_);
  return reg_state_;
}

Status NodeServer::Serve(const std::string& public_path,
                         const std::function<void(grpc::ServerBuilder&)>& add, Served* out) {
  const std::string dir = public_path.substr(0, public_path.rfind('/'));
  const std::string private_path = dir + "/.hcashare-" + Nonce() + ".sock";
  if (public_path.size() >= sizeof(sockaddr_un::sun_path) ||
      private_path.size() >= sizeof(sockaddr_un::sun_path)) {
    return Status::FailedPrecondition("socket path " + public_path +
                                      " is too long for a unix socket (max 107 bytes)");
  }
  grpc::ServerBuilder builder;
  builder.AddListeningPort("unix:" + private_path, grpc::InsecureServerCredentials());
  builder.SetMaxReceiveMessageSize(kMaxRequestBytes);
  add(builder);
  GrpcHandOff();  // the services, to gRPC's threads
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (!server) return Status::Unavailable("cannot serve a unix socket in " + dir);
  if (::rename(private_path.c_str(), public_path.c_str()) != 0) {
    const int err = errno;
    {
      GrpcCallScope edge;  // see common/grpc_edge.h
      server->Shutdown();
      server->Wait();
    }
    ::unlink(private_path.c_str());
    return ErrnoStatus(err, "cannot publish socket " + public_path);
  }
  out->server = std::move(server);
  out->path = public_path;
  out->inode = InodeOf(public_path);
  return Status::Ok();
}

Status NodeServer::Start() {
  Stop();
  const std::string registry = opts_.kubelet_root + "/plugins_registry";
  if (!IsDir(registry)) {
    return Status::FailedPrecondition("kubelet directory " + registry +
                                      " does not exist (is the kubelet running, with this root?)");
  }
  const std::string dra_dir = opts_.kubelet_root + "/plugins/" + opts_.driver;
  RETURN_IF_ERROR(CreateDirectories(dra_dir, 0750));

  v1_ = std::make_unique<DraPluginV1>(preparer_);
  v1beta1_ = std::make_unique<DraPluginV1beta1>(preparer_);
  if (opts_.serve_health) health_service_ = std::make_unique<DraHealthService>(health_);
  Status st = Serve(
      DraSocketPath(),
      [this](grpc::ServerBuilder& b) {
        b.RegisterService(v1_.get());
        b.RegisterService(v1beta1_.get());
        if (health_service_) b.RegisterService(health_service_.get());
      },
      &dra_);
  if (!st.ok()) {
    Stop();
    return st;
  }
  registration_ = std::make_unique<node::RegistrationService>(
      DraPluginInfo(opts_.driver, DraSocketPath(), opts_.serve_health),
      [this](bool registered, const std::string& error) {
        std::lock_guard<std::mutex> lock(mu_);
        reg_state_.notifications++;
        reg_state_.registered = registered;
        reg_state_.error = error;
        if (!registered) LogWarn("the kubelet refused the DRA driver", {{"error", error}});
      });
  st = Serve(
      RegistrationSocketPath(),
      [this](grpc::ServerBuilder& b) { b.RegisterService(registration_.get()); }, &reg_);
  if (!st.ok()) {
    Stop();
    return st;
  }
  LogInfo("serving the DRA driver", {{"driver", opts_.driver},
                                     {"endpoint", DraSocketPath()},
                                     {"registration", RegistrationSocketPath()}});
  return Status::Ok();
}

void NodeServer::StopServed(Served* s, std::chrono::milliseconds grace) {
  if (s->server) {
    GrpcCallScope edge;  // see common/grpc_edge.h
    s->server->Shutdown(std::chrono::system_clock::now() + grace);
    s->server->Wait();
  }
  s->server.reset();
  // Only the socket we created: a successor may have replaced it already.
  if (!s->path.empty() && s->inode != 0 && InodeOf(s->path) == s->inode) {
    ::unlink(s->path.c_str());
  }
  *s = Served{};
}

void NodeServer::Stop(std::chrono::milliseconds grace) {
  // The registration first: the kubelet must not dial an endpoint that is going away.
  StopServed(&reg_, grace);
  if (health_service_) health_service_->FinishStreams();
  StopServed(&dra_, grace);
  registration_.reset();
  health_service_.reset();
  v1_.reset();
  v1beta1_.reset();
  std::lock_guard<std::mutex> lock(mu_);
  reg_state_ = RegistrationState{};
}

}  // namespace hcashare::dra
