// Preparer: what NodePrepareResources and NodeUnprepareResources do, apart from gRPC.
//
// Prepare, per claim: a claim in the checkpoint is answered again from it (no API call);
// otherwise the ResourceClaim is read from the API server, its metadata.uid must be the UID
// the kubelet named ("claim replaced" otherwise) and status.allocation must be set; of its
// allocation results only those of our driver and pool are taken, each mapped to a device of
// this node through the DeviceLookup (an unknown device fails the claim, naming it). Then
// the claim's CDI spec is written (dra/cdi_claim.h), the claim is checkpointed, and its
// devices are returned with their CDI IDs. Unprepare works from the checkpoint alone: it
// removes the claim's CDI spec (only while it is still the file we wrote) and the entry; a
// claim it never prepared is a success (its spec, if one is left, still goes). A Prepare
// that an Unprepare of the same claim overtakes does not write the claim back. Errors are
// per claim (the kubelet retries them); an unreachable API server fails only the claims
// that needed it. Thread-safe: calls may run at once (the API reads run unlocked).
//
// State (docs/dra.md, "State that survives"): one Preparer per checkpoint, kept by an
// flock on "<checkpoint>.lock"; a checkpoint that cannot be read is kept aside and rebuilt
// from the claims the kubelet reports held, never a refusal to start; Collect removes
// entries no pod holds whose claim the API server no longer has.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/owned_files.h"
#include "common/status.h"
#include "common/unique_fd.h"
#include "interop/dra_checkpoint.h"
#include "interop/kubelet_claims.h"

namespace hcashare::kube {
class RestClient;
}

namespace hcashare::dra {

// The most claims one Prepare or Unprepare request may name.
inline constexpr size_t kMaxClaimsPerRequest = 128;
// The most allocation results of our driver one claim may have.
inline constexpr size_t kMaxDevicesPerClaim = 128;
// The largest ResourceClaim (JSON) read.
inline constexpr size_t kMaxClaimBytes = size_t{2} << 20;

// A claim as the kubelet names it.
struct ClaimRef {
  std::string namespace_name;
  std::string uid;
  std::string name;
};

// Where Prepare reads ResourceClaims.
class ClaimSource {
 public:
  virtual ~ClaimSource() = default;
  // The ResourceClaim `name` of namespace `ns` as JSON text. NotFound when it does not
  // exist; other errors name what failed.
  virtual Result<std::string> GetClaim(const std::string& ns, const std::string& name) = 0;
};

// A ClaimSource on the API server:
// GET /apis/resource.k8s.io/<api_version>/namespaces/<ns>/resourceclaims/<name>, each GET
// bounded by `timeout` (the kubelet gives a whole Prepare call 45 s).
class RestClaimSource final : public ClaimSource {
 public:
  // `client` must outlive the source; `api_version` is "v1", "v1beta2" or "v1beta1".
  RestClaimSource(kube::RestClient* client, std::string api_version,
                  std::chrono::milliseconds timeout = std::chrono::seconds(10))
      : client_(client), api_version_(std::move(api_version)), timeout_(timeout) {}
  // FailedPrecondition for an answer larger than kMaxClaimBytes.
  Result<std::string> GetClaim(const std::string& ns, const std::string& name) override;

 private:
  kube::RestClient* const client_;
  const std::string api_version_;
  const std::chrono::milliseconds timeout_;
};

// A device of this node that Prepare can hand out.
struct PreparableDevice {
  std::string name;                       // the DRA device name
  std::string resource_name;              // "<prefix>/<name>" of the config resource
  std::string pci_address;                // or the device ID the CNI takes
  std::vector<std::string> rdma_devices;  // "mlx5_0", ...
  std::vector<std::string> char_devices;  // host paths of the RDMA device's char devices
  int numa_node = -1;                     // -1 when unknown
  bool set_nccl_ib_hca = false;           // its resource has `setNcclIbHca`
};

// The device `device` of pool `pool` on this node, or nullopt when there is none (unknown,
// unplugged). Called without the Preparer's lock; must be thread-safe.
using DeviceLookup = std::function<std::optional<PreparableDevice>(const std::string& pool,
                                                                   const std::string& device)>;

// How a Preparer works.
struct PreparerOptions {
  std::string driver;           // our driver name
  std::string pool;             // our pool (the node name)
  std::string cdi_dir;          // where claim CDI specs go
  std::string checkpoint_path;  // CheckpointPath()
  // Names this daemon's CDI files' ledger stably across restarts (e.g. the canonical
  // kubelet root); the driver name is added.
  std::string owner;
  // Non-empty when the node's container runtime cannot give containers CDI devices: says why.
  // A claim not yet prepared then fails with it (the pod waits with the reason in its
  // events), rather than start without its devices. Unset or "": no such check.
  std::function<std::string()> runtime_refusal;
  // The claims of our driver that containers of this node hold, as the kubelet reports them
  // (pod-resources): what an unusable checkpoint is rebuilt from, and what Collect keeps.
  // Unset: a lost checkpoint starts empty, and Collect does nothing.
  std::function<Result<std::vector<KubeletClaim>>()> kubelet_claims;
};

// How many files an unusable checkpoint is kept aside in, at most: the newest.
inline constexpr size_t kMaxKeptAsideCheckpoints = 3;

// What one Collect did.
struct CollectReport {
  size_t checked = 0;    // entries no container holds, asked of the API server
  size_t collected = 0;  // of those, removed: their claim is gone or replaced
  size_t remaining = 0;  // entries after the round
};

// What Prepare answers for one claim: its devices, or an error.
struct ClaimOutcome {
  std::vector<PreparedDevice> devices;
  std::string error;  // not empty: the claim failed
};

class Preparer {
 public:
  // Takes the checkpoint's lock (Unavailable, naming it, while another instance holds it),
  // removes the temporary files of writes killed midway, loads the checkpoint, and takes over the
  // CDI specs an earlier run wrote: those of checkpointed claims are kept, others removed. A
  // checkpoint that cannot be read or parsed is renamed to "<checkpoint>.unusable-<unix time>.<ns>"
  // (the newest kMaxKeptAsideCheckpoints kept), logged, and rebuilt from `kubelet_claims`; every
  // CDI spec is then kept, since a running pod's restarted container needs its own. An error only
  // when the file cannot even be moved aside. `source` must outlive the Preparer.
  static Result<std::unique_ptr<Preparer>> Create(PreparerOptions options, ClaimSource* source,
                                                  DeviceLookup lookup);

  // By claim UID. InvalidArgument (the whole request) for more than kMaxClaimsPerRequest.
  // Claims whose turn comes after `deadline` (the kubelet's call deadline) fail at once,
  // for the kubelet to retry, rather than make the whole call late.
  Result<std::map<std::string, ClaimOutcome>> Prepare(
      const std::vector<ClaimRef>& claims, std::chrono::steady_clock::time_point deadline =
                                               std::chrono::steady_clock::time_point::max());
  // By claim UID: "" on success, else the error.
  Result<std::map<std::string, std::string>> Unprepare(const std::vector<ClaimRef>& claims);

  // The PCI address of a prepared device (pool, device), from the checkpoint.
  std::optional<std::string> PciAddressOf(const std::string& pool, const std::string& device) const;
  // The prepared claim `uid` (a copy), or nullopt.
  std::optional<PreparedClaim> Prepared(const std::string& uid) const;
  // How many claims the checkpoint holds.
  size_t PreparedCount() const;
  // Every device of every prepared claim (copies).
  std::vector<PreparedDevice> PreparedDevices() const;
  // Fills in what the DeviceLookup knows now (PCI address, resource, RDMA devices) of
  // recovered devices it did not know at start (the driver's first view of the host comes
  // after Create). Cheap when there are none; a device still unknown is looked for again at
  // the next call.
  void CompleteRecovered();
  // Where Create moved an unusable checkpoint; "" when it found none.
  const std::string& kept_aside() const { return kept_aside_; }
  const PreparerOptions& options() const { return opts_; }

  // One round of collection: entries that no container holds (kubelet_claims) are checked
  // against the API server through `source` (which may pace its reads apart from
  // Prepare's), at most `max_checks` of them, least recently checked first;
  // those whose claim is gone (NotFound) or has another UID are unprepared. Nothing is
  // collected when the kubelet cannot be asked or an API read fails otherwise. Entries
  // prepared within `grace` are left (their pod may not be listed yet).
  CollectReport Collect(ClaimSource* source, size_t max_checks, std::chrono::seconds grace);

 private:
  Preparer(PreparerOptions options, ClaimSource* source, DeviceLookup lookup, Checkpoint cp);
  // The devices of `ref`, or an error for the claim.
  Result<std::vector<PreparedDevice>> PrepareOne(const ClaimRef& ref);
  // The claim's checkpointed devices when it is prepared and its spec is still in place.
  std::optional<std::vector<PreparedDevice>> Cached(const std::string& uid) const;
  Status UnprepareOne(const ClaimRef& ref);
  // Create's recovery: entries from the kubelet's report (recovered = true), saved.
  void Rebuild();
  // The names of our claim CDI specs now in the CDI directory.
  std::set<std::string> OurSpecFiles() const;

  // Prepares of one claim in progress, and how many Unprepares of it came meanwhile.
  struct InFlight {
    int count = 0;
    uint64_t unprepares = 0;
  };

  const PreparerOptions opts_;
  ClaimSource* const source_;
  const DeviceLookup lookup_;
  UniqueFd lock_;                        // the flock on "<checkpoint>.lock"
  std::string kept_aside_;               // set by Create
  std::atomic<bool> incomplete_{false};  // recovered devices without a PCI address

  mutable std::mutex mu_;
  Checkpoint checkpoint_;                                                 // guarded by mu_
  OwnedFiles cdi_files_;                                                  // guarded by mu_
  std::map<std::string, InFlight> in_flight_;                             // guarded by mu_
  std::map<std::string, std::chrono::steady_clock::time_point> seen_;     // guarded by mu_
  std::map<std::string, std::chrono::steady_clock::time_point> checked_;  // guarded by mu_
};

// Checks a claim as the kubelet names it: UID, namespace (a DNS label) and name (a DNS
// subdomain). InvalidArgument naming the bad field.
Status CheckClaimRef(const ClaimRef& ref);

// The file name part of `path` when it lies directly in `dir`, else "".
std::string FileNameIn(const std::string& dir, const std::string& path);

// The metadata.uid of ResourceClaim `text` (JSON, read with Prepare's bounds); "" when it
// has none or is not a claim.
std::string ClaimUidOf(const std::string& text);

}  // namespace hcashare::dra
