// PF-side SR-IOV VF settings (IFLA_VFINFO_LIST / IFLA_VF_*) through rtnetlink, behind a
// small interface, plus a recording double for tests.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/status.h"

namespace hcashare {

// Settings of one VF as the PF reports or applies them. Unset fields are not read or
// changed.
struct VfSettings {
  std::optional<uint32_t> vlan;           // 0 = untagged
  std::optional<uint32_t> qos;            // with vlan
  std::optional<std::string> vlan_proto;  // "802.1q" or "802.1ad", with vlan
  std::optional<std::string> mac;         // admin MAC, "aa:bb:cc:dd:ee:ff"
  std::optional<bool> spoofchk;
  std::optional<bool> trust;
  std::optional<std::string> link_state;  // "auto", "enable" or "disable"
  std::optional<uint32_t> min_tx_rate;    // Mbps; with max_tx_rate
  std::optional<uint32_t> max_tx_rate;

  bool operator==(const VfSettings& o) const;
};

class VfOps {
 public:
  virtual ~VfOps() = default;
  // The current settings of VF `vf` of PF netdev `pf`. NotFound when the PF does not
  // report that VF (no SR-IOV netlink support, or no such VF).
  virtual Result<VfSettings> Get(const std::string& pf, int vf) = 0;
  // Applies the set fields of `s` in one request.
  virtual Status Set(const std::string& pf, int vf, const VfSettings& s) = 0;
};

// The libnl implementation (calling thread's namespace; the PF is in the host's).
std::unique_ptr<VfOps> NewNetlinkVfOps();

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

}  // namespace hcashare
