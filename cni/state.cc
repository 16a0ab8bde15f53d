#include "cni/state.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <thread>

#include "common/atomic_file.h"
#include "common/lock_file.h"
#include "common/log.h"
#include "common/netns.h"
#include "common/safe_file.h"
#include "json/dump.h"

namespace hcashare::cni {
namespace {

using json = nlohmann::json;

template <typename T>
void PutOptional(json* j, const char* key, const std::optional<T>& v) {
  if (v) (*j)[key] = *v;
}

template <typename T>
std::optional<T> GetOptional(const json& j, const char* key) {
  if (!j.contains(key) || j[key].is_null()) return std::nullopt;
  return j[key].get<T>();
}

}  // namespace

json VfSettingsToJson(const VfSettings& s) {
  json j = json::object();
  PutOptional(&j, "vlan", s.vlan);
  PutOptional(&j, "qos", s.qos);
  PutOptional(&j, "vlanProto", s.vlan_proto);
  PutOptional(&j, "mac", s.mac);
  PutOptional(&j, "spoofchk", s.spoofchk);
  PutOptional(&j, "trust", s.trust);
  PutOptional(&j, "linkState", s.link_state);
  PutOptional(&j, "minTxRate", s.min_tx_rate);
  PutOptional(&j, "maxTxRate", s.max_tx_rate);
  PutOptional(&j, "nodeGuid", s.node_guid);
  PutOptional(&j, "portGuid", s.port_guid);
  return j;
}

VfSettings VfSettingsFromJson(const json& j) {
  VfSettings s;
  s.vlan = GetOptional<uint32_t>(j, "vlan");
  s.qos = GetOptional<uint32_t>(j, "qos");
  s.vlan_proto = GetOptional<std::string>(j, "vlanProto");
  s.mac = GetOptional<std::string>(j, "mac");
  s.spoofchk = GetOptional<bool>(j, "spoofchk");
  s.trust = GetOptional<bool>(j, "trust");
  s.link_state = GetOptional<std::string>(j, "linkState");
  s.min_tx_rate = GetOptional<uint32_t>(j, "minTxRate");
  s.max_tx_rate = GetOptional<uint32_t>(j, "maxTxRate");
  s.node_guid = GetOptional<std::string>(j, "nodeGuid");
  s.port_guid = GetOptional<std::string>(j, "portGuid");
  return s;
}

namespace {

json OwnerToJson(const DeviceOwner& o) {
  json j = {{"containerID", o.container_id}, {"ifname", o.ifname}, {"netns", o.netns},
            {"podUID", o.pod_uid},           {"pod", o.pod_key},   {"resource", o.resource}};
  if (!o.chained_by.empty()) j["chainedBy"] = o.chained_by;
  return j;
}

DeviceOwner OwnerFromJson(const json& j) {
  DeviceOwner o;
  o.container_id = j.value("containerID", "");
  o.ifname = j.value("ifname", "");
  o.netns = j.value("netns", "");
  o.pod_uid = j.value("podUID", "");
  o.pod_key = j.value("pod", "");
  o.resource = j.value("resource", "");
  o.chained_by = j.value("chainedBy", "");
  return o;
}

// The JSON object in the state file `path` below the state dir `dir`: root writes both,
// yet the file is read as any other party's would be (no symlink below `dir`, a regular
// file, bounded).
Result<json> ReadJsonFile(const std::string& dir, const std::string& path) {
  SafeReadOptions read;
  read.max_bytes = kMaxStateFileBytes;
  read.beneath = dir;
  read.what = "state file";
  ASSIGN_OR_RETURN(const std::string text, ReadFileSafely(path, read));
  json j = json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return Status::IoError(path + " is not a JSON object");
  return j;
}

}  // namespace

bool AttachmentState::Done(const std::string& step) const {
  return std::find(steps.begin(), steps.end(), step) != steps.end();
}

bool IsStale(const DeviceOwner& owner) { return owner.netns.empty() || !IsNetnsPath(owner.netns); }

Status StateStore::EnsureDir(const std::string& sub) const {
  return CreateDirectories(dir_ + "/" + sub, kStateDirMode);
}

std::string StateStore::AttachmentPath(const std::string& container_id,
                                       const std::string& ifname) const {
  return dir_ + "/attachments/" + container_id + "-" + ifname + ".json";
}

std::string StateStore::OwnerPath(const std::string& device) const {
  return dir_ + "/owners/" + device + ".json";
}

Result<DeviceLock> StateStore::Lock(const std::string& device,
                                    std::chrono::milliseconds wait) const {
  RETURN_IF_ERROR(EnsureDir("locks"));
  const std::string path = dir_ + "/locks/" + device + ".lock";
  UniqueFd fd(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, kStateFileMode));
  if (!fd.valid()) return ErrnoStatus(errno, "open " + path);
  const auto deadline = std::chrono::steady_clock::now() + wait;
  while (::flock(fd.get(), LOCK_EX | LOCK_NB) != 0) {
    if (errno != EWOULDBLOCK && errno != EINTR) return ErrnoStatus(errno, "flock " + path);
    if (std::chrono::steady_clock::now() >= deadline) {
      return Status::Unavailable("device " + device + " is locked by another CNI invocation");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return DeviceLock(std::move(fd));
}

AddRunning::~AddRunning() {
  // Unlinked while still held: whoever opens the path from now on gets a new, free file.
  if (fd_.valid() && !path_.empty()) ::unlink(path_.c_str());
}

Result<AddRunning> StateStore::MarkAddRunning(const std::string& container_id,
                                              const std::string& ifname) const {
  RETURN_IF_ERROR(EnsureDir("locks"));
  const std::string path = dir_ + "/locks/add-" + container_id + "-" + ifname + ".lock";
  // Re-checks that the path names the inode locked: cni-gc may remove an unheld mark.
  auto fd = TryLockFile(path, kStateFileMode);
  if (fd.status().code() == StatusCode::kUnavailable) {
    return Status::Unavailable("an ADD of " + container_id + "/" + ifname + " is running");
  }
  if (!fd.ok()) return fd.status();
  return AddRunning(std::move(fd).value(), path);
}

std::vector<std::string> StateStore::AddMarkFiles() const {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir_ + "/locks", ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind("add-", 0) == 0 && name.size() > 9 &&
        name.compare(name.size() - 5, 5, ".lock") == 0) {
      out.push_back(e.path().string());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

Result<bool> StateStore::IsAddRunning(const std::string& container_id,
                                      const std::string& ifname) const {
  auto probe = MarkAddRunning(container_id, ifname);
  if (probe.ok()) return false;  // released (and its file removed) on return
  if (probe.status().code() == StatusCode::kUnavailable) return true;
  return probe.status();
}

Status StateStore::Save(const AttachmentState& s) const {
  RETURN_IF_ERROR(EnsureDir("attachments"));
  json j = {{"owner", OwnerToJson(s.owner)},
            {"device", s.device},
            {"isSF", s.is_sf},
            {"dpdk", s.dpdk},
            {"vfDriver", s.vf_driver},
            {"guid", s.guid},
            {"childLink", s.child_link},
            {"rdmaDevice", s.rdma_device},
            {"deviceInfoFile", s.device_info_file},
            {"draStatusFile", s.dra_status_file},
            {"pfNetdev", s.pf_netdev},
            {"vfIndex", s.vf_index},
            {"hostIfname", s.host_ifname},
            {"hostMac", s.host_mac},
            {"hostMtu", s.host_mtu},
            {"hostUp", s.host_up},
            {"hostIfindex", s.host_ifindex},
            {"podMac", s.pod_mac},
            {"podIfindex", s.pod_ifindex},
            {"netnsIno", s.netns_ino},
            {"pfOriginal", VfSettingsToJson(s.pf_original)},
            {"steps", s.steps},
            {"netconf", s.netconf},
            {"result", s.result}};
  return WriteFileAtomically(AttachmentPath(s.owner.container_id, s.owner.ifname), DumpJson(j),
                             kStateFileMode);
}

Result<AttachmentState> StateStore::Load(const std::string& container_id,
                                         const std::string& ifname) const {
  const std::string path = AttachmentPath(container_id, ifname);
  auto read = ReadJsonFile(dir_, path);
  if (read.status().IsNotFound()) {
    return Status::NotFound("no state for " + container_id + "/" + ifname);
  }
  ASSIGN_OR_RETURN(json j, std::move(read));
  try {
    AttachmentState s;
    s.owner = OwnerFromJson(j.at("owner"));
    s.device = j.at("device").get<std::string>();
    s.is_sf = j.value("isSF", false);
    s.dpdk = j.value("dpdk", false);
    s.vf_driver = j.value("vfDriver", "");
    s.guid = j.value("guid", "");
    s.child_link = j.value("childLink", false);
    s.rdma_device = j.value("rdmaDevice", "");
    s.device_info_file = j.value("deviceInfoFile", "");
    s.dra_status_file = j.value("draStatusFile", "");
    s.pf_netdev = j.value("pfNetdev", "");
    s.vf_index = j.value("vfIndex", -1);
    s.host_ifname = j.value("hostIfname", "");
    s.host_mac = j.value("hostMac", "");
    s.host_mtu = j.value("hostMtu", 0u);
    s.host_up = j.value("hostUp", false);
    s.host_ifindex = j.value("hostIfindex", 0);
    s.pod_mac = j.value("podMac", "");
    s.pod_ifindex = j.value("podIfindex", 0);
    s.netns_ino = j.value("netnsIno", uint64_t{0});
    s.pf_original = VfSettingsFromJson(j.value("pfOriginal", json::object()));
    s.steps = j.value("steps", std::vector<std::string>{});
    s.netconf = j.value("netconf", json());
    s.result = j.value("result", json());
    if (s.pod_mac.empty() && s.result.is_object()) {
      // Written before podMac was recorded: the MAC ADD reported for the interface.
      for (const auto& i : s.result.value("interfaces", json::array())) {
        if (i.is_object() && i.value("name", "") == s.owner.ifname) s.pod_mac = i.value("mac", "");
      }
    }
    return s;
  } catch (const json::exception& e) {
    return Status::IoError(path + ": " + e.what());
  }
}

Status StateStore::Remove(const std::string& container_id, const std::string& ifname) const {
  const std::string path = AttachmentPath(container_id, ifname);
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) return ErrnoStatus(errno, "unlink " + path);
  return Status::Ok();
}

std::vector<AttachmentState> StateStore::List() const {
  std::vector<AttachmentState> out;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir_ + "/attachments", ec)) {
    const std::string name = e.path().filename().string();
    if (name.size() < 6 || name.compare(name.size() - 5, 5, ".json") != 0 || name[0] == '.') {
      continue;
    }
    auto j = ReadJsonFile(dir_, e.path().string());
    if (!j.ok() || !j->contains("owner")) {
      LogWarn("skipping unreadable CNI state file", {{"file", e.path().string()}});
      continue;
    }
    const DeviceOwner owner = OwnerFromJson((*j)["owner"]);
    auto s = Load(owner.container_id, owner.ifname);
    if (s.ok()) out.push_back(std::move(s).value());
  }
  return out;
}

std::optional<DeviceOwner> StateStore::OwnerOf(const std::string& device) const {
  auto j = ReadJsonFile(dir_, OwnerPath(device));
  if (!j.ok()) return std::nullopt;
  return OwnerFromJson(*j);
}

Status StateStore::SetOwner(const std::string& device, const DeviceOwner& owner) const {
  RETURN_IF_ERROR(EnsureDir("owners"));
  return WriteFileAtomically(OwnerPath(device), DumpJson(OwnerToJson(owner)), kStateFileMode);
}

Status StateStore::ReleaseOwner(const std::string& device, const std::string& container_id,
                                const std::string& ifname) const {
  auto owner = OwnerOf(device);
  if (!owner || owner->container_id != container_id || owner->ifname != ifname) {
    return Status::Ok();
  }
  const std::string path = OwnerPath(device);
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) return ErrnoStatus(errno, "unlink " + path);
  return Status::Ok();
}

}  // namespace hcashare::cni
