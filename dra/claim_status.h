// ClaimStatusWriter: the DRA driver's side of claim device status (status.devices[] with
// networkData, as DraNet writes it). hcashare-cni records each DRA device it attaches in a
// file (interop/dra_network_status.h); each round reads that directory and, for every claim
// whose devices' data changed since its last successful write, server-side applies the
// claim's status (PATCH <claim>/status, application/apply-patch+yaml, fieldManager = the
// driver, force=true): the driver's entries are exactly its devices with a file. A claim
// whose files are all gone (DEL) is applied once with no devices, which removes the driver's
// entries and leaves other managers'.
//
// Answers: 404 (the claim is gone) and 400/422 (refused for its content): not sent again
// until the claim's files change. 403 (RBAC without resourceclaims/status, or a
// server without DRAResourceClaimDeviceStatus): logged once, counted, retried next round;
// other errors retried next round. Files that cannot be read are logged once and skipped.
// One thread calls Sync (the driver's status thread); the counters are thread-safe.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <set>
#include <string>

#include "common/status.h"
#include "interop/dra_network_status.h"

namespace hcashare::kube {
class RestClient;
}

namespace hcashare::dra {

// The most network status files one round reads.
inline constexpr size_t kMaxNetworkStatusFiles = 4096;

struct ClaimStatusOptions {
  std::string dir;     // NetworkStatusDir()
  std::string driver;  // our driver: the field manager and each entry's driver
  // The resource.k8s.io version to write ("v1", ...), asked at each write.
  std::function<std::string()> api_version = [] { return std::string("v1"); };
  std::chrono::milliseconds timeout{5000};  // per PATCH
};

// What one Sync did.
struct ClaimStatusRound {
  size_t claims = 0;   // claims with a file
  size_t applied = 0;  // PATCHes that succeeded
  size_t failed = 0;   // PATCHes that failed (retried next round)
};

class ClaimStatusWriter {
 public:
  // `client` must outlive the writer.
  ClaimStatusWriter(ClaimStatusOptions options, kube::RestClient* client);

  // One round (see the file comment).
  ClaimStatusRound Sync();

  // Successful writes since start, and whether the last write the server refused with 403.
  uint64_t applied_total() const { return applied_total_.load(); }
  bool refused() const { return refused_.load(); }

 private:
  // One claim's desired entries, as the body's status.devices JSON text.
  struct Claim {
    std::string ns, name;
    std::string devices;  // JSON array text
  };
  // Applies `c` (whose devices text may be "[]"); OK, or the error (logged here).
  Status Apply(const std::string& uid, const Claim& c);

  const ClaimStatusOptions opts_;
  kube::RestClient* const client_;
  std::map<std::string, Claim> written_;         // by claim UID: what the server holds from us
  std::map<std::string, std::string> rejected_;  // by UID: devices the server refused (404/4xx)
  std::set<std::string> bad_files_;              // present and logged: not logged again
  std::atomic<uint64_t> applied_total_{0};
  std::atomic<bool> refused_{false};
};

}  // namespace hcashare::dra
