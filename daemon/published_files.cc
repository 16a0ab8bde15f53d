#include "daemon/published_files.h"

#include "common/log.h"

namespace hcashare::daemon {

PublishedFiles::PublishedFiles(const PublishedDirs& dirs, dp::DpMetrics* metrics)
    : metrics_(metrics),
      cdi_(dirs.use_cdi && !dirs.cdi_spec_dir.empty()
               ? std::make_unique<dp::CdiSpecWriter>(dirs.cdi_spec_dir, dirs.kubelet_root)
               : nullptr),
      pool_info_(dirs.pool_info_dir.empty()
                     ? nullptr
                     : std::make_unique<PoolInfoWriter>(dirs.pool_info_dir, dirs.kubelet_root)),
      cdi_off_dir_(dirs.use_cdi ? "" : dirs.cdi_spec_dir),
      kubelet_root_(dirs.kubelet_root) {
  CountForeign();
}

void PublishedFiles::Reclaim(const std::vector<config::ResourceConfig>& resources) {
  if (cdi_) cdi_->Reclaim(resources);
  // CDI turned off since an earlier run: its specs would otherwise stay forever.
  if (!cdi_off_dir_.empty()) dp::CdiSpecWriter(cdi_off_dir_, kubelet_root_).Reclaim({});
  if (pool_info_) pool_info_->Reclaim(resources);
}

void PublishedFiles::Write(const config::ResourceConfig& rc, node::PoolState* pool) {
  if (cdi_) {
    const Status st = cdi_->Write(rc, *pool);
    // The runtime would resolve our CDI names against another spec, or none.
    if (st.code() == StatusCode::kAlreadyExists) pool->cdi_unavailable = st.message();
    Report("CDI spec", rc, st);
  }
  if (pool_info_) Report("pool description", rc, pool_info_->Write(rc, *pool));
  CountForeign();
}

void PublishedFiles::Remove(const config::ResourceConfig& rc) {
  if (cdi_) cdi_->Remove(rc);
  if (pool_info_) pool_info_->Remove(rc);
  for (const char* what : {"CDI spec", "pool description"}) {
    failing_.erase(std::string(what) + " " + rc.FullName());
  }
  CountForeign();
}

void PublishedFiles::Disown(const config::ResourceConfig& rc) {
  if (cdi_) cdi_->Disown(rc);
  if (pool_info_) pool_info_->Disown(rc);
}

void PublishedFiles::HandOver(const std::vector<config::ResourceConfig>& resources) {
  if (cdi_) cdi_->HandOver(resources);
  if (pool_info_) pool_info_->HandOver(resources);
}

void PublishedFiles::Report(const std::string& what, const config::ResourceConfig& rc,
                            const Status& st) {
  const std::string key = what + " " + rc.FullName();
  auto it = failing_.find(key);
  if (st.ok()) {
    if (it != failing_.end()) {
      LogInfo(what + " written again", {{"resource", rc.FullName()}});
      failing_.erase(it);
    }
    return;
  }
  if (it != failing_.end() && it->second == st.message()) return;  // logged already
  failing_[key] = st.message();
  if (st.code() == StatusCode::kAlreadyExists) {
    LogError(what + " not written: a file this daemon did not write holds its name",
             {{"resource", rc.FullName()}, {"error", st.message()}});
  } else {
    LogError("cannot write the " + what, {{"resource", rc.FullName()}, {"error", st.message()}});
  }
}

void PublishedFiles::CountForeign() {
  if (metrics_ == nullptr) return;
  if (cdi_) metrics_->ForeignFiles(cdi_->files().dir(), cdi_->files().foreign().size());
  if (pool_info_) {
    metrics_->ForeignFiles(pool_info_->files().dir(), pool_info_->files().foreign().size());
  }
}

Result<std::vector<std::string>> PublishedFiles::Uninstall(const PublishedDirs& dirs) {
  dp::CdiSpecWriter cdi(dirs.cdi_spec_dir, dirs.kubelet_root);
  PoolInfoWriter pools(dirs.pool_info_dir, dirs.kubelet_root);
  std::vector<std::string> removed;
  for (OwnedFiles* files : {&cdi.files(), &pools.files()}) {
    if (files->dir().empty()) continue;
    ASSIGN_OR_RETURN(std::vector<std::string> names, files->RemoveEverything());
    for (const auto& n : names) removed.push_back(files->dir() + "/" + n);
  }
  return removed;
}

}  // namespace hcashare::daemon
