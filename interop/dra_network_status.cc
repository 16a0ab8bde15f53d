#include "interop/dra_network_status.h"

#include <sys/stat.h>

#include <nlohmann/json.hpp>

#include "common/atomic_file.h"
#include "common/safe_file.h"
#include "json/dump.h"
#include "json/parse.h"

namespace hcashare::dra {
namespace {

using nlohmann::json;

// True for a name that stays one path component: not empty, no '/', not "." or "..".
bool IsComponent(const std::string& s) {
  return !s.empty() && s.size() <= 253 && s.find('/') == std::string::npos && s != "." && s != "..";
}

}  // namespace

bool DeviceNetworkStatus::operator==(const DeviceNetworkStatus& o) const {
  return claim_uid == o.claim_uid && claim_namespace == o.claim_namespace &&
         claim_name == o.claim_name && pool == o.pool && device == o.device &&
         share_id == o.share_id && interface_name == o.interface_name &&
         hardware_address == o.hardware_address && ips == o.ips;
}

std::string NetworkStatusDir(const std::string& kubelet_root, const std::string& driver) {
  return kubelet_root + "/plugins/" + driver + "/network";
}

std::string NetworkStatusPath(const std::string& dir, const std::string& claim_uid,
                              const std::string& device) {
  return dir + "/" + claim_uid + "_" + device + ".json";
}

Status WriteNetworkStatus(const std::string& path, const DeviceNetworkStatus& s) {
  if (!IsComponent(s.claim_uid) || !IsComponent(s.device)) {
    return Status::InvalidArgument("network status: claim UID and device must be file names");
  }
  if (s.ips.size() > kMaxNetworkIps) {
    return Status::InvalidArgument("network status: more than " + std::to_string(kMaxNetworkIps) +
                                   " addresses");
  }
  const std::string dir = path.substr(0, path.rfind('/'));
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    return ErrnoStatus(errno, "mkdir " + dir);
  }
  json j = {{"claimUID", s.claim_uid},
            {"namespace", s.claim_namespace},
            {"name", s.claim_name},
            {"pool", s.pool},
            {"device", s.device},
            {"interfaceName", s.interface_name},
            {"hardwareAddress", s.hardware_address},
            {"ips", s.ips}};
  if (s.share_id) j["shareID"] = *s.share_id;
  return WriteFileAtomically(path, DumpJson(j) + "\n", 0600);
}

Result<DeviceNetworkStatus> ReadNetworkStatus(const std::string& path) {
  SafeReadOptions opts;
  opts.max_bytes = kMaxNetworkStatusBytes;
  opts.what = "DRA network status";
  opts.root_owned = true;
  ASSIGN_OR_RETURN(std::string text, ReadFileSafely(path, opts));
  jsonin::JsonParseOptions popts;
  popts.max_depth = 8;
  popts.max_values = 1000;
  Result<json> doc = jsonin::ParseJson(text, popts);
  auto bad = [&](const std::string& why) {
    return Status::InvalidArgument("DRA network status " + path + ": " + why);
  };
  if (!doc.ok()) return bad(doc.status().message());
  if (!doc->is_object()) return bad("not an object");
  DeviceNetworkStatus s;
  for (auto [key, out] :
       {std::pair{"claimUID", &s.claim_uid}, std::pair{"namespace", &s.claim_namespace},
        std::pair{"name", &s.claim_name}, std::pair{"pool", &s.pool},
        std::pair{"device", &s.device}, std::pair{"interfaceName", &s.interface_name},
        std::pair{"hardwareAddress", &s.hardware_address}}) {
    auto it = doc->find(key);
    if (it == doc->end() || !it->is_string()) return bad(std::string(key) + ": not a string");
    *out = it->get<std::string>();
  }
  if (auto it = doc->find("shareID"); it != doc->end()) {
    if (!it->is_string()) return bad("shareID: not a string");
    s.share_id = it->get<std::string>();
  }
  auto ips = doc->find("ips");
  if (ips == doc->end() || !ips->is_array() || ips->size() > kMaxNetworkIps) {
    return bad("ips: not a list of at most " + std::to_string(kMaxNetworkIps) + " strings");
  }
  for (const auto& ip : *ips) {
    if (!ip.is_string()) return bad("ips: not a list of strings");
    s.ips.push_back(ip.get<std::string>());
  }
  if (s.claim_uid.empty() || s.device.empty() || s.pool.empty()) {
    return bad("claimUID, pool and device are required");
  }
  return s;
}

}  // namespace hcashare::dra
