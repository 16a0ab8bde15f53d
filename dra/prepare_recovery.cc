// The Preparer's state over time: its lock, loading (and rebuilding) the checkpoint at
// start, and collecting entries no pod holds.
#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <utility>

#include "common/atomic_file.h"
#include "common/lock_file.h"
#include "common/log.h"
#include "dra/cdi_claim.h"
#include "dra/prepare.h"

namespace hcashare::dra {
namespace {

// The entries of directory `dir` whose names start with `prefix`, sorted.
std::vector<std::string> NamesWithPrefix(const std::string& dir, const std::string& prefix) {
  std::vector<std::string> out;
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return out;
  while (const dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    if (name.compare(0, prefix.size(), prefix) == 0) out.push_back(name);
  }
  ::closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

// The directory ("." for none) and the file name of `path`.
std::pair<std::string, std::string> SplitPath(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return {".", path};
  return {slash == 0 ? "/" : path.substr(0, slash), path.substr(slash + 1)};
}

// Moves the unusable checkpoint at `path` to "<path>.unusable-<unix time>" and removes all
// but the newest kMaxKeptAsideCheckpoints such files. The new name.
Result<std::string> KeepAside(const std::string& path) {
  // Zero-padded, so that names sort by time; nanoseconds keep two in one second apart.
  timespec now{};
  ::clock_gettime(CLOCK_REALTIME, &now);
  char stamp[48];
  std::snprintf(stamp, sizeof stamp, "%012lld.%09ld", static_cast<long long>(now.tv_sec),
                static_cast<long>(now.tv_nsec));
  const std::string aside = path + ".unusable-" + stamp;
  if (::rename(path.c_str(), aside.c_str()) != 0) {
    return ErrnoStatus(errno, "cannot move the unusable DRA checkpoint " + path + " aside");
  }
  const auto [dir, base] = SplitPath(path);
  std::vector<std::string> kept = NamesWithPrefix(dir, base + ".unusable-");
  while (kept.size() > kMaxKeptAsideCheckpoints) {
    ::unlink((dir + "/" + kept.front()).c_str());
    kept.erase(kept.begin());
  }
  return aside;
}

// The claim UID in CDI ID `id` of device `device`: "<driver>/claim=<uid>-<device>".
std::string UidOf(const std::string& driver, const std::string& id, const std::string& device) {
  const std::string kind = ClaimCdiKind(driver) + "=";
  const std::string tail = "-" + device;
  if (id.size() <= kind.size() + tail.size() || id.compare(0, kind.size(), kind) != 0 ||
      id.compare(id.size() - tail.size(), tail.size(), tail) != 0) {
    return "";
  }
  return id.substr(kind.size(), id.size() - kind.size() - tail.size());
}

}  // namespace

Result<std::unique_ptr<Preparer>> Preparer::Create(PreparerOptions options, ClaimSource* source,
                                                   DeviceLookup lookup) {
  if (options.driver.empty() || options.pool.empty() || options.cdi_dir.empty() ||
      options.checkpoint_path.empty()) {
    return Status::InvalidArgument(
        "DRA preparer: driver, pool, CDI dir and checkpoint path are required");
  }
  const std::string& path = options.checkpoint_path;
  const auto [dir, base] = SplitPath(path);
  RETURN_IF_ERROR(
      CreateDirectories(dir, 0750).WithContext("cannot create the DRA checkpoint's directory"));
  Result<UniqueFd> lock = TryLockFile(path + ".lock", 0600);
  if (!lock.ok()) {
    if (lock.status().code() == StatusCode::kUnavailable) {
      return Status::Unavailable("another instance holds " + path +
                                 ".lock (a rollout's predecessor still running?); the DRA "
                                 "driver starts once it exits");
    }
    return lock.status();
  }
  // A write killed midway leaves its temporary file; with the lock held, none is live.
  for (const auto& name : NamesWithPrefix(dir, "." + base + ".tmp.")) {
    ::unlink((dir + "/" + name).c_str());
  }
  Result<Checkpoint> loaded = Checkpoint::Load(path);
  std::string aside;
  if (!loaded.ok()) {
    ASSIGN_OR_RETURN(aside, KeepAside(path));
    LogError(
        "the DRA checkpoint cannot be used; it is kept aside and rebuilt from the claims "
        "the kubelet reports held",
        {{"file", path}, {"kept_as", aside}, {"error", loaded.status().message()}});
    loaded = Checkpoint(path);
  }
  std::unique_ptr<Preparer> p(
      new Preparer(std::move(options), source, std::move(lookup), std::move(*loaded)));
  p->lock_ = std::move(*lock);
  p->kept_aside_ = aside;
  std::set<std::string> keep;
  if (!aside.empty()) {
    p->Rebuild();
    keep = p->OurSpecFiles();
  }
  const auto now = std::chrono::steady_clock::now();
  for (const auto& [uid, claim] : p->checkpoint_.claims()) {
    p->seen_[uid] = now;
    const std::string name = FileNameIn(p->opts_.cdi_dir, claim.cdi_spec_path);
    if (!name.empty()) keep.insert(name);
  }
  for (const auto& removed : p->cdi_files_.Reclaim(keep)) {
    LogInfo("removed the CDI spec of a claim no longer prepared",
            {{"file", p->opts_.cdi_dir + "/" + removed}});
  }
  return p;
}

std::set<std::string> Preparer::OurSpecFiles() const {
  const std::string prefix = ClaimCdiSpecFileName(opts_.driver, "");  // "...-.json"
  const std::string stem = prefix.substr(0, prefix.size() - 5);
  std::set<std::string> out;
  for (const auto& name : NamesWithPrefix(opts_.cdi_dir, stem)) {
    if (name.size() > 5 && name.compare(name.size() - 5, 5, ".json") == 0) out.insert(name);
  }
  return out;
}

void Preparer::Rebuild() {
  if (!opts_.kubelet_claims) return;
  Result<std::vector<KubeletClaim>> held = opts_.kubelet_claims();
  if (!held.ok()) {
    LogWarn(
        "cannot ask the kubelet which claims its pods hold: the DRA checkpoint starts "
        "empty, every CDI spec is kept, and claims are prepared again as the kubelet asks",
        {{"error", held.status().message()}});
    return;
  }
  std::map<std::string, PreparedClaim> rebuilt;
  for (const KubeletClaim& k : *held) {
    for (const KubeletClaimDevice& d : k.devices) {
      if (d.driver != opts_.driver || d.pool != opts_.pool) continue;
      std::string uid;
      for (const auto& id : d.cdi_device_ids) {
        if (uid.empty()) uid = UidOf(opts_.driver, id, d.device);
      }
      if (uid.empty() || !CheckClaimRef({k.namespace_name, uid, k.name}).ok()) continue;
      PreparedClaim& c = rebuilt[uid];
      c.uid = uid;
      c.namespace_name = k.namespace_name;
      c.name = k.name;
      c.recovered = true;
      const std::string spec = opts_.cdi_dir + "/" + ClaimCdiSpecFileName(opts_.driver, uid);
      struct stat st {};
      if (::lstat(spec.c_str(), &st) == 0) c.cdi_spec_path = spec;
      PreparedDevice pd;
      pd.pool = d.pool;
      pd.device = d.device;
      pd.cdi_device_ids = d.cdi_device_ids;
      if (std::optional<PreparableDevice> dev = lookup_(d.pool, d.device)) {
        pd.pci_address = dev->pci_address;
        pd.resource = dev->resource_name;
        pd.rdma_devices = dev->rdma_devices;
      }
      c.devices.push_back(std::move(pd));
    }
  }
  std::vector<PreparedClaim> claims;
  for (auto& [uid, claim] : rebuilt) {
    for (const auto& d : claim.devices) {
      if (d.pci_address.empty()) incomplete_ = true;
    }
    claims.push_back(std::move(claim));
  }
  Status st = checkpoint_.PutAll(std::move(claims));
  if (!st.ok()) {
    LogWarn("cannot checkpoint the recovered claims", {{"error", st.message()}});
    return;
  }
  LogInfo("DRA checkpoint rebuilt from the kubelet", {{"claims", std::to_string(rebuilt.size())}});
}

void Preparer::CompleteRecovered() {
  if (!incomplete_.load()) return;
  std::vector<PreparedClaim> todo;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [uid, c] : checkpoint_.claims()) {
      if (c.recovered) todo.push_back(c);
    }
  }
  std::vector<PreparedClaim> done;
  bool missing = false;
  for (PreparedClaim& c : todo) {
    bool changed = false;
    for (PreparedDevice& d : c.devices) {
      if (!d.pci_address.empty()) continue;
      std::optional<PreparableDevice> dev = lookup_(d.pool, d.device);
      if (!dev) {
        missing = true;
        continue;
      }
      d.pci_address = dev->pci_address;
      d.resource = dev->resource_name;
      d.rdma_devices = dev->rdma_devices;
      changed = true;
    }
    if (changed) done.push_back(std::move(c));
  }
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<PreparedClaim> put;
  for (PreparedClaim& c : done) {
    const PreparedClaim* now = checkpoint_.Find(c.uid);
    if (now != nullptr && now->recovered) put.push_back(std::move(c));  // not prepared since
  }
  Status st = checkpoint_.PutAll(std::move(put));
  if (!st.ok()) {
    LogWarn("cannot complete the recovered DRA claims", {{"error", st.message()}});
    return;
  }
  // A device still unknown is looked for again with the next view.
  incomplete_ = missing;
}

CollectReport Preparer::Collect(ClaimSource* source, size_t max_checks,
                                std::chrono::seconds grace) {
  CollectReport report;
  if (!opts_.kubelet_claims) return report;
  Result<std::vector<KubeletClaim>> held = opts_.kubelet_claims();
  if (!held.ok()) {
    LogDebug("DRA collection skipped: the kubelet cannot be asked",
             {{"error", held.status().message()}});
    return report;
  }
  std::set<std::pair<std::string, std::string>> in_use;
  for (const KubeletClaim& k : *held) in_use.insert({k.namespace_name, k.name});
  // The candidates, least recently checked first.
  std::vector<std::pair<std::chrono::steady_clock::time_point, ClaimRef>> candidates;
  const auto now = std::chrono::steady_clock::now();
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [uid, c] : checkpoint_.claims()) {
      if (in_use.count({c.namespace_name, c.name}) != 0) continue;
      auto seen = seen_.find(uid);
      if (seen != seen_.end() && now - seen->second < grace) continue;
      if (in_flight_.count(uid) != 0) continue;
      auto checked = checked_.find(uid);
      candidates.push_back(
          {checked == checked_.end() ? std::chrono::steady_clock::time_point() : checked->second,
           ClaimRef{c.namespace_name, uid, c.name}});
    }
  }
  std::stable_sort(candidates.begin(), candidates.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  if (candidates.size() > max_checks) candidates.resize(max_checks);
  std::vector<ClaimRef> gone;
  for (const auto& [when, ref] : candidates) {
    ++report.checked;
    Result<std::string> text = source->GetClaim(ref.namespace_name, ref.name);
    if (!text.ok() && !text.status().IsNotFound()) {
      LogDebug("DRA collection stopped: the API server cannot be asked",
               {{"error", text.status().message()}});
      break;
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      checked_[ref.uid] = std::chrono::steady_clock::now();
    }
    // Gone, or replaced by a claim of the same name.
    if (!text.ok() || ClaimUidOf(*text) != ref.uid) gone.push_back(ref);
  }
  if (!gone.empty()) {
    std::lock_guard<std::mutex> lock(mu_);
    std::set<std::string> erase;
    for (const ClaimRef& ref : gone) {
      const PreparedClaim* c = checkpoint_.Find(ref.uid);
      if (c == nullptr || in_flight_.count(ref.uid) != 0) continue;
      const std::string name = FileNameIn(opts_.cdi_dir, c->cdi_spec_path);
      if (!name.empty()) cdi_files_.Remove(name);  // only while it is still the file we wrote
      erase.insert(ref.uid);
      LogDebug("collecting a DRA claim no pod holds",
               {{"claim", ref.namespace_name + "/" + ref.name}, {"uid", ref.uid}});
    }
    Status st = checkpoint_.EraseAll(erase);
    if (st.ok()) {
      for (const auto& uid : erase) {
        seen_.erase(uid);
        checked_.erase(uid);
      }
      report.collected = erase.size();
      LogInfo("collected DRA claims no pod holds and the API server no longer has",
              {{"claims", std::to_string(erase.size())}});
    } else {
      LogWarn("cannot collect DRA claims", {{"error", st.message()}});
    }
  }
  report.remaining = PreparedCount();
  return report;
}

}  // namespace hcashare::dra
