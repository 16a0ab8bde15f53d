// A kubeconfig user's `exec` credential plugin, run as client-go runs it: the command
// (found in PATH, or relative to the kubeconfig's directory when it holds a '/') with its
// args, this process's environment plus its `env` and KUBERNETES_EXEC_INFO (an
// ExecCredential whose spec says the session is not interactive); its stdout is an
// ExecCredential whose status.token is the bearer token, kept until its
// status.expirationTimestamp (or a 401). This is how EKS (aws eks get-token), GKE
// (gke-gcloud-auth-plugin), AKS and OIDC (kubelogin) kubeconfigs authenticate. Plugins
// that answer with a client certificate instead, or need a terminal, are refused by name.
#pragma once

#include <chrono>
#include <ctime>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/status.h"

namespace hcashare::kube {

// The largest ExecCredential read from a plugin, and how long a plugin may run.
inline constexpr size_t kMaxExecOutputBytes = size_t{1} << 20;
inline constexpr std::chrono::seconds kExecTimeout{60};

// users[].user.exec of a kubeconfig.
struct ExecConfig {
  std::string api_version;  // client.authentication.k8s.io/v1 or /v1beta1
  std::string command;      // as written
  std::vector<std::string> args;
  std::vector<std::pair<std::string, std::string>> env;
  std::string install_hint;  // shown when the command cannot be run
  std::string dir;           // the kubeconfig's directory (for a relative command)
  // provideClusterInfo: the cluster's server, CA and server name go to the plugin in
  // KUBERNETES_EXEC_INFO's spec.cluster (gke-gcloud-auth-plugin asks for them).
  bool provide_cluster_info = false;
  std::string server, ca_pem, tls_server_name;
};

// The tokens of one exec plugin. Thread-safe: concurrent callers wait for one run.
class ExecCredential {
 public:
  explicit ExecCredential(ExecConfig config);

  // The cached token while it is unexpired (10 s of margin) and not invalidated; else the
  // plugin's, run now. Errors name the command and say why (not found, exit status with
  // its stderr, an answer that is not an ExecCredential, a client certificate, no token).
  Result<std::string> Get();
  // Forgets the token (a 401): the next Get() runs the plugin.
  void Invalidate();

  // The clock the expiry is compared with (seconds since the epoch); tests replace it.
  void SetClockForTest(std::time_t (*now)()) { now_ = now; }

 private:
  Result<std::string> Run();

  const ExecConfig config_;
  std::mutex mu_;
  std::optional<std::string> token_;
  std::optional<std::time_t> expires_;  // none: until a 401
  std::time_t (*now_)() = nullptr;
};

// Parses an RFC 3339 timestamp ("2026-12-06T10:00:00Z", "...+01:00", fractions allowed)
// into seconds since the epoch.
Result<std::time_t> ParseRfc3339(const std::string& text);

}  // namespace hcashare::kube
