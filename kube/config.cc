#include "kube/config.h"

#include <arpa/inet.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstdlib>
#include <functional>
#include <nlohmann/json.hpp>
#include <utility>

#include "common/safe_file.h"
#include "json/document.h"
#include "kube/pem.h"

namespace hcashare::kube {
namespace {

using json = nlohmann::json;

// Reads one credential file (symlinks followed: Secrets and projected volumes use them).
Result<std::string> ReadCredential(const std::string& path, size_t max_bytes,
                                   const std::string& what) {
  SafeReadOptions o;
  o.max_bytes = max_bytes;
  o.follow_symlinks = true;
  o.what = what;
  return ReadFileSafely(path, o);
}

// `s` without leading and trailing ASCII whitespace.
std::string Trim(const std::string& s) {
  const char* ws = " \t\r\n";
  const size_t b = s.find_first_not_of(ws);
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(ws) - b + 1);
}

// A checked bearer token from file text. `what` names the file.
Result<std::string> TokenFromText(const std::string& text, const std::string& what) {
  std::string token = Trim(text);
  if (token.empty()) return Status::InvalidArgument(what + ": the token is empty");
  if (token.size() > kMaxTokenBytes) {
    return Status::InvalidArgument(what + ": the token is longer than " +
                                   std::to_string(kMaxTokenBytes) + " bytes");
  }
  for (unsigned char c : token) {
    if (c < 0x21 || c > 0x7e) {
      return Status::InvalidArgument(what + ": the token holds a byte that is not printable ASCII");
    }
  }
  return token;
}

// One kubeconfig being resolved: its path, directory and parsed tree.
class Kubeconfig {
 public:
  Kubeconfig(std::string path, json root) : path_(std::move(path)), root_(std::move(root)) {
    const size_t slash = path_.rfind('/');
    dir_ = slash == std::string::npos ? "." : path_.substr(0, slash == 0 ? 1 : slash);
  }

  Status Error(const std::string& field, const std::string& message) const {
    return Status::InvalidArgument("kubeconfig " + path_ + ": " + field + ": " + message);
  }

  // The entry named `name` in the list `list` ("contexts", "clusters", "users") and the
  // field path of its `key` ("context", "cluster", "user") object.
  Result<std::pair<const json*, std::string>> Find(const std::string& list, const std::string& key,
                                                   const std::string& name) const {
    const json* entries = root_.is_object() && root_.contains(list) ? &root_[list] : nullptr;
    if (entries == nullptr || entries->is_null()) {
      return Error(list, "missing (looking for \"" + name + "\")");
    }
    if (!entries->is_array()) return Error(list, "must be a list");
    for (size_t i = 0; i < entries->size(); ++i) {
      const json& e = (*entries)[i];
      const std::string at = list + "[" + std::to_string(i) + "]";
      if (!e.is_object() || !e.contains("name") || !e["name"].is_string()) {
        return Error(at, "each entry needs a string \"name\"");
      }
      if (e["name"].get<std::string>() != name) continue;
      const std::string field = at + " " + jsonin::Quote(name) + " " + key;
      if (!e.contains(key) || !e[key].is_object()) return Error(field, "missing or not a map");
      return std::make_pair(&e[key], field);
    }
    return Error(list, "no entry named " + jsonin::Quote(name));
  }

  // The string at obj[key], "" when absent or null; an error when of another type.
  Result<std::string> String(const json& obj, const std::string& field,
                             const std::string& key) const {
    if (!obj.contains(key) || obj[key].is_null()) return std::string();
    if (!obj[key].is_string()) return Error(field + "." + key, "must be a string");
    return obj[key].get<std::string>();
  }

  // The bytes of `<key>-data` (base64) or of the file `<key>`: at most one may be set.
  // `check` validates the decoded bytes. "" when neither is set.
  Result<std::string> Credential(const json& obj, const std::string& field, const std::string& key,
                                 const std::function<Status(const std::string&)>& check,
                                 std::string* file_out = nullptr) const {
    ASSIGN_OR_RETURN(std::string data, String(obj, field, key + "-data"));
    ASSIGN_OR_RETURN(std::string file, String(obj, field, key));
    if (!data.empty() && !file.empty()) {
      return Error(field, "set " + key + " or " + key + "-data, not both");
    }
    std::string bytes;
    std::string where;
    if (!data.empty()) {
      where = field + "." + key + "-data";
      Result<std::string> decoded = DecodeBase64(data);
      if (!decoded.ok()) return Error(where, decoded.status().message());
      bytes = std::move(*decoded);
    } else if (!file.empty()) {
      if (file.front() != '/') file = dir_ + "/" + file;
      where = field + "." + key + " (" + file + ")";
      Result<std::string> read = ReadCredential(file, kMaxCredentialFileBytes, key);
      if (!read.ok()) return Error(field + "." + key, read.status().message());
      bytes = std::move(*read);
      if (file_out != nullptr) *file_out = file;
    } else {
      return std::string();
    }
    if (Status st = check(bytes); !st.ok()) return Error(where, st.message());
    return bytes;
  }

  Result<ClusterConfig> Resolve(std::string context_name) const;

 private:
  Status ReadCluster(const json& cluster, const std::string& field, ClusterConfig* out) const;
  Status ReadUser(const json& user, const std::string& field, ClusterConfig* out) const;
  Result<ExecConfig> ReadExec(const json& exec, const std::string& field) const;

  std::string path_;
  std::string dir_;
  json root_;
};

Status CheckCertificates(const std::string& pem) { return CountPemCertificates(pem).status(); }

Status Kubeconfig::ReadCluster(const json& cluster, const std::string& field,
                               ClusterConfig* out) const {
  ASSIGN_OR_RETURN(out->server, String(cluster, field, "server"));
  if (out->server.empty()) return Error(field + ".server", "missing");
  ASSIGN_OR_RETURN(out->url,
                   ParseServerUrl(out->server, "kubeconfig " + path_ + ": " + field + ".server"));
  ASSIGN_OR_RETURN(out->tls_server_name, String(cluster, field, "tls-server-name"));
  ASSIGN_OR_RETURN(std::string proxy, String(cluster, field, "proxy-url"));
  if (!proxy.empty()) {
    ASSIGN_OR_RETURN(out->proxy,
                     ParseProxyUrl(proxy, "kubeconfig " + path_ + ": " + field + ".proxy-url"));
  }
  if (cluster.contains("insecure-skip-tls-verify") && cluster["insecure-skip-tls-verify"] == true) {
    return Error(field + ".insecure-skip-tls-verify",
                 "not supported: the server certificate is always verified");
  }
  ASSIGN_OR_RETURN(out->ca_pem, Credential(cluster, field, "certificate-authority",
                                           CheckCertificates, &out->ca_file));
  if (out->ca_pem.empty()) {
    return Error(field,
                 "needs certificate-authority or certificate-authority-data (the system "
                 "trust store is not used)");
  }
  return Status::Ok();
}

Status Kubeconfig::ReadUser(const json& user, const std::string& field, ClusterConfig* out) const {
  for (const char* unsupported : {"auth-provider", "username", "password"}) {
    if (user.contains(unsupported) && !user[unsupported].is_null()) {
      return Error(field + "." + unsupported,
                   "not supported (use a token, a token file, a client certificate or an "
                   "exec plugin)");
    }
  }
  if (user.contains("exec") && !user["exec"].is_null()) {
    ASSIGN_OR_RETURN(out->exec, ReadExec(user["exec"], field + ".exec"));
  }
  ASSIGN_OR_RETURN(out->token, String(user, field, "token"));
  ASSIGN_OR_RETURN(out->token_file, String(user, field, "tokenFile"));
  if (!out->token.empty() + !out->token_file.empty() + out->exec.has_value() > 1) {
    return Error(field, "set one of token, tokenFile and exec");
  }
  if (!out->token.empty()) {
    Result<std::string> t = TokenFromText(out->token, "value");
    if (!t.ok()) return Error(field + ".token", t.status().message());
  }
  if (!out->token_file.empty()) {
    if (out->token_file.front() != '/') out->token_file = dir_ + "/" + out->token_file;
    Result<std::string> t = TokenFile(out->token_file).Get();
    if (!t.ok()) return Error(field + ".tokenFile", t.status().message());
  }
  ASSIGN_OR_RETURN(out->client_cert_pem, Credential(user, field, "client-certificate",
                                                    CheckCertificates, &out->client_cert_file));
  ASSIGN_OR_RETURN(out->client_key_pem, Credential(user, field, "client-key", CheckPemPrivateKey,
                                                   &out->client_key_file));
  if (out->client_cert_pem.empty() != out->client_key_pem.empty()) {
    return Error(field, "client-certificate and client-key go together");
  }
  return Status::Ok();
}

Result<ExecConfig> Kubeconfig::ReadExec(const json& exec, const std::string& field) const {
  if (!exec.is_object()) return Error(field, "must be a map");
  ExecConfig out;
  out.dir = dir_;
  ASSIGN_OR_RETURN(out.api_version, String(exec, field, "apiVersion"));
  if (out.api_version != "client.authentication.k8s.io/v1" &&
      out.api_version != "client.authentication.k8s.io/v1beta1") {
    return Error(field + ".apiVersion",
                 "must be client.authentication.k8s.io/v1 or /v1beta1, not " +
                     jsonin::Quote(out.api_version));
  }
  ASSIGN_OR_RETURN(out.command, String(exec, field, "command"));
  if (out.command.empty()) return Error(field + ".command", "missing");
  ASSIGN_OR_RETURN(out.install_hint, String(exec, field, "installHint"));
  if (const auto args = exec.find("args"); args != exec.end() && !args->is_null()) {
    if (!args->is_array()) return Error(field + ".args", "must be a list of strings");
    for (const json& a : *args) {
      if (!a.is_string()) return Error(field + ".args", "must be a list of strings");
      out.args.push_back(a.get<std::string>());
    }
  }
  if (const auto env = exec.find("env"); env != exec.end() && !env->is_null()) {
    if (!env->is_array()) return Error(field + ".env", "must be a list of {name, value}");
    for (size_t i = 0; i < env->size(); ++i) {
      const json& e = (*env)[i];
      const std::string at = field + ".env[" + std::to_string(i) + "]";
      if (!e.is_object() || !e.contains("name") || !e["name"].is_string() ||
          e["name"].get<std::string>().empty() ||
          e["name"].get<std::string>().find('=') != std::string::npos || !e.contains("value") ||
          !e["value"].is_string()) {
        return Error(at, "must be {name, value}, strings, the name without '='");
      }
      out.env.emplace_back(e["name"].get<std::string>(), e["value"].get<std::string>());
    }
  }
  ASSIGN_OR_RETURN(std::string mode, String(exec, field, "interactiveMode"));
  if (mode == "Always") {
    return Error(field + ".interactiveMode",
                 "\"Always\" needs a terminal, which a daemon never has (use a plugin that "
                 "runs without one, or a token)");
  }
  if (!mode.empty() && mode != "Never" && mode != "IfAvailable") {
    return Error(field + ".interactiveMode", "must be Never, IfAvailable or Always");
  }
  if (const auto p = exec.find("provideClusterInfo"); p != exec.end() && !p->is_null()) {
    if (!p->is_boolean()) return Error(field + ".provideClusterInfo", "must be true or false");
    out.provide_cluster_info = p->get<bool>();
  }
  return out;
}

Result<ClusterConfig> Kubeconfig::Resolve(std::string context_name) const {
  if (!root_.is_object()) return Error("$", "the kubeconfig must be a map");
  if (context_name.empty()) {
    ASSIGN_OR_RETURN(context_name, String(root_, "$", "current-context"));
    if (context_name.empty()) {
      return Error("current-context", "not set (name a context with --context)");
    }
  }
  ClusterConfig out;
  out.source = "kubeconfig " + path_ + " (context " + context_name + ")";
  ASSIGN_OR_RETURN(auto context, Find("contexts", "context", context_name));
  ASSIGN_OR_RETURN(std::string cluster_name, String(*context.first, context.second, "cluster"));
  if (cluster_name.empty()) return Error(context.second + ".cluster", "missing");
  ASSIGN_OR_RETURN(std::string user_name, String(*context.first, context.second, "user"));
  ASSIGN_OR_RETURN(out.namespace_name, String(*context.first, context.second, "namespace"));
  ASSIGN_OR_RETURN(auto cluster, Find("clusters", "cluster", cluster_name));
  RETURN_IF_ERROR(ReadCluster(*cluster.first, cluster.second, &out));
  if (!user_name.empty()) {
    ASSIGN_OR_RETURN(auto user, Find("users", "user", user_name));
    RETURN_IF_ERROR(ReadUser(*user.first, user.second, &out));
  }
  if (out.exec) {
    out.exec->server = out.server;
    out.exec->ca_pem = out.ca_pem;
    out.exec->tls_server_name = out.tls_server_name;
  }
  return out;
}

}  // namespace

Result<ServerUrl> ParseServerUrl(const std::string& url, const std::string& what) {
  auto bad = [&](const std::string& why) {
    return Status::InvalidArgument(what + ": " + jsonin::Quote(url) + ": " + why);
  };
  const std::string scheme = "https://";
  if (url.compare(0, scheme.size(), scheme) != 0) return bad("must start with https://");
  std::string rest = url.substr(scheme.size());
  const size_t slash = rest.find('/');
  std::string authority = rest.substr(0, slash);
  ServerUrl out;
  if (slash != std::string::npos) {
    out.base_path = rest.substr(slash);
    while (!out.base_path.empty() && out.base_path.back() == '/') out.base_path.pop_back();
    if (out.base_path.find_first_of("?# ") != std::string::npos) return bad("bad path");
  }
  if (authority.find('@') != std::string::npos) return bad("user info is not supported");
  std::string port;
  bool has_port = false;
  if (!authority.empty() && authority.front() == '[') {
    const size_t close = authority.find(']');
    if (close == std::string::npos) return bad("unterminated [IPv6] host");
    out.host = authority.substr(1, close - 1);
    in6_addr a6{};
    if (::inet_pton(AF_INET6, out.host.c_str(), &a6) != 1) return bad("bad IPv6 address");
    out.host_is_ip = true;
    std::string after = authority.substr(close + 1);
    if (!after.empty() && after.front() != ':') return bad("junk after ]");
    has_port = !after.empty();
    if (has_port) port = after.substr(1);
  } else {
    const size_t colon = authority.find(':');
    out.host = authority.substr(0, colon);
    has_port = colon != std::string::npos;
    if (has_port) port = authority.substr(colon + 1);
    in_addr a4{};
    out.host_is_ip = ::inet_pton(AF_INET, out.host.c_str(), &a4) == 1;
  }
  if (out.host.empty()) return bad("no host");
  if (out.host.find_first_of(" \t/?#") != std::string::npos) return bad("bad host");
  if (has_port) {
    if (port.empty() || port.size() > 5 ||
        port.find_first_not_of("0123456789") != std::string::npos) {
      return bad("bad port");
    }
    const unsigned long n = std::stoul(port);  // 1-5 digits: cannot throw
    if (n == 0 || n > 65535) return bad("port out of range");
    out.port = static_cast<uint16_t>(n);
  }
  return out;
}

Result<ClusterConfig> LoadKubeconfig(const std::string& path, const std::string& context) {
  Result<std::string> text = ReadCredential(path, kMaxKubeconfigBytes, "kubeconfig");
  if (!text.ok()) return text.status();
  jsonin::Document doc = jsonin::ParseYamlText(*text);
  if (!doc.parsed) {
    std::string why = doc.errors.empty() ? "cannot parse" : jsonin::JoinIssues(doc.errors);
    return Status::InvalidArgument("kubeconfig " + path + ": " + why);
  }
  return Kubeconfig(path, std::move(doc.root)).Resolve(context);
}

InClusterSource InClusterSource::FromEnvironment() {
  InClusterSource s;
  if (const char* h = std::getenv("KUBERNETES_SERVICE_HOST")) s.host = h;
  if (const char* p = std::getenv("KUBERNETES_SERVICE_PORT")) s.port = p;
  return s;
}

Result<ClusterConfig> LoadInClusterConfig(const InClusterSource& source) {
  const std::string hint = " (not running in a pod? give --kubeconfig)";
  if (!source.host || source.host->empty()) {
    return Status::FailedPrecondition("in-cluster config: KUBERNETES_SERVICE_HOST is not set" +
                                      hint);
  }
  if (!source.port || source.port->empty()) {
    return Status::FailedPrecondition("in-cluster config: KUBERNETES_SERVICE_PORT is not set" +
                                      hint);
  }
  ClusterConfig out;
  out.source = "in-cluster";
  const bool v6 = source.host->find(':') != std::string::npos;
  out.server = "https://" + (v6 ? "[" + *source.host + "]" : *source.host) + ":" + *source.port;
  ASSIGN_OR_RETURN(out.url, ParseServerUrl(out.server,
                                           "in-cluster config: KUBERNETES_SERVICE_HOST"
                                           " and KUBERNETES_SERVICE_PORT"));
  if (!out.url.base_path.empty()) {
    return Status::InvalidArgument("in-cluster config: KUBERNETES_SERVICE_HOST " +
                                   jsonin::Quote(*source.host) + " is not a host");
  }
  const std::string dir = source.service_account_dir;
  out.ca_file = dir + "/ca.crt";
  Result<std::string> ca = ReadCredential(out.ca_file, kMaxCredentialFileBytes, "CA bundle");
  if (!ca.ok()) return ca.status().WithContext("in-cluster config");
  if (Result<int> n = CountPemCertificates(*ca); !n.ok()) {
    return Status::InvalidArgument("in-cluster config: " + out.ca_file + ": " +
                                   n.status().message());
  }
  out.ca_pem = std::move(*ca);
  out.token_file = dir + "/token";
  if (Result<std::string> t = TokenFile(out.token_file).Get(); !t.ok()) {
    return t.status().WithContext("in-cluster config");
  }
  Result<std::string> ns = ReadCredential(dir + "/namespace", 256, "namespace file");
  if (ns.ok()) {
    out.namespace_name = Trim(*ns);
  } else if (!ns.status().IsNotFound()) {
    return ns.status().WithContext("in-cluster config");
  }
  return out;
}

Result<ClusterConfig> LoadClusterConfig(const std::string& kubeconfig, const std::string& context) {
  Result<ClusterConfig> out = !kubeconfig.empty()
                                  ? LoadKubeconfig(kubeconfig, context)
                                  : LoadInClusterConfig(InClusterSource::FromEnvironment());
  if (!out.ok() || out->proxy) return out;
  ASSIGN_OR_RETURN(
      out->proxy,
      ProxyFromEnvironment([](const char* name) -> const char* { return std::getenv(name); },
                           out->url.host, out->url.port));
  return out;
}

TokenFile::TokenFile(std::string path) : path_(std::move(path)) {}

Result<std::string> TokenFile::Get() {
  std::lock_guard<std::mutex> lock(mu_);
  Result<FileStamp> now = StampOf(path_);
  if (!now.ok()) {
    stamp_.reset();
    return now.status().WithContext("token file");
  }
  if (stamp_ && *stamp_ == *now) return token_;
  stamp_.reset();
  ASSIGN_OR_RETURN(std::string text, ReadCredential(path_, kMaxCredentialFileBytes, "token file"));
  ASSIGN_OR_RETURN(token_, TokenFromText(text, "token file " + path_));
  // The stamp taken before the read: a write racing the read is seen on the next call.
  stamp_ = *now;
  return token_;
}

void TokenFile::Invalidate() {
  std::lock_guard<std::mutex> lock(mu_);
  stamp_.reset();
}

}  // namespace hcashare::kube
