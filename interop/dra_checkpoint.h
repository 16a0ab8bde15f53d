// The DRA driver's node checkpoint: the claims it has prepared, by claim UID, in one JSON file
// (`<kubelet root>/plugins/<driver>/checkpoint.json`). It makes NodePrepareResources
// idempotent, lets NodeUnprepareResources work after the claim is gone from the API server,
// and tells hcashare-cni which PCI function a DRA device (pool, device) is, without the API
// server. Written atomically; read with a size cap. A file that cannot be read or parsed is
// an error naming the file, never an empty checkpoint. Not thread-safe.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/status.h"

namespace hcashare::dra {

// The largest checkpoint file read.
inline constexpr size_t kMaxCheckpointBytes = size_t{16} << 20;
// The most claims one checkpoint holds: a bound on memory, far above what a node's pods
// hold; entries no pod holds are collected (dra/prepare.h), so a missed Unprepare does not
// creep towards it.
inline constexpr size_t kMaxCheckpointClaims = 16384;
// The version written; a file of another version is refused.
inline constexpr int kCheckpointVersion = 1;

// One device of a prepared claim.
struct PreparedDevice {
  std::vector<std::string> request_names;  // the allocation result's request(s)
  std::string pool;
  std::string device;
  std::string pci_address;                // PCI address or device ID the CNI takes
  std::string resource;                   // the config's "<prefix>/<name>" it belongs to
  std::vector<std::string> rdma_devices;  // "mlx5_0", ...
  std::vector<std::string> cdi_device_ids;
  std::optional<std::string> share_id;  // the result's shareID (consumable capacity)
  // How its netdev appears in the pod when the CNI's DRA step attaches it (the claim's
  // opaque configuration, dra/claim_config.h): "" and 0 take the step's defaults.
  std::string interface_name;
  int mtu = 0;
  std::vector<std::string> addresses;  // CIDR; none: the DRA step's IPAM, if any

  bool operator==(const PreparedDevice& o) const;
};

// One prepared claim.
struct PreparedClaim {
  std::string uid;
  std::string namespace_name;
  std::string name;
  std::vector<PreparedDevice> devices;
  std::string cdi_spec_path;  // the claim's CDI spec file ("" when it has no device of ours)
  // Rebuilt from what the kubelet reported after the file was lost: no request names, and
  // a Prepare of it is done afresh rather than answered from here.
  bool recovered = false;

  bool operator==(const PreparedClaim& o) const;
};

// "<kubelet root>/plugins/<driver>/checkpoint.json".
std::string CheckpointPath(const std::string& kubelet_root, const std::string& driver);

class Checkpoint {
 public:
  // An empty checkpoint kept at `path` (nothing is read or written yet).
  explicit Checkpoint(std::string path) : path_(std::move(path)) {}

  // The checkpoint at `path`: empty when the file does not exist; an error naming the file
  // when it cannot be read (see ReadFileSafely), exceeds kMaxCheckpointBytes, or is not a
  // checkpoint of kCheckpointVersion (the message says what is wrong).
  static Result<Checkpoint> Load(const std::string& path);

  // The prepared claim `uid`, or null.
  const PreparedClaim* Find(const std::string& uid) const;
  // Every prepared claim, by UID.
  const std::map<std::string, PreparedClaim>& claims() const { return claims_; }
  // Adds or replaces `claim` and writes the file; on failure the checkpoint is unchanged.
  // FailedPrecondition when it would hold more than kMaxCheckpointClaims claims or its file
  // would exceed kMaxCheckpointBytes (a file Load would refuse is never written).
  Status Put(PreparedClaim claim);
  // Removes claim `uid` (nothing when absent) and writes the file; on failure the checkpoint
  // is unchanged.
  Status Erase(const std::string& uid);
  // As Put and Erase for many claims, with one write of the file.
  Status PutAll(std::vector<PreparedClaim> claims);
  Status EraseAll(const std::set<std::string>& uids);

  // Device `device` of pool `pool` in any prepared claim, or null.
  const PreparedDevice* FindDevice(const std::string& pool, const std::string& device) const;
  // The PCI address of device `device` of pool `pool` in any prepared claim, or nullopt.
  std::optional<std::string> PciAddressOf(const std::string& pool, const std::string& device) const;

  const std::string& path() const { return path_; }

  // The file's text for `claims` (JSON).
  static std::string Serialize(const std::map<std::string, PreparedClaim>& claims);
  // The claims of a file's text; InvalidArgument naming what is wrong (`what` names the file).
  static Result<std::map<std::string, PreparedClaim>> Parse(const std::string& text,
                                                            const std::string& what);

 private:
  Status Save(const std::map<std::string, PreparedClaim>& claims) const;

  std::string path_;
  std::map<std::string, PreparedClaim> claims_;
};

}  // namespace hcashare::dra
