#include "cni/steps.h"

#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <thread>

#include "cni/error.h"
#include "cni/fault_points.h"
#include "cni/ipam.h"
#include "cni/link_identity.h"
#include "common/log.h"
#include "common/strings.h"
#include "hostfacts/live.h"

namespace hcashare::cni {
Status InNetns(const Netns& ns, const std::function<Status()>& fn) {
  NetnsGuard guard(ns);
  if (!guard.status().ok()) return guard.status();
  return fn();
}

std::string PodKey(const CniEnv& env) {
  return env.PodNamespace().empty() ? "" : env.PodNamespace() + "/" + env.PodName();
}

std::vector<PfGroup> PfGroups(const NetConf& conf, const std::optional<std::string>& mac,
                              const std::optional<std::string>& guid) {
  std::vector<PfGroup> groups;
  if (mac) {
    VfSettings s;
    s.mac = *mac;
    groups.push_back({"mac", s});
  }
  if (conf.vlan) {
    VfSettings s;
    s.vlan = static_cast<uint32_t>(*conf.vlan);
    s.qos = static_cast<uint32_t>(conf.vlan_qos.value_or(0));
    s.vlan_proto = conf.vlan_proto.value_or("802.1q");
    groups.push_back({"vlan", s});
  }
  if (conf.spoofchk) {
    VfSettings s;
    s.spoofchk = *conf.spoofchk;
    groups.push_back({"spoofchk", s});
  }
  if (conf.trust) {
    VfSettings s;
    s.trust = *conf.trust;
    groups.push_back({"trust", s});
  }
  if (conf.link_state) {
    VfSettings s;
    static const char* kNames[] = {"auto", "enable", "disable"};
    s.link_state = kNames[static_cast<int>(*conf.link_state)];
    groups.push_back({"link_state", s});
  }
  if (conf.min_tx_rate || conf.max_tx_rate) {
    VfSettings s;
    s.min_tx_rate = static_cast<uint32_t>(conf.min_tx_rate.value_or(0));
    s.max_tx_rate = static_cast<uint32_t>(conf.max_tx_rate.value_or(0));
    groups.push_back({"rate", s});
  }
  if (guid) {
    VfSettings s;
    s.node_guid = *guid;
    s.port_guid = *guid;
    groups.push_back({"guid", s});
  }
  return groups;
}

// The fields of `current` that `wanted` sets (what must be restored later).
VfSettings OriginalOf(const VfSettings& current, const VfSettings& wanted) {
  VfSettings o;
  if (wanted.vlan) {
    o.vlan = current.vlan.value_or(0);
    o.qos = current.qos.value_or(0);
    o.vlan_proto = current.vlan_proto.value_or("802.1q");
  }
  if (wanted.mac) o.mac = current.mac;
  if (wanted.spoofchk) o.spoofchk = current.spoofchk;
  if (wanted.trust) o.trust = current.trust;
  if (wanted.link_state) o.link_state = current.link_state;
  if (wanted.min_tx_rate || wanted.max_tx_rate) {
    o.min_tx_rate = current.min_tx_rate.value_or(0);
    o.max_tx_rate = current.max_tx_rate.value_or(0);
  }
  // A VF without a GUID reads all zero (or not at all), which cannot be set back.
  const auto restorable = [](const std::optional<std::string>& g) {
    return g && *g != "00:00:00:00:00:00:00:00" ? *g : std::string(kUnsetGuid);
  };
  if (wanted.node_guid) o.node_guid = restorable(current.node_guid);
  if (wanted.port_guid) o.port_guid = restorable(current.port_guid);
  return o;
}

// Restores the PF-side settings recorded in `state` (best effort, all groups).
Status RestorePf(const AttachmentState& state, VfOps& ops) {
  if (state.pf_original == VfSettings{} || state.pf_netdev.empty()) return Status::Ok();
  return ops.Set(state.pf_netdev, state.vf_index, state.pf_original);
}

// Adds the IPAM addresses and routes to `ifname` (in the current namespace).
Status ApplyIpam(NetdevOps& netdev, const std::string& ifname, const CniResult& ipam) {
  for (const auto& ip : ipam.ips) RETURN_IF_ERROR(netdev.AddAddress(ifname, ip.address));
  for (const auto& route : ipam.routes) {
    std::string gw = route.gw.value_or("");
    if (gw.empty()) {
      // As the reference plugins do: a route without gw goes via the gateway of an
      // address of the same family.
      const bool v6 = route.dst.find(':') != std::string::npos;
      for (const auto& ip : ipam.ips) {
        if (ip.gateway && (ip.gateway->find(':') != std::string::npos) == v6) {
          gw = *ip.gateway;
          break;
        }
      }
    }
    RETURN_IF_ERROR(netdev.AddRoute(ifname, route.dst, gw));
  }
  return Status::Ok();
}

Status ReturnToHost(const AttachmentState& state, const Netns& pod, const Netns& host,
                    NetdevOps& netdev) {
  return InNetns(pod, [&]() -> Status {
    ASSIGN_OR_RETURN(hcashare::LinkState ours, FindAttachedLink(netdev, state));
    LinkChanges back;
    back.name = state.host_ifname.empty() ? ours.name : state.host_ifname;
    if (!state.host_mac.empty()) back.mac = state.host_mac;
    if (state.host_mtu != 0) back.mtu = state.host_mtu;
    back.up = state.host_up;
    return netdev.MoveAndChange(ours.ifindex, host, back);
  });
}

Result<bool> BackOnHost(const AttachmentState& state, NetdevOps& netdev) {
  ASSIGN_OR_RETURN(std::vector<hcashare::LinkState> links, netdev.List());
  for (const auto& l : links) {
    if (!l.parent_dev.empty()) {
      if (l.parent_dev == state.device) return true;
    } else if (!l.bus_info.empty()) {
      if (l.bus_info == state.device) return true;
    } else if (l.name == state.host_ifname && l.mac == state.host_mac) {
      return true;
    }
  }
  return false;
}

Status CheckIfnameFree(const CniEnv& env, const Netns& pod, NetdevOps& netdev) {
  std::vector<hcashare::LinkState> links;
  Status st = InNetns(pod, [&]() -> Status {
    ASSIGN_OR_RETURN(links, netdev.List());
    return Status::Ok();
  });
  if (!st.ok()) return Summarize(st, "cannot list the interfaces of the pod");
  if (const hcashare::LinkState* taken = LinkNamed(links, env.ifname)) {
    return CniStatus(
        kErrInvalidEnv,
        "CNI_IFNAME " + env.ifname + " is already taken in the pod's network namespace",
        "interface " + env.ifname + " (ifindex " + std::to_string(taken->ifindex) +
            (taken->mac.empty() ? "" : ", MAC " + taken->mac) +
            ") is there already; nothing was changed. Give this attachment another "
            "interface name");
  }
  return Status::Ok();
}

std::vector<std::string> WaitForDeviceNetdevs(const Host& host, const std::string& device,
                                              bool is_sf, std::chrono::milliseconds wait) {
  const auto deadline = std::chrono::steady_clock::now() + wait;
  const hostfacts::LiveFacts live(host);
  const hostfacts::DeviceRef dev = hostfacts::PciOrAux(device, is_sf);
  std::vector<std::string> names = live.Netdevs(dev);
  while (names.empty() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    names = live.Netdevs(dev);
  }
  return names;
}

Status CheckGuidApplies(const VfDevice& vf, const AttachContext& ctx) {
  if (vf.is_sf) {
    return CniStatus(kErrInvalidNetConf, "a GUID cannot be given to " + vf.id,
                     "it is a scalable function; GUIDs are for InfiniBand SR-IOV VFs");
  }
  if (!vf.pf_arp_type.empty() && vf.pf_arp_type != "32") {
    const std::string kind =
        vf.pf_arp_type == "1" ? "Ethernet" : "not InfiniBand (ARPHRD " + vf.pf_arp_type + ")";
    return CniStatus(kErrInvalidNetConf, "guid applies only to InfiniBand VFs",
                     vf.id + " is a VF of " + vf.pf_netdev + ", which is " + kind +
                         "; the kernel sets VF GUIDs only through an InfiniBand PF. Nothing was "
                         "changed; remove guid (and runtimeConfig.infinibandGUID) from this "
                         "network");
  }
  if (!vf.dpdk && ctx.vf_driver == nullptr) {
    return CniStatus(kErrInternal, "no way to rebind " + vf.id + " to apply its GUID");
  }
  if (!vf.dpdk && !IsPlainDriverName(vf.driver)) {
    return CniStatus(
        kErrHostSetupFailed, "cannot rebind " + vf.id + " to apply its GUID",
        "its driver link names \"" + vf.driver + "\", not a driver; nothing was changed");
  }
  return Status::Ok();
}

Status RestoreReturnedNetdev(const AttachmentState& state, const Host& host, NetdevOps& netdev,
                             std::chrono::milliseconds wait) {
  std::vector<std::string> names = WaitForDeviceNetdevs(host, state.device, state.is_sf, wait);
  if (names.empty()) {
    LogWarn("the device's netdev has not come back to the host namespace",
            {{"device", state.device}, {"waited_ms", wait.count()}});
    return Status::Ok();
  }
  const std::string& name = names.front();
  auto now = netdev.Get(name);
  if (!now.ok()) return now.status().IsNotFound() ? Status::Ok() : now.status();
  std::string current = name;
  if (!state.host_ifname.empty() && name != state.host_ifname) {
    RETURN_IF_ERROR(netdev.SetUp(name, false));
    RETURN_IF_ERROR(netdev.Rename(name, state.host_ifname));
    current = state.host_ifname;
  }
  if (!state.host_mac.empty() && now->mac != state.host_mac) {
    RETURN_IF_ERROR(netdev.SetMac(current, state.host_mac));
  }
  if (state.host_mtu != 0 && now->mtu != state.host_mtu) {
    RETURN_IF_ERROR(netdev.SetMtu(current, state.host_mtu));
  }
  if (state.host_up && !now->admin_up) RETURN_IF_ERROR(netdev.SetUp(current, true));
  LogInfo("restored the netdev the kernel returned from the pod's namespace",
          {{"device", state.device}, {"was", name}, {"ifname", current}});
  return Status::Ok();
}

Result<nlohmann::json> FinishAdd(const CniEnv& env, const NetConf& conf, const AttachContext& ctx,
                                 const Netns& pod, bool apply_ipam, AttachmentState* state,
                                 CniResult result, UndoStack* undo) {
  if (conf.ipam) {
    // IPAM DEL is idempotent: registered first, it also releases what a failed ADD of the
    // IPAM plugin may have left.
    undo->Push("IPAM",
               [&env, &conf] { return RunIpam(env, "DEL", conf.raw, conf.ipam_type).status(); });
    ASSIGN_OR_RETURN(const std::optional<CniResult> ipam,
                     RunIpam(env, "ADD", conf.raw, conf.ipam_type));
    HCASHARE_FAULT_POINT("add:ipam-added");
    if (apply_ipam) {
      Status st = InNetns(pod, [&] { return ApplyIpam(ctx.netdev, env.ifname, *ipam); });
      if (!st.ok()) return Summarize(st, "cannot apply the IPAM result to " + env.ifname);
      HCASHARE_FAULT_POINT("add:ipam-applied");
    }
    result = MergeIpamResult(std::move(result), *ipam);
    state->steps.push_back("ipam");
  }
  if (conf.prev_result) {
    // Chained after other plugins: keep what they reported and add ours.
    ASSIGN_OR_RETURN(CniResult prev, ParseResult(*conf.prev_result));
    result = ChainResult(std::move(prev), result);
  }
  ASSIGN_OR_RETURN(nlohmann::json out, ToJson(result, conf.cni_version));
  state->result = out;
  if (Status saved = ctx.store.Save(*state); !saved.ok()) {
    return StateError(saved, "cannot save state");
  }
  HCASHARE_FAULT_POINT("add:done");
  undo->Commit();
  LogInfo("attached", {{"device", state->device},
                       {"ifname", env.ifname},
                       {"rdma", state->rdma_device},
                       {"container", env.container_id},
                       {"pod", PodKey(env)}});
  return out;
}

Status RemoveIfExists(const std::string& path) {
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) return ErrnoStatus(errno, "unlink " + path);
  return Status::Ok();
}

Status ReturnRdmaToHost(const AttachmentState& state, const Netns& pod, const Netns& host,
                        RdmaSystem& rdma) {
  if (state.rdma_device.empty()) return Status::Ok();
  Status st = InNetns(pod, [&] { return rdma.MoveToNetns(state.rdma_device, host.fd()); });
  return st.IsNotFound() ? Status::Ok() : st;
}

Result<std::string> PlanRdmaMove(RdmaMode mode, const VfDevice& vf, RdmaSystem& rdma) {
  if (mode == RdmaMode::kOff) return std::string();
  const std::string where =
      hostfacts::DeviceDir(hostfacts::PciOrAux(vf.id, vf.is_sf)) + "/infiniband/" +
      (vf.netdev.empty() ? "" : " (nor a Soft-RoCE device on " + vf.netdev + ")");
  if (vf.rdma_devices.empty()) {
    if (mode == RdmaMode::kAuto) return std::string();
    return CniStatus(kErrDeviceNotFound, "\"rdma\": \"move\", but " + vf.id + " has no RDMA device",
                     "nothing under " + where);
  }
  if (vf.rdma_devices.size() > 1) {
    return CniStatus(kErrHostSetupFailed, vf.id + " has several RDMA devices; expected one",
                     where + ": " + Join(vf.rdma_devices));
  }
  const std::string& name = vf.rdma_devices.front();
  auto netns_mode = rdma.GetNetnsMode();
  if (!netns_mode.ok() || *netns_mode != RdmaNetnsMode::kExclusive) {
    const std::string why =
        netns_mode.ok()
            ? "the RDMA netns mode is shared, so " + name + " stays visible in every namespace"
            : "the RDMA netns mode is unknown: " + netns_mode.status().message();
    if (mode == RdmaMode::kMove) {
      return CniStatus(kErrHostSetupFailed, "cannot move RDMA device " + name + " into the pod",
                       why +
                           "; run `rdma system set netns exclusive` on the node (before any "
                           "RDMA device is in use), or use \"rdma\": \"auto\"");
    }
    LogInfo("leaving the RDMA device in the host namespace", {{"rdma", name}, {"why", why}});
    return std::string();
  }
  if (vf.virtual_rdma) {
    // Checked before anything changes: ib_core refuses to move Soft-RoCE devices (no
    // disassociate_ucontext), and leaving it behind would hide RDMA from the pod.
    return CniStatus(kErrHostSetupFailed, "cannot move RDMA device " + name + " into the pod",
                     name + " is a virtual (Soft-RoCE) RDMA device on " + vf.netdev +
                         ", and the kernel cannot move those to another network namespace; "
                         "use the shared RDMA netns mode, or \"rdma\": \"off\"");
  }
  return name;
}

}  // namespace hcashare::cni
