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
  // InfiniBand VFs: the node and port GUID ("02:00:00:00:00:00:00:01", nl/vf_guid.h). Get
  // reports them when the kernel does (5.6 and later, with mlx5); Set applies them (mlx5
  // takes a VF's new GUIDs when its driver is next bound).
  std::optional<std::string> node_guid;
  std::optional<std::string> port_guid;

  bool operator==(const VfSettings& o) const;
  // Copies the fields `from` sets into this.
  void MergeFrom(const VfSettings& from);
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

}  // namespace hcashare
