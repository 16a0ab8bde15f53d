#include "testing/recording_vf_ops.h"

namespace hcashare::fake {
namespace {

template <typename T>
void Merge(std::optional<T>* into, const std::optional<T>& from) {
  if (from) *into = from;
}

}  // namespace

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
  VfSettings& cur = it->second;
  Merge(&cur.vlan, s.vlan);
  Merge(&cur.qos, s.qos);
  Merge(&cur.vlan_proto, s.vlan_proto);
  Merge(&cur.mac, s.mac);
  Merge(&cur.spoofchk, s.spoofchk);
  Merge(&cur.trust, s.trust);
  Merge(&cur.link_state, s.link_state);
  Merge(&cur.min_tx_rate, s.min_tx_rate);
  Merge(&cur.max_tx_rate, s.max_tx_rate);
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
