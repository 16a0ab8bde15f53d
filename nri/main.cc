// hcashare-nri: the NRI plugin that gives a pod the devices of its ResourceClaims at pod
// sandbox start, on runtimes with NRI (containerd 1.7+ with NRI enabled, 2.x; CRI-O 1.26+),
// without a change to the node's CNI configuration (docs/nri.md). Each pod event runs
// hcashare-cni's DRA step (nri/cni_pods.h).
//
// Two ways to run: as an external plugin (a DaemonSet container or a host service) that
// connects to the runtime's socket (--socket) and reconnects when the runtime restarts;
// or pre-installed in the runtime's plugin directory (containerd: /opt/nri/plugins), where
// the runtime starts it with a connected socket in NRI_PLUGIN_SOCKET and it ends with that
// connection.
//
// Exit codes: 0 after SIGTERM/SIGINT or the end of a pre-installed plugin's connection, 1
// when such a connection fails, 2 on an invalid command line or configuration.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include <CLI/CLI.hpp>

#include "cni/env.h"
#include "cni/node_config.h"
#include "common/log.h"
#include "common/process.h"
#include "common/unique_fd.h"
#include "common/version.h"
#include "interop/dra_checkpoint.h"
#include "nri/cni_pods.h"
#include "nri/plugin.h"
#include "nri/session.h"

extern char** environ;

namespace hcashare::nri {
namespace {

struct Flags {
  std::string socket = "/var/run/nri/nri.sock";
  std::string plugin_name = "hcashare";
  std::string plugin_idx = "90";
  std::string cni_bin;  // default: DefaultCniBin()
  std::string cni_path = "/opt/cni/bin";
  std::string netconf_file;
  std::string ifname = "hcashare-nri";
  double cni_timeout = 120;
  double registration_timeout = 5;
  std::string log_level = "info";
  std::string log_format = "text";
};

int UsageError(const std::string& flag, const std::string& error) {
  std::cerr << "hcashare-nri: " << flag << ": " << error << "\n";
  return 2;
}

Result<UniqueFd> Connect(const std::string& path) {
  sockaddr_un addr{};
  if (path.size() >= sizeof(addr.sun_path)) {
    return Status::InvalidArgument("socket path too long: " + path);
  }
  UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd.valid()) return Status::Internal(std::string("socket: ") + std::strerror(errno));
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  if (::connect(fd.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) != 0) {
    return Status::Unavailable("cannot connect to " + path + ": " + std::strerror(errno));
  }
  return fd;
}

// This process's environment for the CNI, without CNI_* and NRI_* variables.
std::vector<std::string> PassedEnvironment() {
  std::vector<std::string> out;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string kv(*e);
    if (kv.rfind("CNI_", 0) == 0 || kv.rfind("NRI_", 0) == 0) continue;
    out.push_back(kv);
  }
  return out;
}

// hcashare-cni beside this executable (the image), else in the CNI bin directory (a
// pre-installed plugin in the runtime's plugin directory, started without arguments).
std::string DefaultCniBin(const std::string& cni_path) {
  const std::string beside = SelfDir() + "/hcashare-cni";
  if (::access(beside.c_str(), X_OK) == 0) return beside;
  return cni_path + "/hcashare-cni";
}

// Waits up to `delay` for a stop signal on `stop_fd`; true when one came.
bool StopWithin(int stop_fd, std::chrono::milliseconds delay) {
  pollfd p{stop_fd, POLLIN, 0};
  return ::poll(&p, 1, static_cast<int>(delay.count())) > 0;
}

int Run(int argc, char** argv) {
  Flags f;
  CLI::App app{
      "hcashare-nri: moves the devices of a pod's ResourceClaims into the pod at "
      "sandbox start (NRI plugin)"};
  app.add_option("--socket", f.socket, "the runtime's NRI socket (external plugin)");
  app.add_option("--plugin-name", f.plugin_name, "name registered with the runtime");
  app.add_option("--plugin-idx", f.plugin_idx,
                 "two digits: the plugin's place among the runtime's plugins");
  app.add_option("--cni-bin", f.cni_bin,
                 "the hcashare-cni executable (default: beside this executable, else in "
                 "--cni-path)");
  app.add_option("--cni-path", f.cni_path, "CNI_PATH for the CNI (IPAM plugins)");
  app.add_option("--netconf", f.netconf_file,
                 "JSON file: the DRA step's network configuration (name, ipam, mtu, rdma, "
                 "logLevel); a pre-installed plugin's runtime configuration adds to it");
  app.add_option("--ifname", f.ifname, "CNI_IFNAME of the invocations (the attachments' owner)");
  app.add_option("--cni-timeout", f.cni_timeout, "seconds a CNI run may take");
  app.add_option("--registration-timeout", f.registration_timeout,
                 "seconds the runtime may take to answer the registration");
  app.add_option("--log-level", f.log_level, "debug, info, warn or error");
  app.add_option("--log-format", f.log_format, "text or json");
  bool version = false;
  app.add_flag("--version", version, "print the version and exit");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  if (version) {
    std::cout << "hcashare-nri " << VersionString() << "\n";
    return 0;
  }
  auto level = ParseLogLevel(f.log_level);
  if (!level.ok()) return UsageError("--log-level", level.status().message());
  auto format = ParseLogFormat(f.log_format);
  if (!format.ok()) return UsageError("--log-format", format.status().message());
  SetLogLevel(*level);
  SetLogFormat(*format);
  if (f.cni_timeout <= 0 || f.registration_timeout <= 0) {
    return UsageError("--cni-timeout/--registration-timeout", "must be positive");
  }

  CniPodsOptions o;
  o.cni_bin = f.cni_bin.empty() ? DefaultCniBin(f.cni_path) : f.cni_bin;
  o.cni_path = f.cni_path;
  o.ifname = f.ifname;
  o.timeout = std::chrono::milliseconds(static_cast<int64_t>(f.cni_timeout * 1000));
  o.env = PassedEnvironment();
  if (!f.netconf_file.empty()) {
    std::ifstream in(f.netconf_file);
    std::stringstream text;
    text << in.rdbuf();
    if (!in) return UsageError("--netconf", "cannot read " + f.netconf_file);
    o.netconf = nlohmann::json::parse(text.str(), nullptr, false);
  }
  if (auto conf = StepNetConf(o.netconf, ""); !conf.ok()) {
    return UsageError("--netconf", conf.status().message());
  }
  // The CNI's node file (as the CNI will read it, from this environment): which pods can
  // be skipped without running it.
  Result<cni::NodeSettings> node = cni::LoadNodeSettings(cni::ProcessEnvironment());
  if (!node.ok()) {
    LogError("cannot read the CNI's node file", {{"error", node.status().message()}});
    return 2;
  }
  SetNodeChecks(node->state_dir, dra::CheckpointPath(node->kubelet_root_dir, node->dra_driver), &o);

  sigset_t sigs;
  sigemptyset(&sigs);
  sigaddset(&sigs, SIGTERM);
  sigaddset(&sigs, SIGINT);
  pthread_sigmask(SIG_BLOCK, &sigs, nullptr);
  UniqueFd stop(::signalfd(-1, &sigs, SFD_CLOEXEC));

  SessionOptions so;
  so.plugin_name = f.plugin_name;
  so.plugin_idx = f.plugin_idx;
  so.registration_timeout =
      std::chrono::milliseconds(static_cast<int64_t>(f.registration_timeout * 1000));
  so.stop_fd = stop.get();
  CniPods pods(o);

  // Pre-installed: the runtime started us with a connected socket, and owns our lifetime.
  if (const char* fd_env = std::getenv("NRI_PLUGIN_SOCKET"); fd_env != nullptr) {
    const int fd = std::atoi(fd_env);
    if (fd < 3 || ::fcntl(fd, F_SETFD, FD_CLOEXEC) != 0) {
      LogError("NRI_PLUGIN_SOCKET is not an open descriptor", {{"value", fd_env}});
      return 1;
    }
    UniqueFd trunk(fd);
    if (const char* n = std::getenv("NRI_PLUGIN_NAME")) so.plugin_name = n;
    if (const char* i = std::getenv("NRI_PLUGIN_IDX")) so.plugin_idx = i;
    LogInfo("starting hcashare-nri (pre-installed)",
            {{"version", VersionString()}, {"cni_bin", o.cni_bin}});
    PodPlugin plugin(pods);
    Status st = RunSession(trunk.get(), so, plugin);
    if (!st.ok() && st.code() != StatusCode::kUnavailable) {
      LogError("NRI connection failed", {{"error", st.message()}});
      return 1;
    }
    return 0;
  }

  LogInfo("starting hcashare-nri",
          {{"version", VersionString()}, {"socket", f.socket}, {"cni_bin", o.cni_bin}});
  std::chrono::milliseconds backoff(500);
  for (;;) {
    Result<UniqueFd> trunk = Connect(f.socket);
    if (trunk.ok()) {
      PodPlugin plugin(pods);
      const auto began = std::chrono::steady_clock::now();
      Status st = RunSession(trunk->get(), so, plugin);
      if (st.ok()) break;  // stopped
      LogWarn("NRI connection ended; reconnecting", {{"error", st.message()}});
      // A session that served a while starts the backoff over.
      if (std::chrono::steady_clock::now() - began > std::chrono::seconds(30)) {
        backoff = std::chrono::milliseconds(500);
      }
    } else {
      LogWarn("cannot reach the runtime's NRI; retrying",
              {{"error", trunk.status().message()},
               {"retry_ms", static_cast<int64_t>(backoff.count())}});
    }
    if (StopWithin(stop.get(), backoff)) break;
    backoff = std::min(backoff * 2, std::chrono::milliseconds(30000));
  }
  LogInfo("hcashare-nri stopped");
  return 0;
}

}  // namespace
}  // namespace hcashare::nri

int main(int argc, char** argv) { return hcashare::nri::Run(argc, argv); }
