#include "interop/dra_checkpoint.h"

#include <utility>

#include <nlohmann/json.hpp>

#include "common/atomic_file.h"
#include "common/safe_file.h"
#include "json/dump.h"
#include "json/parse.h"

namespace hcashare::dra {
namespace {

using nlohmann::json;

// The most values a checkpoint file may parse into (kMaxCheckpointClaims claims of up to
// 128 devices would be more; such a file is refused rather than parsed).
constexpr size_t kMaxCheckpointValues = 2'000'000;

// Reads what a checkpoint holds, recording the first problem with its JSON path.
class Reader {
 public:
  // `obj` must be an object; `path` names it.
  std::string String(const json& obj, const char* key, const std::string& path,
                     bool required = true) {
    auto it = obj.find(key);
    if (it == obj.end()) {
      if (required) Fail(path + "." + key, "missing");
      return "";
    }
    if (!it->is_string()) {
      Fail(path + "." + key, "not a string");
      return "";
    }
    return it->get<std::string>();
  }
  std::vector<std::string> Strings(const json& obj, const char* key, const std::string& path) {
    std::vector<std::string> out;
    auto it = obj.find(key);
    if (it == obj.end()) return out;
    if (!it->is_array()) {
      Fail(path + "." + key, "not an array");
      return out;
    }
    for (size_t i = 0; i < it->size(); ++i) {
      if (!(*it)[i].is_string()) {
        Fail(path + "." + key + "[" + std::to_string(i) + "]", "not a string");
        return {};
      }
      out.push_back((*it)[i].get<std::string>());
    }
    return out;
  }
  void Fail(const std::string& path, const std::string& message) {
    if (error_.empty()) error_ = path + ": " + message;
  }
  const std::string& error() const { return error_; }

 private:
  std::string error_;
};

PreparedDevice ReadDevice(Reader& r, const json& d, const std::string& path) {
  PreparedDevice dev;
  if (!d.is_object()) {
    r.Fail(path, "not an object");
    return dev;
  }
  dev.request_names = r.Strings(d, "requests", path);
  dev.pool = r.String(d, "pool", path);
  dev.device = r.String(d, "device", path);
  dev.pci_address = r.String(d, "pciAddress", path, false);
  dev.resource = r.String(d, "resource", path, false);
  dev.rdma_devices = r.Strings(d, "rdmaDevices", path);
  dev.cdi_device_ids = r.Strings(d, "cdiDeviceIds", path);
  if (d.contains("shareId")) dev.share_id = r.String(d, "shareId", path);
  dev.interface_name = r.String(d, "interfaceName", path, false);
  dev.addresses = r.Strings(d, "addresses", path);
  if (auto mtu = d.find("mtu"); mtu != d.end()) {
    if (mtu->is_number_integer() && mtu->get<int64_t>() >= 68 && mtu->get<int64_t>() <= 65535) {
      dev.mtu = static_cast<int>(mtu->get<int64_t>());
    } else {
      r.Fail(path + ".mtu", "not an integer from 68 to 65535");
    }
  }
  return dev;
}

PreparedClaim ReadClaim(Reader& r, const std::string& uid, const json& c, const std::string& path) {
  PreparedClaim claim;
  claim.uid = uid;
  if (!c.is_object()) {
    r.Fail(path, "not an object");
    return claim;
  }
  claim.namespace_name = r.String(c, "namespace", path);
  claim.name = r.String(c, "name", path);
  claim.cdi_spec_path = r.String(c, "cdiSpecFile", path, false);
  if (auto rec = c.find("recovered"); rec != c.end()) {
    if (rec->is_boolean()) {
      claim.recovered = rec->get<bool>();
    } else {
      r.Fail(path + ".recovered", "not a boolean");
    }
  }
  auto it = c.find("devices");
  if (it != c.end()) {
    if (!it->is_array()) {
      r.Fail(path + ".devices", "not an array");
      return claim;
    }
    for (size_t i = 0; i < it->size(); ++i) {
      claim.devices.push_back(
          ReadDevice(r, (*it)[i], path + ".devices[" + std::to_string(i) + "]"));
    }
  }
  return claim;
}

json DeviceJson(const PreparedDevice& d) {
  json j = {
      {"requests", d.request_names},     {"pool", d.pool},         {"device", d.device},
      {"pciAddress", d.pci_address},     {"resource", d.resource}, {"rdmaDevices", d.rdma_devices},
      {"cdiDeviceIds", d.cdi_device_ids}};
  if (d.share_id) j["shareId"] = *d.share_id;
  if (!d.interface_name.empty()) j["interfaceName"] = d.interface_name;
  if (d.mtu != 0) j["mtu"] = d.mtu;
  if (!d.addresses.empty()) j["addresses"] = d.addresses;
  return j;
}

}  // namespace

bool PreparedDevice::operator==(const PreparedDevice& o) const {
  return request_names == o.request_names && pool == o.pool && device == o.device &&
         pci_address == o.pci_address && resource == o.resource && rdma_devices == o.rdma_devices &&
         cdi_device_ids == o.cdi_device_ids && share_id == o.share_id &&
         interface_name == o.interface_name && mtu == o.mtu && addresses == o.addresses;
}

bool PreparedClaim::operator==(const PreparedClaim& o) const {
  return uid == o.uid && namespace_name == o.namespace_name && name == o.name &&
         devices == o.devices && cdi_spec_path == o.cdi_spec_path && recovered == o.recovered;
}

std::string CheckpointPath(const std::string& kubelet_root, const std::string& driver) {
  return kubelet_root + "/plugins/" + driver + "/checkpoint.json";
}

Result<Checkpoint> Checkpoint::Load(const std::string& path) {
  Checkpoint cp(path);
  SafeReadOptions opts;
  opts.max_bytes = kMaxCheckpointBytes;
  opts.what = "DRA checkpoint";
  opts.root_owned = true;  // hcashare-cni trusts it for PCI addresses: only root may write it
  Result<std::string> text = ReadFileSafely(path, opts);
  if (!text.ok()) {
    if (text.status().IsNotFound()) return cp;
    return text.status();
  }
  ASSIGN_OR_RETURN(cp.claims_, Parse(*text, path));
  return cp;
}

const PreparedClaim* Checkpoint::Find(const std::string& uid) const {
  auto it = claims_.find(uid);
  return it == claims_.end() ? nullptr : &it->second;
}

Status Checkpoint::Put(PreparedClaim claim) {
  std::vector<PreparedClaim> one;
  one.push_back(std::move(claim));
  return PutAll(std::move(one));
}

Status Checkpoint::PutAll(std::vector<PreparedClaim> claims) {
  std::map<std::string, PreparedClaim> next = claims_;
  for (auto& claim : claims) {
    const std::string uid = claim.uid;
    next[uid] = std::move(claim);
  }
  if (next.size() > kMaxCheckpointClaims) {
    return Status::FailedPrecondition("DRA checkpoint " + path_ + " is full: it holds " +
                                      std::to_string(kMaxCheckpointClaims) +
                                      " prepared claims already");
  }
  RETURN_IF_ERROR(Save(next));
  claims_ = std::move(next);
  return Status::Ok();
}

Status Checkpoint::Erase(const std::string& uid) { return EraseAll({uid}); }

Status Checkpoint::EraseAll(const std::set<std::string>& uids) {
  std::map<std::string, PreparedClaim> next = claims_;
  size_t erased = 0;
  for (const auto& uid : uids) erased += next.erase(uid);
  if (erased == 0) return Status::Ok();
  RETURN_IF_ERROR(Save(next));
  claims_ = std::move(next);
  return Status::Ok();
}

const PreparedDevice* Checkpoint::FindDevice(const std::string& pool,
                                             const std::string& device) const {
  for (const auto& [uid, claim] : claims_) {
    for (const auto& d : claim.devices) {
      if (d.pool == pool && d.device == device) return &d;
    }
  }
  return nullptr;
}

std::optional<std::string> Checkpoint::PciAddressOf(const std::string& pool,
                                                    const std::string& device) const {
  const PreparedDevice* d = FindDevice(pool, device);
  if (d == nullptr || d->pci_address.empty()) return std::nullopt;
  return d->pci_address;
}

Status Checkpoint::Save(const std::map<std::string, PreparedClaim>& claims) const {
  const size_t slash = path_.rfind('/');
  if (slash != std::string::npos && slash > 0) {
    RETURN_IF_ERROR(CreateDirectories(path_.substr(0, slash), 0750)
                        .WithContext("cannot create the DRA checkpoint's directory"));
  }
  // Durably: after a power cut the kubelet asks again only for claims it still holds, and
  // Unprepare works from this file alone.
  const std::string text = Serialize(claims);
  if (text.size() > kMaxCheckpointBytes) {
    return Status::FailedPrecondition("DRA checkpoint " + path_ + " would exceed " +
                                      std::to_string(kMaxCheckpointBytes) + " bytes");
  }
  return WriteFileDurably(path_, text, 0600).WithContext("cannot write the DRA checkpoint");
}

std::string Checkpoint::Serialize(const std::map<std::string, PreparedClaim>& claims) {
  json by_uid = json::object();
  for (const auto& [uid, c] : claims) {
    json devices = json::array();
    for (const auto& d : c.devices) devices.push_back(DeviceJson(d));
    by_uid[uid] = {{"namespace", c.namespace_name},
                   {"name", c.name},
                   {"cdiSpecFile", c.cdi_spec_path},
                   {"devices", std::move(devices)}};
    if (c.recovered) by_uid[uid]["recovered"] = true;
  }
  json doc = {{"version", kCheckpointVersion}, {"claims", std::move(by_uid)}};
  return DumpJson(doc, 1) + "\n";
}

Result<std::map<std::string, PreparedClaim>> Checkpoint::Parse(const std::string& text,
                                                               const std::string& what) {
  auto bad = [&](const std::string& why) {
    return Status::InvalidArgument("DRA checkpoint " + what + " is corrupt: " + why);
  };
  jsonin::JsonParseOptions popts;
  popts.max_depth = 16;
  popts.max_values = kMaxCheckpointValues;
  Result<json> doc = jsonin::ParseJson(text, popts);
  if (!doc.ok()) return bad(doc.status().message());
  if (!doc->is_object()) return bad("not a JSON object");
  auto version = doc->find("version");
  if (version == doc->end() || !version->is_number_integer()) return bad("$.version: missing");
  if (version->get<long long>() != kCheckpointVersion) {
    return bad("$.version: " + version->dump() + ", this build reads version " +
               std::to_string(kCheckpointVersion));
  }
  auto claims = doc->find("claims");
  if (claims == doc->end() || !claims->is_object())
    return bad("$.claims: missing or not an object");
  if (claims->size() > kMaxCheckpointClaims) {
    return bad("$.claims: more than " + std::to_string(kMaxCheckpointClaims) + " claims");
  }
  Reader r;
  std::map<std::string, PreparedClaim> out;
  for (auto it = claims->begin(); it != claims->end(); ++it) {
    if (it.key().empty()) return bad("$.claims: an empty claim UID");
    out[it.key()] = ReadClaim(r, it.key(), it.value(), "$.claims[\"" + it.key() + "\"]");
    if (!r.error().empty()) return bad(r.error());
  }
  return out;
}

}  // namespace hcashare::dra
