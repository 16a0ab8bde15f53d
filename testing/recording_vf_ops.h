// RecordingVfOps: a VfOps double for the CNI tests.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "common/status.h"
#include "nl/sriov.h"

namespace hcashare::fake {

// A test double: keeps settings per (pf, vf), records every call, and can fail a chosen
// Set call.
class RecordingVfOps final : public VfOps {
 public:
  Result<VfSettings> Get(const std::string& pf, int vf) override;
  Status Set(const std::string& pf, int vf, const VfSettings& s) override;

  // Makes VF `vf` of `pf` known, with `initial` settings.
  void AddVf(const std::string& pf, int vf, VfSettings initial);
  // The `n`-th Set call from now (1 = the next) fails with `error` and changes nothing.
  void FailSet(int n, Status error);
  // "get pf/vf", "set pf/vf" per call, in order.
  const std::vector<std::string>& calls() const { return calls_; }
  // The current settings of a known VF.
  const VfSettings& settings(const std::string& pf, int vf) const;

 private:
  std::map<std::pair<std::string, int>, VfSettings> vfs_;
  std::vector<std::string> calls_;
  int fail_countdown_ = 0;
  Status fail_error_;
};

}  // namespace hcashare::fake
