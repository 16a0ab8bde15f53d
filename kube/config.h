// Where the Kubernetes API server is and how to authenticate to it: a kubeconfig file
// (--kubeconfig FILE, its current context or a named one) or the in-cluster service account
// (KUBERNETES_SERVICE_HOST/PORT and the files under /var/run/secrets/kubernetes.io/
// serviceaccount). Both become one ClusterConfig; every error is a Status naming the file
// (or variable) and the field at fault.
//
// Supported: https servers, a CA (data or file), a client certificate and key (data or
// file), a bearer token (literal or file), an `exec` credential plugin that answers tokens
// (kube/exec_credential.h: EKS, GKE, AKS, OIDC). insecure-skip-tls-verify, basic auth and
// auth-provider plugins (removed from client-go in 1.26) are refused by name.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <ctime>
#include <mutex>
#include <optional>
#include <string>

#include "common/file_stamp.h"
#include "common/status.h"
#include "kube/exec_credential.h"
#include "kube/proxy.h"

namespace hcashare::kube {

// The largest kubeconfig read, and the largest CA, certificate, key or token file.
inline constexpr size_t kMaxKubeconfigBytes = size_t{1} << 20;
inline constexpr size_t kMaxCredentialFileBytes = 256 * 1024;
// The largest bearer token accepted (projected tokens are ~1 KiB).
inline constexpr size_t kMaxTokenBytes = 16 * 1024;
// The service account's directory in a pod.
inline constexpr char kServiceAccountDir[] = "/var/run/secrets/kubernetes.io/serviceaccount";

// An https server address split into its parts.
struct ServerUrl {
  std::string host;       // DNS name or IP address, IPv6 without brackets
  uint16_t port = 443;    // the URL's port, else 443
  std::string base_path;  // a path prefix ("" or "/k8s/clusters/c-1"), never ending in '/'
  bool host_is_ip = false;
};

// Parses "https://host[:port][/prefix]" (IPv6 hosts in brackets). InvalidArgument otherwise,
// naming `what` (e.g. "kubeconfig /root/.kube/config: clusters[0] \"k\" cluster.server").
Result<ServerUrl> ParseServerUrl(const std::string& url, const std::string& what);

// Everything needed to reach and authenticate to one API server.
struct ClusterConfig {
  std::string server;  // "https://host:port[/prefix]", as configured
  ServerUrl url;       // `server`, parsed
  // Name to verify the server certificate against (and to send as SNI); url.host when empty.
  std::string tls_server_name;
  std::string ca_pem;           // trusted CA certificates (PEM); never empty
  std::string ca_file;          // where ca_pem came from, "" for inline data
  std::string client_cert_pem;  // client certificate chain (PEM), with client_key_pem
  std::string client_key_pem;
  std::string client_cert_file;    // where they came from ("" for inline data); re-read by
  std::string client_key_file;     // RestClient when they change, as ca_file is
  std::string token;               // a literal bearer token, or ""
  std::string token_file;          // a bearer token file re-read when it changes (TokenFile), or ""
  std::optional<ExecConfig> exec;  // an exec credential plugin's tokens, or none
  // The HTTP proxy to tunnel through (CONNECT): the cluster's proxy-url, else the
  // environment's (kube/proxy.h; set by LoadClusterConfig); none: direct.
  std::optional<ProxyUrl> proxy;
  std::string namespace_name;  // the context's or service account's namespace, or ""
  std::string source;          // "kubeconfig FILE (context C)" or "in-cluster", for messages
};

// Loads `path` and resolves `context` (its current-context when empty). Relative file names
// inside are taken relative to the kubeconfig's directory, as kubectl does. Errors name the
// file and the field, e.g. `kubeconfig /k: users[0] "admin" user.client-key: ...`.
Result<ClusterConfig> LoadKubeconfig(const std::string& path, const std::string& context = "");

// The environment and directory the in-cluster config is read from.
struct InClusterSource {
  std::optional<std::string> host;  // KUBERNETES_SERVICE_HOST, nullopt when unset
  std::optional<std::string> port;  // KUBERNETES_SERVICE_PORT, nullopt when unset
  std::string service_account_dir = kServiceAccountDir;
  // This process's environment and the standard directory.
  static InClusterSource FromEnvironment();
};

// The in-cluster config: server from host and port, CA from ca.crt, token file `token`
// (checked readable now, re-read later), namespace from `namespace` when present. Errors
// name the variable or file.
Result<ClusterConfig> LoadInClusterConfig(const InClusterSource& source);

// A kubeconfig when `kubeconfig` is not empty, else the in-cluster config (the --kubeconfig
// flag's meaning); without a proxy-url, the environment's proxy (HTTPS_PROXY, NO_PROXY).
Result<ClusterConfig> LoadClusterConfig(const std::string& kubeconfig, const std::string& context);

// A bearer token file that is re-read when it changes (the kubelet rewrites a projected
// token long before it expires), or at once after Invalidate() (a 401). Thread-safe.
class TokenFile {
 public:
  // Reads nothing yet: the first Get() does.
  explicit TokenFile(std::string path);

  // The current token: the cached one while the file's identity (device, inode, size,
  // modification time) is unchanged, else the file read again. Errors name the file; a
  // file that became unreadable or empty is an error (the stale token is not reused).
  Result<std::string> Get();
  // Forgets the cached token, so that the next Get() reads the file.
  void Invalidate();

  // The file's path.
  const std::string& path() const { return path_; }

 private:
  const std::string path_;
  std::mutex mu_;
  std::optional<FileStamp> stamp_;  // of the cached token
  std::string token_;
};

}  // namespace hcashare::kube
