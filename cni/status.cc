#include "cni/status.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "cni/error.h"
#include "cni/state.h"
#include "common/atomic_file.h"
#include "common/unique_fd.h"
#include "kubelet/podresources.h"

namespace hcashare::cni {
namespace {

Status NotAvailable(const std::string& why, const std::string& details = "") {
  return CniStatus(kErrPluginNotAvailable, why, details);
}

// "" when a unix stream socket at `path` accepts a connection, else why not.
std::string ConnectProblem(const std::string& path) {
  sockaddr_un addr{};
  if (path.size() >= sizeof(addr.sun_path)) return "socket path too long";
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd.valid()) return std::strerror(errno);
  if (::connect(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    return std::strerror(errno);
  }
  return "";
}

}  // namespace

Status CmdStatus(const CniEnv& env, const NetConf& conf) {
  const Status created = CreateDirectories(conf.node.state_dir, kStateDirMode);
  if (!created.ok() || ::access(conf.node.state_dir.c_str(), W_OK) != 0) {
    return NotAvailable("state directory " + conf.node.state_dir + " is not writable",
                        created.ok() ? std::strerror(errno) : created.message());
  }
  if (conf.resource_name) {
    const std::string socket = kubelet::PodResourcesSocketPath(conf.node.kubelet_root_dir);
    if (::access(socket.c_str(), F_OK) == 0) {
      if (std::string problem = ConnectProblem(socket); !problem.empty()) {
        return NotAvailable("the kubelet pod-resources socket " + socket + " does not answer",
                            problem);
      }
    } else if (::access(kubelet::KubeletCheckpointPath(conf.node.device_plugin_dir).c_str(),
                        R_OK) != 0) {
      return NotAvailable("cannot look devices up by resourceName",
                          "neither " + socket + " nor " +
                              kubelet::KubeletCheckpointPath(conf.node.device_plugin_dir) +
                              " exists");
    }
  }
  if (conf.ipam && !env.PathDirs().empty()) {
    bool found = false;
    for (const auto& dir : env.PathDirs()) {
      found = found || ::access((dir + "/" + conf.ipam_type).c_str(), X_OK) == 0;
    }
    if (!found) {
      return NotAvailable("IPAM plugin \"" + conf.ipam_type + "\" is not in CNI_PATH", env.path);
    }
  }
  return Status::Ok();
}

}  // namespace hcashare::cni
