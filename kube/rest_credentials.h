// CredentialContext: the TLS client context of a RestClient (internal to hcashare_kube),
// built from the cluster configuration's CA and client key pair, and built again when one of
// their files changes (a Secret or projected volume rotating them), checked at most once an
// interval. Files that do not load (a half-written pair, a bad CA) are logged and the
// current context kept until they change again. Thread-safe.
#pragma once

#include <boost/asio/ssl.hpp>
#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "common/file_stamp.h"
#include "common/status.h"
#include "kube/config.h"

namespace hcashare::kube::internal {

// The TLS context a new connection uses; see the file comment.
class CredentialContext {
 public:
  // A context from `config`'s PEM texts; its files are watched every `check_interval`.
  static Result<std::unique_ptr<CredentialContext>> Create(
      const ClusterConfig& config, std::chrono::milliseconds check_interval);

  // The context for a new connection (a changed and loadable set of files replaces it).
  std::shared_ptr<boost::asio::ssl::context> Current();

 private:
  CredentialContext(const ClusterConfig& config, std::chrono::milliseconds check_interval);

  struct Watched {
    std::string path;
    std::optional<FileStamp> stamp;
  };
  const ClusterConfig& config_;  // the RestClient's, which outlives this
  const std::chrono::milliseconds check_interval_;
  std::mutex mu_;
  std::shared_ptr<boost::asio::ssl::context> ctx_;   // guarded by mu_
  std::vector<Watched> watched_;                     // guarded by mu_
  std::chrono::steady_clock::time_point checked_{};  // guarded by mu_
};

}  // namespace hcashare::kube::internal
