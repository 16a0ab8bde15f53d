#include "testing/recording_vf_ops.h"

namespace hcashare::fake {
Result<VfSettings> RecordingVfOps::Get(const std::string& pf, int vf) {
  calls_.push_back("get " + pf + "/" + std::to_string(vf));
  auto it = vfs_.find({pf, vf});
  if (it == vfs_.end())
    return Status::NotFound("PF " + pf + " reports no VF " + std::to_string(vf));
  return it->second;
}

Status RecordingVfOps::Set(const std::string& pf, int vf, const VfSettings& s) {
  calls_.push_back("set " + pf + "/" + std::to_string(vf));
  if (fail_countdown_ > 0 && --fail_countdown_ == 0) return fail_error_;
  auto it = vfs_.find({pf, vf});
  if (it == vfs_.end())
    return Status::NotFound("PF " + pf + " reports no VF " + std::to_string(vf));
  it->second.MergeFrom(s);
  return Status::Ok();
}

void RecordingVfOps::AddVf(const std::string& pf, int vf, VfSettings initial) {
  vfs_[{pf, vf}] = std::move(initial);
}

void RecordingVfOps::FailSet(int n, Status error) {
  fail_countdown_ = n;
  fail_error_ = std::move(error);
}

const VfSettings& RecordingVfOps::settings(const std::string& pf, int vf) const {
  return vfs_.at({pf, vf});
}

}  // namespace hcashare::fake
