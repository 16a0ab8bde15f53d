#include <algorithm>

#include "cni/attach.h"
#include "cni/error.h"
#include "cni/ipam.h"
#include "cni/link_identity.h"
#include "cni/steps.h"
#include "common/netns.h"

namespace hcashare::cni {
namespace {

using json = nlohmann::json;

// A CHECK failure: code 102 with what differs.
Status Drift(const std::string& what) {
  return CniStatus(kErrHostSetupFailed, "attachment check failed", what);
}

// The interface object named `ifname` in a result, or null.
const json* InterfaceNamed(const json& result, const std::string& ifname, int* index) {
  if (!result.is_object() || !result.contains("interfaces")) return nullptr;
  const json& list = result["interfaces"];  // a reference into `result`, not a copy
  for (size_t i = 0; i < list.size(); ++i) {
    if (list[i].value("name", "") == ifname) {
      *index = static_cast<int>(i);
      return &list[i];
    }
  }
  return nullptr;
}

// The first field of `wanted` that `now` does not have, or "".
std::string VfMismatch(const VfSettings& wanted, const VfSettings& now) {
  auto differs = [](const auto& w, const auto& n) { return w && w != n; };
  if (differs(wanted.vlan, now.vlan)) return "vlan";
  if (differs(wanted.qos, now.qos)) return "vlanQoS";
  if (differs(wanted.vlan_proto, now.vlan_proto)) return "vlanProto";
  if (differs(wanted.mac, now.mac)) return "the admin MAC";
  if (differs(wanted.spoofchk, now.spoofchk)) return "spoofchk";
  if (differs(wanted.trust, now.trust)) return "trust";
  if (differs(wanted.link_state, now.link_state)) return "link_state";
  if (differs(wanted.min_tx_rate, now.min_tx_rate)) return "min_tx_rate";
  if (differs(wanted.max_tx_rate, now.max_tx_rate)) return "max_tx_rate";
  if (differs(wanted.node_guid, now.node_guid)) return "node GUID";
  if (differs(wanted.port_guid, now.port_guid)) return "port GUID";
  return "";
}

}  // namespace

Status CmdCheck(const CniEnv& env, const NetConf& conf, const AttachContext& ctx) {
  auto state = ctx.store.Load(env.container_id, env.ifname);
  if (!state.ok()) {
    return CniStatus(kErrUnknownContainer, "no attachment " + env.container_id + "/" + env.ifname);
  }
  auto pod = Netns::Open(env.netns);
  if (!pod.ok()) {
    return CniStatus(kErrUnknownContainer, "cannot open CNI_NETNS", pod.status().message());
  }
  // The interface: name, MAC, MTU as ADD reported them.
  int index = -1;
  const json* recorded = InterfaceNamed(state->result, env.ifname, &index);
  std::string drift;
  if (!state->dpdk) {
    Status st = InNetns(*pod, [&]() -> Status {
      ASSIGN_OR_RETURN(std::vector<hcashare::LinkState> links, ctx.netdev.List());
      const hcashare::LinkState* link = LinkNamed(links, env.ifname);
      if (link == nullptr) {
        drift = "interface " + env.ifname + " is missing from the pod's network namespace";
        return Status::Ok();
      }
      const bool ours = state->child_link || IsAttachedDevice(*link, *state);
      if (!ours) {
        drift = "interface " + env.ifname + " in the pod is not " + state->device + "'s netdev";
        return Status::Ok();
      }
      if (recorded != nullptr && !recorded->value("mac", "").empty() &&
          link->mac != recorded->value("mac", "")) {
        drift = env.ifname + " has MAC " + link->mac + ", ADD set " + recorded->value("mac", "");
        return Status::Ok();
      }
      const uint32_t want_mtu =
          conf.mtu ? static_cast<uint32_t>(*conf.mtu)
                   : (recorded != nullptr ? recorded->value("mtu", link->mtu) : link->mtu);
      if (link->mtu != want_mtu) {
        drift = env.ifname + " has MTU " + std::to_string(link->mtu) + ", expected " +
                std::to_string(want_mtu);
        return Status::Ok();
      }
      // prevResult's addresses of this interface.
      if (!conf.prev_result || index < 0) return Status::Ok();
      auto have = ctx.netdev.ListAddresses(env.ifname);
      if (!have.ok()) return have.status();
      for (const auto& ip : conf.prev_result->value("ips", json::array())) {
        if (ip.value("interface", -1) != index) continue;
        const std::string address = ip.value("address", "");
        if (std::find(have->begin(), have->end(), address) == have->end()) {
          drift = "address " + address + " is not configured on " + env.ifname;
          return Status::Ok();
        }
      }
      return Status::Ok();
    });
    if (!st.ok()) return Summarize(st, "cannot inspect " + env.ifname + " in the pod");
    if (!drift.empty()) return Drift(drift);
  }
  // The PF-side settings still as configured.
  ASSIGN_OR_RETURN(const std::optional<std::string> mac, SelectMac(conf, env.cni_args));
  ASSIGN_OR_RETURN(const std::optional<std::string> guid, SelectGuid(conf, env.cni_args));
  VfSettings wanted;
  for (const auto& g : PfGroups(conf, mac, guid)) wanted.MergeFrom(g.wanted);
  const bool pf_applied = std::any_of(state->steps.begin(), state->steps.end(),
                                      [](const auto& s) { return s.rfind("pf:", 0) == 0; });
  if (pf_applied) {
    auto now = ctx.vf.Get(state->pf_netdev, state->vf_index);
    if (!now.ok()) return Summarize(now.status(), "cannot read the PF-side VF settings");
    if (std::string field = VfMismatch(wanted, *now); !field.empty()) {
      return Drift("the PF-side " + field + " of VF " + std::to_string(state->vf_index) + " on " +
                   state->pf_netdev + " no longer matches the configuration");
    }
  }
  // The RDMA device, inside the pod.
  if (state->Done("rdma")) {
    bool present = false;
    Status st = InNetns(*pod, [&]() -> Status {
      auto devices = ctx.rdma.ListDevices();
      if (!devices.ok()) return devices.status();
      for (const auto& d : *devices) present = present || d.name == state->rdma_device;
      return Status::Ok();
    });
    if (!st.ok()) return Summarize(st, "cannot list the RDMA devices in the pod");
    if (!present) {
      return Drift("RDMA device " + state->rdma_device + " is not in the pod's network namespace");
    }
  }
  if (conf.ipam) RETURN_IF_ERROR(RunIpam(env, "CHECK", conf.raw, conf.ipam_type).status());
  return Status::Ok();
}

}  // namespace hcashare::cni
