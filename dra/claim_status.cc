#include "dra/claim_status.h"

#include <dirent.h>

#include <algorithm>
#include <set>

#include <nlohmann/json.hpp>
#include <vector>

#include "common/log.h"
#include "dra/prepare.h"
#include "json/dump.h"
#include "kube/rest.h"
#include "kube/status_error.h"

namespace hcashare::dra {
namespace {

using nlohmann::json;

// The names of the "*.json" files in `dir` (none when it does not exist), at most `max`.
std::vector<std::string> JsonFiles(const std::string& dir, size_t max) {
  std::vector<std::string> out;
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return out;
  while (dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    if (name.size() > 5 && name.compare(name.size() - 5, 5, ".json") == 0) out.push_back(name);
    if (out.size() >= max) break;
  }
  ::closedir(d);
  return out;
}

json Entry(const std::string& driver, const DeviceNetworkStatus& s) {
  json net = json::object();
  if (!s.interface_name.empty()) net["interfaceName"] = s.interface_name;
  if (!s.hardware_address.empty()) net["hardwareAddress"] = s.hardware_address;
  if (!s.ips.empty()) net["ips"] = s.ips;
  json e = {{"driver", driver}, {"pool", s.pool}, {"device", s.device}, {"networkData", net}};
  if (s.share_id) e["shareID"] = *s.share_id;
  return e;
}

}  // namespace

ClaimStatusWriter::ClaimStatusWriter(ClaimStatusOptions options, kube::RestClient* client)
    : opts_(std::move(options)), client_(client) {}

ClaimStatusRound ClaimStatusWriter::Sync() {
  // Desired: every file's device under its claim, in file-name order (stable).
  std::map<std::string, Claim> desired;
  std::map<std::string, json> entries;
  std::vector<std::string> files = JsonFiles(opts_.dir, kMaxNetworkStatusFiles);
  std::sort(files.begin(), files.end());
  // Bad files are logged once while they stay (the set keeps only those still there).
  std::set<std::string> bad_now;
  for (const std::string& name : files) {
    const std::string path = opts_.dir + "/" + name;
    Result<DeviceNetworkStatus> s = ReadNetworkStatus(path);
    if (!s.ok()) {
      bad_now.insert(path);
      if (bad_files_.count(path) == 0) {
        LogWarn("skipping a network status file", {{"error", s.status().ToString()}});
      }
      continue;
    }
    // The claim's names go into a request path: checked as Prepare checks the kubelet's.
    if (!CheckClaimRef({s->claim_namespace, s->claim_uid, s->claim_name}).ok()) {
      bad_now.insert(path);
      if (bad_files_.count(path) == 0) {
        LogWarn("skipping a network status file with a bad claim name", {{"file", path}});
      }
      continue;
    }
    Claim& c = desired[s->claim_uid];
    c.ns = s->claim_namespace;
    c.name = s->claim_name;
    json& list = entries[s->claim_uid];
    if (list.is_null()) list = json::array();
    list.push_back(Entry(opts_.driver, *s));
  }
  bad_files_.swap(bad_now);
  for (auto& [uid, list] : entries) desired[uid].devices = DumpJson(list);

  ClaimStatusRound round;
  round.claims = desired.size();
  auto attempt = [&](const std::string& uid, const Claim& c) {
    Status st = Apply(uid, c);
    if (st.ok()) {
      ++round.applied;
      if (c.devices == "[]") {
        written_.erase(uid);
      } else {
        written_[uid] = c;
      }
    } else {
      ++round.failed;
      const int code = kube::HttpCodeOf(st);
      if (kube::IsNotFound(st)) written_.erase(uid);  // the claim is gone, its entries too
      // Gone or refused for its content: not sent again until the files change.
      if (code == 404 || code == 400 || code == 422) rejected_[uid] = c.devices;
    }
  };
  for (auto it = rejected_.begin(); it != rejected_.end();) {
    auto d = desired.find(it->first);
    it = d == desired.end() || d->second.devices != it->second ? rejected_.erase(it) : ++it;
  }
  for (const auto& [uid, c] : desired) {
    if (rejected_.count(uid) != 0) continue;
    auto it = written_.find(uid);
    if (it == written_.end() || it->second.devices != c.devices) attempt(uid, c);
  }
  // Claims whose files are gone: their entries go.
  std::vector<std::pair<std::string, Claim>> gone;
  for (const auto& [uid, c] : written_) {
    if (desired.count(uid) == 0) gone.push_back({uid, {c.ns, c.name, "[]"}});
  }
  for (const auto& [uid, c] : gone) attempt(uid, c);
  return round;
}

Status ClaimStatusWriter::Apply(const std::string& uid, const Claim& c) {
  const std::string version = opts_.api_version();
  const std::string body =
      "{\"apiVersion\":\"resource.k8s.io/" + version +
      "\",\"kind\":\"ResourceClaim\",\"metadata\":{\"name\":" + DumpJson(json(c.name)) +
      ",\"namespace\":" + DumpJson(json(c.ns)) + "},\"status\":{\"devices\":" + c.devices + "}}";
  kube::Request req;
  req.verb = kube::Verb::kPatch;
  req.path = "/apis/resource.k8s.io/" + version + "/namespaces/" + c.ns + "/resourceclaims/" +
             c.name + "/status?fieldManager=" + opts_.driver + "&force=true";
  req.body = body;
  req.content_type = "application/apply-patch+yaml";
  req.timeout = opts_.timeout;
  Result<kube::Response> resp = client_->Call(req);
  if (resp.ok()) {
    applied_total_.fetch_add(1);
    refused_.store(false);
    LogDebug("wrote the claim's device status", {{"claim", c.ns + "/" + c.name}, {"uid", uid}});
    return Status::Ok();
  }
  const int code = kube::HttpCodeOf(resp.status());
  if (code == 403 && !refused_.exchange(true)) {
    LogWarn(
        "the API server refuses the claims' device status (RBAC needs resourceclaims/status "
        "patch; Kubernetes 1.36+ also resourceclaims/driver; or the server lacks "
        "DRAResourceClaimDeviceStatus): pods work, their claims show no network data",
        {{"claim", c.ns + "/" + c.name}, {"error", resp.status().ToString()}});
  } else if (code != 404 && code != 403) {
    LogWarn("cannot write the claim's device status (retried)",
            {{"claim", c.ns + "/" + c.name}, {"error", resp.status().ToString()}});
  }
  return resp.status();
}

}  // namespace hcashare::dra
