#include "kube/rest_credentials.h"

#include <utility>

#include "common/log.h"
#include "common/safe_file.h"
#include "http/tls_context.h"

namespace hcashare::kube::internal {
namespace {

namespace asio = boost::asio;
namespace ssl = boost::asio::ssl;

// Loads the CA, client certificate and key into `ctx`.
Status LoadCredentials(ssl::context* ctx, const ClusterConfig& config) {
  RETURN_IF_ERROR(tls::SetModernDefaults(ctx));
  boost::system::error_code ec;
  ctx->set_verify_mode(ssl::verify_peer, ec);
  if (config.ca_pem.empty()) return Status::InvalidArgument(config.source + ": no CA");
  if (ctx->add_certificate_authority(asio::buffer(config.ca_pem), ec)) {
    std::string why = tls::TakeOpenSslError();
    return Status::InvalidArgument(config.source +
                                   ": the CA: " + (why.empty() ? ec.message() : why));
  }
  if (!config.client_cert_pem.empty()) {
    Status s = tls::UseKeyPair(ctx, config.client_cert_pem, config.client_key_pem, "client");
    if (!s.ok()) return s.WithContext(config.source);
  }
  return Status::Ok();
}

}  // namespace

CredentialContext::CredentialContext(const ClusterConfig& config,
                                     std::chrono::milliseconds check_interval)
    : config_(config), check_interval_(check_interval) {}

Result<std::unique_ptr<CredentialContext>> CredentialContext::Create(
    const ClusterConfig& config, std::chrono::milliseconds check_interval) {
  std::unique_ptr<CredentialContext> c(new CredentialContext(config, check_interval));
  for (const std::string* f :
       {&config.ca_file, &config.client_cert_file, &config.client_key_file}) {
    if (f->empty()) continue;
    Result<FileStamp> st = StampOf(*f);
    c->watched_.push_back({*f, st.ok() ? std::optional<FileStamp>(*st) : std::nullopt});
  }
  c->ctx_ = std::make_shared<ssl::context>(ssl::context::tls_client);
  RETURN_IF_ERROR(LoadCredentials(c->ctx_.get(), config));
  return c;
}

std::shared_ptr<ssl::context> CredentialContext::Current() {
  std::lock_guard<std::mutex> lock(mu_);
  const auto now = std::chrono::steady_clock::now();
  if (watched_.empty() || now - checked_ < check_interval_) return ctx_;
  checked_ = now;
  bool changed = false;
  for (Watched& w : watched_) {
    Result<FileStamp> st = StampOf(w.path);
    std::optional<FileStamp> stamp = st.ok() ? std::optional<FileStamp>(*st) : std::nullopt;
    if (stamp != w.stamp) changed = true;
    w.stamp = stamp;
  }
  if (!changed) return ctx_;
  ClusterConfig fresh = config_;
  Status st = Status::Ok();
  for (auto [path, pem] : {std::pair{&config_.ca_file, &fresh.ca_pem},
                           std::pair{&config_.client_cert_file, &fresh.client_cert_pem},
                           std::pair{&config_.client_key_file, &fresh.client_key_pem}}) {
    if (path->empty() || !st.ok()) continue;
    SafeReadOptions o;
    o.max_bytes = kMaxCredentialFileBytes;
    o.follow_symlinks = true;  // Secrets and projected volumes rotate through symlinks
    Result<std::string> text = ReadFileSafely(*path, o);
    if (text.ok()) {
      *pem = std::move(*text);
    } else {
      st = text.status();
    }
  }
  auto ctx = std::make_shared<ssl::context>(ssl::context::tls_client);
  if (st.ok()) st = LoadCredentials(ctx.get(), fresh);
  if (!st.ok()) {
    LogWarn("the API client's changed credential files do not load; keeping the previous ones",
            {{"error", st.message()}});
    return ctx_;
  }
  LogInfo("the API client loaded its changed credential files", {{"source", config_.source}});
  ctx_ = std::move(ctx);
  return ctx_;
}

}  // namespace hcashare::kube::internal
