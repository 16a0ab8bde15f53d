#include "dra/prepare.h"

#include <sys/stat.h>

#include <map>
#include <set>
#include <utility>

#include <nlohmann/json.hpp>

#include "common/log.h"
#include "common/strings.h"
#include "dra/cdi_claim.h"
#include "dra/claim_config.h"
#include "json/parse.h"
#include "kube/rest.h"

namespace hcashare::dra {
namespace {

using nlohmann::json;

// The most values a ResourceClaim may parse into.
constexpr size_t kMaxClaimValues = 200'000;

// True when `s` is 1..max characters of [a-z0-9] and `extra`, starting and ending with an
// alphanumeric.
bool IsNameLike(const std::string& s, size_t max, const std::string& extra) {
  if (s.empty() || s.size() > max) return false;
  for (char c : s) {
    const bool alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
    if (!alnum && extra.find(c) == std::string::npos) return false;
  }
  auto alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  return alnum(s.front()) && alnum(s.back());
}

// One allocation result of our driver and pool.
struct OurResult {
  std::string request;
  std::string device;
  std::optional<std::string> share_id;
};

// What Prepare takes of a ResourceClaim.
struct ClaimView {
  std::string label;  // the pod's name for the claim, else the claim's name
  std::vector<OurResult> results;
  nlohmann::json config;  // status.allocation.devices.config (null when absent)
};

// The annotation a generated claim carries: the pod's name for it.
constexpr const char* kPodClaimNameAnnotation = "resource.kubernetes.io/pod-claim-name";

// A string member of `obj`, or "" when absent or not a string.
std::string Str(const json& obj, const char* key) {
  auto it = obj.find(key);
  return it != obj.end() && it->is_string() ? it->get<std::string>() : "";
}

// ResourceClaim `text` parsed within Prepare's bounds, and its metadata.uid ("" for none).
Result<std::pair<json, std::string>> ParseClaim(const std::string& text) {
  if (text.size() > kMaxClaimBytes) {
    return Status::FailedPrecondition("the ResourceClaim is larger than " +
                                      std::to_string(kMaxClaimBytes) + " bytes");
  }
  jsonin::JsonParseOptions popts;
  popts.max_depth = 64;
  popts.max_values = kMaxClaimValues;
  Result<json> doc = jsonin::ParseJson(text, popts);
  if (!doc.ok()) {
    return Status::InvalidArgument("the ResourceClaim is not valid JSON: " +
                                   doc.status().message());
  }
  if (!doc->is_object()) return Status::InvalidArgument("the ResourceClaim is not an object");
  const json meta = doc->value("metadata", json::object());
  std::string uid = meta.is_object() ? Str(meta, "uid") : "";
  return std::make_pair(std::move(*doc), std::move(uid));
}

// The label and the results of our driver and pool in ResourceClaim `text` named by `ref`.
Result<ClaimView> ReadClaim(const std::string& text, const ClaimRef& ref,
                            const PreparerOptions& opts) {
  ASSIGN_OR_RETURN(auto parsed, ParseClaim(text));
  const json& doc = parsed.first;
  const std::string& uid = parsed.second;
  const json meta = doc.value("metadata", json::object());
  if (uid != ref.uid) {
    return Status::FailedPrecondition("claim replaced: the API server's claim has UID \"" + uid +
                                      "\", the kubelet asked for \"" + ref.uid + "\"");
  }
  const json status = doc.value("status", json::object());
  if (!status.is_object() || !status.contains("allocation") || !status["allocation"].is_object()) {
    return Status::FailedPrecondition("the claim is not allocated (no status.allocation)");
  }
  const json& alloc = status["allocation"];
  const json devices = alloc.value("devices", json::object());
  const json results = devices.is_object() ? devices.value("results", json::array()) : json();
  if (!results.is_array()) {
    return Status::InvalidArgument("status.allocation.devices.results is not an array");
  }
  ClaimView view;
  if (devices.is_object()) view.config = devices.value("config", json());
  const json annotations = meta.is_object() ? meta.value("annotations", json::object()) : json();
  view.label = annotations.is_object() ? Str(annotations, kPodClaimNameAnnotation) : "";
  if (!IsNameLike(view.label, 63, "-")) view.label = ref.name;
  std::vector<OurResult>& out = view.results;
  for (size_t i = 0; i < results.size(); ++i) {
    const json& r = results[i];
    if (!r.is_object() || Str(r, "driver") != opts.driver) continue;
    if (Str(r, "pool") != opts.pool) continue;  // another node's pool
    OurResult res{Str(r, "request"), Str(r, "device"), std::nullopt};
    if (res.device.empty()) {
      return Status::InvalidArgument("status.allocation.devices.results[" + std::to_string(i) +
                                     "] has no device");
    }
    if (r.contains("shareID") && r["shareID"].is_string()) res.share_id = Str(r, "shareID");
    out.push_back(std::move(res));
    if (out.size() > kMaxDevicesPerClaim) {
      return Status::FailedPrecondition("the claim allocates more than " +
                                        std::to_string(kMaxDevicesPerClaim) +
                                        " devices of driver " + opts.driver);
    }
  }
  return view;
}

bool FileExists(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0;
}

}  // namespace

Status CheckClaimRef(const ClaimRef& ref) {
  if (ref.uid.empty() || ref.uid.size() > 64 ||
      ref.uid.find_first_not_of(
          "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-") != std::string::npos) {
    return Status::InvalidArgument("claim UID \"" + ref.uid.substr(0, 80) +
                                   "\" is not 1-64 letters, digits and '-'");
  }
  if (!IsNameLike(ref.namespace_name, 63, "-")) {
    return Status::InvalidArgument("claim " + ref.uid + ": namespace \"" +
                                   ref.namespace_name.substr(0, 80) + "\" is not a DNS label");
  }
  if (!IsNameLike(ref.name, 253, "-.")) {
    return Status::InvalidArgument("claim " + ref.uid + ": name \"" + ref.name.substr(0, 80) +
                                   "\" is not a DNS subdomain");
  }
  return Status::Ok();
}

Result<std::string> RestClaimSource::GetClaim(const std::string& ns, const std::string& name) {
  const std::string path =
      "/apis/resource.k8s.io/" + api_version_ + "/namespaces/" + ns + "/resourceclaims/" + name;
  kube::Request req;
  req.verb = kube::Verb::kGet;
  req.path = path;
  req.timeout = timeout_;
  ASSIGN_OR_RETURN(kube::Response resp, client_->Call(req));
  if (resp.body.size() > kMaxClaimBytes) {
    return Status::FailedPrecondition("GET " + path + ": the ResourceClaim is larger than " +
                                      std::to_string(kMaxClaimBytes) + " bytes");
  }
  return std::move(resp.body);
}

Preparer::Preparer(PreparerOptions options, ClaimSource* source, DeviceLookup lookup, Checkpoint cp)
    : opts_(std::move(options)),
      source_(source),
      lookup_(std::move(lookup)),
      checkpoint_(std::move(cp)),
      cdi_files_(opts_.cdi_dir, opts_.owner + "#dra#" + opts_.driver) {}

Result<std::map<std::string, ClaimOutcome>> Preparer::Prepare(
    const std::vector<ClaimRef>& claims, std::chrono::steady_clock::time_point deadline) {
  if (claims.size() > kMaxClaimsPerRequest) {
    return Status::InvalidArgument("NodePrepareResources names " + std::to_string(claims.size()) +
                                   " claims; at most " + std::to_string(kMaxClaimsPerRequest) +
                                   " are accepted");
  }
  std::map<std::string, ClaimOutcome> out;
  for (const auto& ref : claims) {
    Result<std::vector<PreparedDevice>> devices =
        std::chrono::steady_clock::now() < deadline
            ? PrepareOne(ref)
            : Result<std::vector<PreparedDevice>>(Status::Unavailable(
                  "claim " + ref.namespace_name + "/" + ref.name +
                  ": not prepared, the call's deadline has passed (the kubelet retries)"));
    ClaimOutcome& o = out[ref.uid];
    if (devices.ok()) {
      o.devices = std::move(*devices);
    } else {
      o.error = devices.status().message();
      LogWarn(
          "cannot prepare claim",
          {{"claim", ref.namespace_name + "/" + ref.name}, {"uid", ref.uid}, {"error", o.error}});
    }
  }
  return out;
}

std::optional<std::vector<PreparedDevice>> Preparer::Cached(const std::string& uid) const {
  std::lock_guard<std::mutex> lock(mu_);
  const PreparedClaim* c = checkpoint_.Find(uid);
  if (c == nullptr || c->recovered) return std::nullopt;
  // A spec lost since (a reboot empties /var/run/cdi) is prepared again.
  if (!c->cdi_spec_path.empty() && !FileExists(c->cdi_spec_path)) return std::nullopt;
  return c->devices;
}

Result<std::vector<PreparedDevice>> Preparer::PrepareOne(const ClaimRef& ref) {
  RETURN_IF_ERROR(CheckClaimRef(ref));
  if (auto cached = Cached(ref.uid)) return std::move(*cached);
  // An Unprepare of this claim that comes while the API server is read below wins.
  uint64_t unprepares = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    InFlight& f = in_flight_[ref.uid];
    ++f.count;
    unprepares = f.unprepares;
  }
  struct Done {
    Preparer* p;
    const std::string& uid;
    ~Done() {
      std::lock_guard<std::mutex> lock(p->mu_);
      auto it = p->in_flight_.find(uid);
      if (it != p->in_flight_.end() && --it->second.count == 0) p->in_flight_.erase(it);
    }
  } done{this, ref.uid};

  const std::string what = "claim " + ref.namespace_name + "/" + ref.name;
  if (opts_.runtime_refusal) {
    if (const std::string why = opts_.runtime_refusal(); !why.empty()) {
      return Status::FailedPrecondition(what + ": " + why);
    }
  }
  Result<std::string> text = source_->GetClaim(ref.namespace_name, ref.name);
  if (!text.ok()) {
    return Status(text.status().code(),
                  what + ": cannot read the ResourceClaim: " + text.status().message());
  }
  Result<ClaimView> view = ReadClaim(*text, ref, opts_);
  if (!view.ok()) return view.status().WithContext(what);

  PreparedClaim claim;
  claim.uid = ref.uid;
  claim.namespace_name = ref.namespace_name;
  claim.name = ref.name;
  std::vector<ConfigTarget> targets;
  for (const auto& r : view->results) targets.push_back({r.request, r.device});
  Result<std::vector<PodInterfaceConfig>> pod_side =
      ResolvePodInterfaces(view->config, opts_.driver, targets);
  if (!pod_side.ok()) return pod_side.status().WithContext(what);
  CdiClaim spec{ref.uid, view->label, {}};
  std::map<std::string, size_t> in_spec;  // device -> index in spec.devices
  for (size_t i = 0; i < view->results.size(); ++i) {
    const OurResult& r = view->results[i];
    std::optional<PreparableDevice> dev = lookup_(opts_.pool, r.device);
    if (!dev) {
      return Status::FailedPrecondition(what + ": device " + r.device + " of pool " + opts_.pool +
                                        " is not on this node (unknown or unplugged)");
    }
    PreparedDevice pd;
    // The kubelet matches a container's request against these names exactly, and a
    // container names a subrequest's parent ("rails", not "rails/fast").
    if (!r.request.empty()) pd.request_names.push_back(ParentRequest(r.request));
    pd.pool = opts_.pool;
    pd.device = r.device;
    pd.pci_address = dev->pci_address;
    pd.resource = dev->resource_name;
    pd.rdma_devices = dev->rdma_devices;
    pd.cdi_device_ids.push_back(ClaimCdiDeviceId(opts_.driver, ref.uid, r.device));
    pd.share_id = r.share_id;
    pd.interface_name = (*pod_side)[i].name.value_or("");
    pd.mtu = (*pod_side)[i].mtu.value_or(0);
    pd.addresses = (*pod_side)[i].addresses.value_or(std::vector<std::string>{});
    claim.devices.push_back(std::move(pd));
    // A shared device allocated twice (two shares) is one CDI device.
    auto [at, added] = in_spec.emplace(r.device, spec.devices.size());
    if (added) {
      spec.devices.push_back({r.device,
                              dev->resource_name,
                              {},
                              dev->rdma_devices,
                              dev->char_devices,
                              dev->numa_node,
                              dev->set_nccl_ib_hca});
    }
    if (!r.request.empty()) spec.devices[at->second].requests.push_back(r.request);
  }

  std::lock_guard<std::mutex> lock(mu_);
  if (in_flight_[ref.uid].unprepares != unprepares) {
    return Status::FailedPrecondition(what +
                                      ": unprepared while it was being prepared; not prepared");
  }
  const std::string file = ClaimCdiSpecFileName(opts_.driver, ref.uid);
  if (!spec.devices.empty()) {
    RETURN_IF_ERROR(cdi_files_.Write(file, ClaimCdiSpecJson(opts_.driver, spec))
                        .WithContext(what + ": cannot write the CDI spec"));
    claim.cdi_spec_path = opts_.cdi_dir + "/" + file;
  }
  std::vector<PreparedDevice> devices = claim.devices;
  Status st = checkpoint_.Put(std::move(claim));
  if (!st.ok()) {
    cdi_files_.Remove(file);
    return st.WithContext(what);
  }
  seen_[ref.uid] = std::chrono::steady_clock::now();
  LogInfo("prepared claim", {{"claim", ref.namespace_name + "/" + ref.name},
                             {"uid", ref.uid},
                             {"devices", std::to_string(devices.size())}});
  return devices;
}

Result<std::map<std::string, std::string>> Preparer::Unprepare(
    const std::vector<ClaimRef>& claims) {
  if (claims.size() > kMaxClaimsPerRequest) {
    return Status::InvalidArgument("NodeUnprepareResources names " + std::to_string(claims.size()) +
                                   " claims; at most " + std::to_string(kMaxClaimsPerRequest) +
                                   " are accepted");
  }
  std::map<std::string, std::string> out;
  for (const auto& ref : claims) {
    Status st = UnprepareOne(ref);
    out[ref.uid] = st.ok() ? "" : st.message();
    if (!st.ok()) {
      LogWarn("cannot unprepare claim", {{"uid", ref.uid}, {"error", st.message()}});
    }
  }
  return out;
}

Status Preparer::UnprepareOne(const ClaimRef& ref) {
  std::lock_guard<std::mutex> lock(mu_);
  if (auto f = in_flight_.find(ref.uid); f != in_flight_.end()) ++f->second.unprepares;
  const PreparedClaim* c = checkpoint_.Find(ref.uid);
  if (c == nullptr) {
    // Never prepared here, or unprepared already; a spec left by a lost checkpoint goes
    // (only while it is still the file we wrote).
    cdi_files_.Remove(ClaimCdiSpecFileName(opts_.driver, ref.uid));
    return Status::Ok();
  }
  const std::string name = FileNameIn(opts_.cdi_dir, c->cdi_spec_path);
  if (!name.empty()) cdi_files_.Remove(name);  // only while it is still the file we wrote
  RETURN_IF_ERROR(checkpoint_.Erase(ref.uid).WithContext("claim " + ref.uid));
  seen_.erase(ref.uid);
  checked_.erase(ref.uid);
  LogInfo("unprepared claim", {{"claim", ref.namespace_name + "/" + ref.name}, {"uid", ref.uid}});
  return Status::Ok();
}

std::optional<std::string> Preparer::PciAddressOf(const std::string& pool,
                                                  const std::string& device) const {
  std::lock_guard<std::mutex> lock(mu_);
  return checkpoint_.PciAddressOf(pool, device);
}

std::string FileNameIn(const std::string& dir, const std::string& path) {
  if (path.size() <= dir.size() + 1 || path.compare(0, dir.size(), dir) != 0 ||
      path[dir.size()] != '/') {
    return "";
  }
  const std::string name = path.substr(dir.size() + 1);
  return name.find('/') == std::string::npos ? name : "";
}

std::vector<PreparedDevice> Preparer::PreparedDevices() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<PreparedDevice> out;
  for (const auto& [uid, claim] : checkpoint_.claims()) {
    out.insert(out.end(), claim.devices.begin(), claim.devices.end());
  }
  return out;
}

size_t Preparer::PreparedCount() const {
  std::lock_guard<std::mutex> lock(mu_);
  return checkpoint_.claims().size();
}

std::string ClaimUidOf(const std::string& text) {
  Result<std::pair<json, std::string>> parsed = ParseClaim(text);
  return parsed.ok() ? parsed->second : "";
}

std::optional<PreparedClaim> Preparer::Prepared(const std::string& uid) const {
  std::lock_guard<std::mutex> lock(mu_);
  const PreparedClaim* c = checkpoint_.Find(uid);
  return c == nullptr ? std::nullopt : std::optional<PreparedClaim>(*c);
}

}  // namespace hcashare::dra
