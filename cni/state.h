// The CNI plugin's state directory: one file per attachment (what it changed, saved before
// the first change), one owner marker per device, and per-device locks.
//
// Layout under the state dir:
//   attachments/<containerID>-<ifname>.json   AttachmentState
//   owners/<device>.json                      DeviceOwner (which attachment holds it)
//   locks/<device>.lock                       flock target
//   locks/add-<containerID>-<ifname>.lock     AddRunning's flock target
// Every write is atomic (temporary file, then rename). The ADD marks' lock files are
// removed by their holder, or, once a killed ADD left one, by `hcashare cni-gc`
// (cni/recover.h RemoveStaleAddMarks); both follow common/lock_file.h. The per-device lock files
// are never removed: one per device, reused by every ADD and DEL of it, they cannot pile up.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/status.h"
#include "common/unique_fd.h"
#include "nl/sriov.h"

namespace hcashare::cni {

// Which attachment holds a device.
struct DeviceOwner {
  std::string container_id;
  std::string ifname;
  std::string netns;  // the pod's netns path; a marker whose netns is gone is stale
  std::string pod_uid;
  std::string pod_key;  // "namespace/name" ("" outside Kubernetes)
  std::string resource;
  // Set when the DRA step of a chained invocation ("mode": "dra") made the attachment: that
  // invocation's CNI_IFNAME (the runtime knows the attachment by it, not by `ifname`).
  std::string chained_by{};
};

// Everything needed to undo an attachment. Saved before the first change and updated as
// steps complete.
struct AttachmentState {
  DeviceOwner owner;
  std::string device;  // PCI address or auxiliary name
  bool is_sf = false;
  std::string pf_netdev;  // for PF-side settings
  int vf_index = -1;
  bool dpdk = false;  // bound to a userspace driver: no netdev was moved
  // The PCI driver the VF was bound to when ADD resolved it ("" in state files written
  // before it was recorded): what a VF found unbound is bound to again.
  std::string vf_driver;
  std::string guid;         // the node and port GUID ADD gives the VF ("" for none), lower-case
  bool child_link = false;  // a macvlan/IPoIB child of `device` (a netdev) was created
  std::string rdma_device;  // the RDMA device moved into the pod ("" for none)
  std::string device_info_file;    // the Multus device-info file ADD wrote ("" for none)
  std::string dra_status_file;     // the DRA step's network status file ("" for none)
  std::string host_ifname;         // the netdev's name in the host namespace before ADD
  std::string host_mac;            // its MAC before ADD
  uint32_t host_mtu = 0;           // its MTU before ADD
  bool host_up = false;            // whether it was administratively up before ADD
  int host_ifindex = 0;            // its ifindex in the host before ADD (0: not recorded)
  std::string pod_mac;             // the MAC it carries in the pod
  int pod_ifindex = 0;             // its ifindex in the pod (0 until the move is confirmed)
  uint64_t netns_ino = 0;          // the pod namespace's nsfs inode (0: not recorded)
  VfSettings pf_original;          // PF-side values before ADD, only the fields ADD changes
  std::vector<std::string> steps;  // completed steps, in order ("pf:vlan", "netdev", "ipam")
  nlohmann::json netconf;          // the network configuration of ADD (for IPAM DEL)
  nlohmann::json result;           // the ADD result, when ADD completed

  bool Done(const std::string& step) const;
};

// An exclusive lock on one device, held while alive. The lock file stays (an unheld lock
// file means nothing: flock is released when its holder exits, however it exits).
class DeviceLock {
 public:
  DeviceLock() = default;
  explicit DeviceLock(UniqueFd fd) : fd_(std::move(fd)) {}

 private:
  UniqueFd fd_;
};

// Marks one ADD as running while alive: an flock on locks/add-<container>-<ifname>.lock,
// whose file is removed when the ADD returns. `hcashare cni-gc` tells a crashed ADD (its
// state has no result, and nobody holds this lock) from one still running.
class AddRunning {
 public:
  AddRunning() = default;
  AddRunning(UniqueFd fd, std::string path) : fd_(std::move(fd)), path_(std::move(path)) {}
  AddRunning(AddRunning&& o) noexcept = default;
  AddRunning& operator=(AddRunning&& o) = delete;
  ~AddRunning();

 private:
  UniqueFd fd_;
  std::string path_;
};

// Modes of what the store creates: its records say which devices pods hold and how to
// restore them, for root's eyes only.
inline constexpr mode_t kStateDirMode = 0700;
inline constexpr mode_t kStateFileMode = 0600;
// The largest state file the store reads (an attachment's holds its network configuration,
// at most 1 MiB as stdin, and ADD's result).
inline constexpr size_t kMaxStateFileBytes = 16 << 20;

class StateStore {
 public:
  explicit StateStore(std::string dir) : dir_(std::move(dir)) {}

  // Takes the lock of `device`, waiting up to `wait`. Unavailable when another process
  // holds it that long.
  Result<DeviceLock> Lock(const std::string& device, std::chrono::milliseconds wait) const;

  // Marks the ADD of (container_id, ifname) as running (see AddRunning); Unavailable when
  // another process's ADD of it is.
  Result<AddRunning> MarkAddRunning(const std::string& container_id,
                                    const std::string& ifname) const;
  // True while an ADD of (container_id, ifname) holds its AddRunning.
  Result<bool> IsAddRunning(const std::string& container_id, const std::string& ifname) const;
  // The lock files of ADD marks present now (held or not), as paths.
  std::vector<std::string> AddMarkFiles() const;

  Status Save(const AttachmentState& state) const;
  // NotFound when there is no state for (container_id, ifname).
  Result<AttachmentState> Load(const std::string& container_id, const std::string& ifname) const;
  // Removes the state file (absent is fine).
  Status Remove(const std::string& container_id, const std::string& ifname) const;
  // Every attachment state that can be read (unreadable files are logged and skipped).
  std::vector<AttachmentState> List() const;

  // The owner marker of `device`, if any (stale or not).
  std::optional<DeviceOwner> OwnerOf(const std::string& device) const;
  Status SetOwner(const std::string& device, const DeviceOwner& owner) const;
  // Removes the marker when it names (container_id, ifname); any other owner is left.
  Status ReleaseOwner(const std::string& device, const std::string& container_id,
                      const std::string& ifname) const;

  const std::string& dir() const { return dir_; }

 private:
  std::string AttachmentPath(const std::string& container_id, const std::string& ifname) const;
  std::string OwnerPath(const std::string& device) const;
  Status EnsureDir(const std::string& sub) const;

  std::string dir_;
};

// The set fields of `s` as a JSON object ("vlan", "qos", "vlanProto", "mac", "spoofchk",
// "trust", "linkState", "minTxRate", "maxTxRate"), and back.
nlohmann::json VfSettingsToJson(const VfSettings& s);
VfSettings VfSettingsFromJson(const nlohmann::json& j);

// True when `owner`'s netns path no longer names a network namespace (the pod is gone).
bool IsStale(const DeviceOwner& owner);

}  // namespace hcashare::cni
