#include "cni/guid_unique.h"

#include "cni/error.h"
#include "cni/steps.h"
#include "common/strings.h"
#include "hostfacts/reader.h"

namespace hcashare::cni {
namespace {

bool Carries(const VfSettings& s, const std::string& guid) {
  return (s.node_guid && ToLowerAscii(*s.node_guid) == guid) ||
         (s.port_guid && ToLowerAscii(*s.port_guid) == guid);
}

Status Taken(const std::string& guid, const std::string& holder) {
  return CniStatus(kErrInvalidNetConf, "GUID " + guid + " is already in use on this node",
                   holder +
                       "; nothing was changed. Two VFs with one GUID break InfiniBand addressing: "
                       "give each pod its own (runtimeConfig.infinibandGUID or CNI_ARGS guid)");
}

}  // namespace

Result<DeviceLock> LockGuid(const std::string& guid, const AttachContext& ctx) {
  return ctx.store.Lock(ReplaceAny("guid-" + guid, ":", '-'), ctx.lock_wait);
}

Status CheckGuidUnique(const std::string& guid, const VfDevice& vf, const CniEnv& env,
                       const AttachContext& ctx) {
  // Given by another attachment (recorded before its first change, so also one whose ADD
  // is under way or was killed).
  for (const AttachmentState& s : ctx.store.List()) {
    if (s.guid != guid) continue;
    if (s.owner.container_id == env.container_id && s.owner.ifname == env.ifname) continue;
    return Taken(guid, "attachment " + s.owner.container_id + "/" + s.owner.ifname +
                           (s.owner.pod_key.empty() ? "" : " (pod " + s.owner.pod_key + ")") +
                           " gave it to VF " + s.device);
  }
  // Set on any VF of any InfiniBand PF (by the administrator, or by another tool).
  const hostfacts::HostSnapshot snap = hostfacts::ReadHostSnapshot(ctx.host);
  for (const hostfacts::PciFunction& pf : snap.pci) {
    if (pf.virtfns.empty() || pf.netdevs.empty()) continue;
    const hostfacts::Netdev* nd = snap.FindNetdev(pf.netdevs.front());
    if (nd == nullptr || nd->arp_type != "32") continue;
    for (const auto& [index, address] : pf.virtfns) {
      if (address == vf.id) continue;
      auto settings = ctx.vf.Get(nd->name, index);
      if (!settings.ok()) continue;  // a PF that does not report the VF: nothing to compare
      if (Carries(*settings, guid)) {
        return Taken(guid, "VF " + address + " (VF " + std::to_string(index) + " of PF " +
                               nd->name + ") carries it");
      }
    }
  }
  return Status::Ok();
}

}  // namespace hcashare::cni
