#include "kube/exec_credential.h"

#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <nlohmann/json.hpp>

#include "common/process.h"
#include "kube/config.h"
#include "kube/pem.h"

extern char** environ;

namespace hcashare::kube {
namespace {

using json = nlohmann::json;

constexpr std::time_t kExpiryMargin = 10;  // seconds: a token about to expire is renewed

std::time_t WallClock() { return std::time(nullptr); }

// The executable `command` names: as given when it holds a '/' (relative to `dir` when not
// absolute), else the first match in PATH, as client-go (exec.LookPath) finds it.
Result<std::string> FindCommand(const std::string& command, const std::string& dir) {
  if (command.find('/') != std::string::npos) {
    std::string path = command.front() == '/' ? command : dir + "/" + command;
    if (::access(path.c_str(), X_OK) != 0) {
      return Status::NotFound(path + ": " + std::strerror(errno));
    }
    return path;
  }
  const char* path_env = std::getenv("PATH");
  std::string search = path_env != nullptr ? path_env : "/usr/local/bin:/usr/bin:/bin";
  size_t at = 0;
  while (at <= search.size()) {
    const size_t colon = std::min(search.find(':', at), search.size());
    std::string d = search.substr(at, colon - at);
    if (d.empty()) d = ".";
    const std::string candidate = d + "/" + command;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
    at = colon + 1;
  }
  return Status::NotFound(command + ": not found in PATH");
}

}  // namespace

Result<std::time_t> ParseRfc3339(const std::string& text) {
  std::tm tm{};
  const char* rest = ::strptime(text.c_str(), "%Y-%m-%dT%H:%M:%S", &tm);
  if (rest == nullptr) return Status::InvalidArgument("not an RFC 3339 time: " + text);
  if (*rest == '.') {
    ++rest;
    while (*rest >= '0' && *rest <= '9') ++rest;
  }
  long offset = 0;
  if (*rest == 'Z' || *rest == 'z') {
    ++rest;
  } else if (*rest == '+' || *rest == '-') {
    const int sign = *rest == '-' ? -1 : 1;
    int h = 0, m = 0;
    if (std::sscanf(rest + 1, "%2d:%2d", &h, &m) != 2) {
      return Status::InvalidArgument("not an RFC 3339 time: " + text);
    }
    offset = sign * (h * 3600L + m * 60L);
    rest += 6;
  } else {
    return Status::InvalidArgument("not an RFC 3339 time (no zone): " + text);
  }
  if (*rest != '\0') return Status::InvalidArgument("not an RFC 3339 time: " + text);
  return static_cast<std::time_t>(::timegm(&tm) - offset);
}

ExecCredential::ExecCredential(ExecConfig config) : config_(std::move(config)), now_(&WallClock) {}

void ExecCredential::Invalidate() {
  std::lock_guard<std::mutex> lock(mu_);
  token_.reset();
}

Result<std::string> ExecCredential::Get() {
  std::lock_guard<std::mutex> lock(mu_);
  if (token_ && (!expires_ || now_() + kExpiryMargin < *expires_)) return *token_;
  token_.reset();
  ASSIGN_OR_RETURN(std::string token, Run());
  token_ = token;
  return token;
}

Result<std::string> ExecCredential::Run() {
  const std::string what = "exec credential plugin " + config_.command;
  Result<std::string> path = FindCommand(config_.command, config_.dir);
  if (!path.ok()) {
    return Status::Unavailable(
        what + ": " + path.status().message() +
        (config_.install_hint.empty() ? "" : " (" + config_.install_hint + ")"));
  }
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    if (std::strncmp(*e, "KUBERNETES_EXEC_INFO=", 21) != 0) env.emplace_back(*e);
  }
  for (const auto& [name, value] : config_.env) env.push_back(name + "=" + value);
  json info = {{"apiVersion", config_.api_version},
               {"kind", "ExecCredential"},
               {"spec", {{"interactive", false}}}};
  if (config_.provide_cluster_info) {
    json cluster = {{"server", config_.server},
                    {"certificate-authority-data", EncodeBase64(config_.ca_pem)}};
    if (!config_.tls_server_name.empty()) cluster["tls-server-name"] = config_.tls_server_name;
    info["spec"]["cluster"] = cluster;
  }
  env.push_back("KUBERNETES_EXEC_INFO=" + info.dump());
  std::vector<std::string> argv = {*path};
  argv.insert(argv.end(), config_.args.begin(), config_.args.end());
  auto out = Execute(*path, argv, env, "", kExecTimeout, kMaxExecOutputBytes);
  if (!out.ok()) return Status::Unavailable(what + ": " + out.status().message());
  if (out->exit_code != 0) {
    return Status::Unavailable(what + " exited with " + std::to_string(out->exit_code) + ": " +
                               out->err.substr(0, 1024));
  }
  const json cred = json::parse(out->out, nullptr, /*allow_exceptions=*/false);
  if (!cred.is_object() || cred.value("kind", "") != "ExecCredential" || !cred.contains("status") ||
      !cred["status"].is_object()) {
    return Status::Unavailable(what + ": the answer is not an ExecCredential with a status");
  }
  if (cred.value("apiVersion", "") != config_.api_version) {
    return Status::Unavailable(what + ": answered apiVersion " +
                               cred.value("apiVersion", "(none)") + ", asked " +
                               config_.api_version);
  }
  const json& status = cred["status"];
  if (status.contains("clientCertificateData")) {
    return Status::Unavailable(what +
                               ": answered a client certificate; only tokens are "
                               "supported (docs/injector.md)");
  }
  const auto token = status.find("token");
  if (token == status.end() || !token->is_string() || token->get<std::string>().empty()) {
    return Status::Unavailable(what + ": the ExecCredential has no status.token");
  }
  if (token->get<std::string>().size() > kMaxTokenBytes) {
    return Status::Unavailable(what + ": the token is longer than " +
                               std::to_string(kMaxTokenBytes) + " bytes");
  }
  for (unsigned char c : token->get<std::string>()) {
    if (c < 0x21 || c > 0x7e) {
      return Status::Unavailable(what + ": the token holds a byte that is not printable ASCII");
    }
  }
  expires_.reset();
  if (const auto exp = status.find("expirationTimestamp");
      exp != status.end() && exp->is_string()) {
    Result<std::time_t> t = ParseRfc3339(exp->get<std::string>());
    if (!t.ok())
      return Status::Unavailable(what + ": expirationTimestamp: " + t.status().message());
    expires_ = *t;
  }
  return token->get<std::string>();
}

}  // namespace hcashare::kube
