#include "cni/attach.h"

#include <optional>

#include "cni/ipam.h"
#include "cni/result.h"
#include "cni/undo.h"
#include "cni/vf.h"
#include "common/log.h"
#include "common/netns.h"
#include "common/strings.h"

namespace hcashare::cni {
namespace {

using json = nlohmann::json;

// Runs `fn` with the calling thread inside `ns`.
Status InNetns(const Netns& ns, const std::function<Status()>& fn) {
  NetnsGuard guard(ns);
  if (!guard.status().ok()) return guard.status();
  return fn();
}

std::string PodKey(const CniEnv& env) {
  return env.PodNamespace().empty() ? "" : env.PodNamespace() + "/" + env.PodName();
}

// The error for a failed host step: code from the status, with the step named.
CniError StepError(const Status& st, const std::string& step) { return FromStatus(st, step); }

// The device for this attachment: the configured deviceID, else a pod-resources lookup.
CniOr<std::pair<std::string, bool>> FindDevice(const CniEnv& env, const NetConf& conf,
                                               const AttachContext& ctx) {
  if (conf.device) {
    return std::make_pair(conf.device->value, conf.device->kind == DeviceKind::kAuxDevice);
  }
  if (!conf.resource_name) {
    return CniError{kErrInvalidNetConf, "no device to attach",
                    "the configuration has no deviceID (Multus injects it when the "
                    "NetworkAttachmentDefinition carries the k8s.v1.cni.cncf.io/resourceName "
                    "annotation) and no resourceName to look the pod's devices up by"};
  }
  const std::string& resource = *conf.resource_name;
  const std::string pod = PodKey(env).empty() ? "(unknown pod)" : PodKey(env);
  if (!ctx.pod_devices) return CniError{kErrInternal, "no pod-resources lookup configured", ""};
  auto found = ctx.pod_devices();
  if (!found.ok()) {
    return FromStatus(found.status(), "cannot look up the devices of pod " + pod);
  }
  auto it = found->by_resource.find(resource);
  if (it == found->by_resource.end() || it->second.empty()) {
    std::vector<std::string> present;
    for (const auto& [name, ids] : found->by_resource) {
      present.push_back(name + " (" + std::to_string(ids.size()) + ")");
    }
    return CniError{kErrDeviceNotFound,
                    "pod " + pod + " has no devices of " + resource +
                        " (resources present: " + (present.empty() ? "none" : Join(present)) +
                        "); does the pod request it and does the NAD carry the "
                        "k8s.v1.cni.cncf.io/resourceName annotation?",
                    "looked up through " + found->source};
  }
  auto chosen = ChooseDevice(it->second, env, ctx.store, resource);
  if (!chosen.ok()) return chosen.error();
  const bool aux = chosen->find(':') == std::string::npos;
  return std::make_pair(*chosen, aux);
}

// One group of PF-side settings applied together, and how to read its fields.
struct PfGroup {
  const char* name;
  VfSettings wanted;
};

std::vector<PfGroup> PfGroups(const NetConf& conf, const std::optional<std::string>& mac) {
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
  return o;
}

// Copies the set fields of `from` into `into`.
void MergeInto(VfSettings* into, const VfSettings& from) {
  auto merge = [](auto* a, const auto& b) {
    if (b) *a = b;
  };
  merge(&into->vlan, from.vlan);
  merge(&into->qos, from.qos);
  merge(&into->vlan_proto, from.vlan_proto);
  merge(&into->mac, from.mac);
  merge(&into->spoofchk, from.spoofchk);
  merge(&into->trust, from.trust);
  merge(&into->link_state, from.link_state);
  merge(&into->min_tx_rate, from.min_tx_rate);
  merge(&into->max_tx_rate, from.max_tx_rate);
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

// Moves the attachment's interface from the pod back to the host in one request, under
// its host name, MAC and MTU, and down. The interface is looked for under `pod_ifname`,
// then under its host name (an ADD that failed after the move but before the rename).
// NotFound when the pod has neither.
Status ReturnToHost(const AttachmentState& state, const std::string& pod_ifname, const Netns& pod,
                    const Netns& host, NetdevOps& netdev) {
  return InNetns(pod, [&]() -> Status {
    for (const std::string& name : {pod_ifname, state.host_ifname}) {
      if (name.empty() || !netdev.Get(name).ok()) continue;
      LinkChanges back;
      back.name = state.host_ifname.empty() ? name : state.host_ifname;
      if (!state.host_mac.empty()) back.mac = state.host_mac;
      if (state.host_mtu != 0) back.mtu = state.host_mtu;
      back.up = false;
      return netdev.MoveAndChange(name, host, back);
    }
    return Status::NotFound("no " + pod_ifname + " in the pod's network namespace");
  });
}

}  // namespace

CniOr<std::string> ChooseDevice(const std::vector<std::string>& candidates, const CniEnv& env,
                                const StateStore& store, const std::string& resource) {
  std::vector<std::string> held;
  for (const auto& id : candidates) {
    auto owner = store.OwnerOf(id);
    if (!owner) return id;
    if (owner->container_id == env.container_id && owner->ifname == env.ifname) return id;
    if (IsStale(*owner)) return id;
    held.push_back(id + " (by " + owner->ifname + ")");
  }
  return CniError{kErrDeviceBusy,
                  "every device of " + resource + " assigned to the pod is already attached",
                  Join(held)};
}

CniOr<json> CmdAdd(const CniEnv& env, const NetConf& conf, const AttachContext& ctx) {
  auto pod = Netns::Open(env.netns);
  if (!pod.ok())
    return CniError{kErrUnknownContainer, "cannot open CNI_NETNS", pod.status().message()};
  auto found = FindDevice(env, conf, ctx);
  if (!found.ok()) return found.error();
  const auto [device, is_aux] = *found;
  auto vf = ResolveVf(ctx.host, device, is_aux);
  if (!vf.ok()) return FromStatus(vf.status(), "cannot use device " + device);
  if (vf->netdev.empty()) {
    return CniError{kErrDeviceNotFound, "device " + device + " has no netdev in the host namespace",
                    "is it attached to another pod, or bound to a driver without a netdev?"};
  }
  auto mac = SelectMac(conf, env.cni_args);
  if (!mac.ok()) return mac.error();
  const std::vector<PfGroup> groups = PfGroups(conf, *mac);
  // A MAC alone also works without the PF (the netdev gets it); anything else needs it.
  const bool beyond_mac = groups.size() > (*mac ? 1u : 0u);
  const bool pf_reachable = !vf->is_sf && !vf->pf_netdev.empty() && vf->vf_index >= 0;
  if (beyond_mac && !pf_reachable) {
    return CniError{kErrInvalidNetConf, "PF-side VF settings cannot be applied to " + device,
                    vf->is_sf ? "it is a scalable function" : "its PF has no netdev"};
  }

  auto lock = ctx.store.Lock(device, ctx.lock_wait);
  if (!lock.ok()) return CniError{kErrTryAgainLater, lock.status().message(), ""};
  if (auto owner = ctx.store.OwnerOf(device); owner && !IsStale(*owner)) {
    return CniError{kErrDeviceBusy, "device " + device + " is already attached",
                    "to " + owner->container_id + "/" + owner->ifname + " in " + owner->netns};
  }
  if (ctx.store.Load(env.container_id, env.ifname).ok()) {
    return CniError{kErrDeviceBusy,
                    "attachment " + env.container_id + "/" + env.ifname + " already exists",
                    "run DEL first"};
  }

  // Save what will be restored before changing anything.
  auto host = Netns::Current();
  if (!host.ok()) return FromStatus(host.status(), "cannot open the host network namespace");
  auto link = ctx.netdev.Get(vf->netdev);
  if (!link.ok()) return FromStatus(link.status(), "cannot read netdev " + vf->netdev);
  AttachmentState state;
  state.owner = {env.container_id, env.ifname,  env.netns,
                 env.PodUid(),     PodKey(env), conf.resource_name.value_or("")};
  state.device = device;
  state.is_sf = vf->is_sf;
  state.pf_netdev = vf->pf_netdev;
  state.vf_index = vf->vf_index;
  state.host_ifname = vf->netdev;
  state.host_mac = link->mac;
  state.host_mtu = link->mtu;
  state.netconf = conf.raw;
  // The PF is queried only when a PF-side setting (or a MAC) was asked for.
  std::optional<VfSettings> pf_current;
  if (!groups.empty() && pf_reachable) {
    auto cur = ctx.vf.Get(vf->pf_netdev, vf->vf_index);
    if (cur.ok()) {
      pf_current = *cur;
      for (const auto& g : groups) MergeInto(&state.pf_original, OriginalOf(*cur, g.wanted));
    } else if (!cur.status().IsNotFound() || beyond_mac) {
      return FromStatus(cur.status(), "cannot read VF " + std::to_string(vf->vf_index) + " of PF " +
                                          vf->pf_netdev);
    }
  }
  UndoStack undo;
  if (Status st = ctx.store.Save(state); !st.ok()) return StepError(st, "cannot save state");
  undo.Push("state file", [&] { return ctx.store.Remove(env.container_id, env.ifname); });
  if (Status st = ctx.store.SetOwner(device, state.owner); !st.ok()) {
    return StepError(st, "cannot mark the device as owned");
  }
  undo.Push("owner marker",
            [&] { return ctx.store.ReleaseOwner(device, env.container_id, env.ifname); });

  // 1. PF side, one group at a time (a PF that does not report the VF gets no admin MAC).
  for (const auto& g : groups) {
    if (!pf_current) break;
    if (Status st = ctx.vf.Set(vf->pf_netdev, vf->vf_index, g.wanted); !st.ok()) {
      return StepError(st, std::string("cannot set ") + g.name + " of VF " +
                               std::to_string(vf->vf_index) + " on PF " + vf->pf_netdev);
    }
    const VfSettings original = OriginalOf(*pf_current, g.wanted);
    undo.Push(std::string("PF ") + g.name,
              [&, original] { return ctx.vf.Set(vf->pf_netdev, vf->vf_index, original); });
    state.steps.push_back(std::string("pf:") + g.name);
    (void)ctx.store.Save(state);
  }

  // 2. The netdev: into the pod, renamed, with its MAC and MTU, and up, in one request.
  LinkChanges into_pod;
  into_pod.name = env.ifname;
  into_pod.mac = *mac;
  if (conf.mtu) into_pod.mtu = static_cast<uint32_t>(*conf.mtu);
  into_pod.up = true;
  undo.Push("netdev into the pod", [&]() -> Status {
    Status back = ReturnToHost(state, env.ifname, *pod, *host, ctx.netdev);
    return back.IsNotFound() ? Status::Ok() : back;  // it never left the host
  });
  if (Status st = ctx.netdev.MoveAndChange(vf->netdev, *pod, into_pod); !st.ok()) {
    return StepError(st, "cannot move " + vf->netdev + " into the pod as " + env.ifname);
  }
  CniResult result;
  Status st = InNetns(*pod, [&]() -> Status {
    auto now = ctx.netdev.Get(env.ifname);
    if (!now.ok()) return now.status();
    if (*mac && now->mac != **mac) {
      return Status::FailedPrecondition("MAC of " + env.ifname + " reads back as " + now->mac +
                                        ", not " + **mac);
    }
    ResultInterface iface;
    iface.name = env.ifname;
    iface.mac = now->mac;
    iface.sandbox = env.netns;
    iface.mtu = now->mtu;
    if (!vf->is_sf) iface.pci_id = device;
    result.interfaces.push_back(iface);
    return Status::Ok();
  });
  if (!st.ok()) return StepError(st, "cannot configure " + env.ifname + " in the pod");
  state.steps.push_back("netdev");
  (void)ctx.store.Save(state);

  // 3. IPAM, applied inside the pod.
  if (conf.ipam) {
    auto ipam = RunIpam(env, "ADD", conf.raw, conf.ipam_type);
    if (!ipam.ok()) return ipam.error();
    undo.Push("IPAM", [&]() -> Status {
      auto del = RunIpam(env, "DEL", conf.raw, conf.ipam_type);
      return del.ok() ? Status::Ok() : Status::IoError(del.error().msg);
    });
    st = InNetns(*pod, [&] { return ApplyIpam(ctx.netdev, env.ifname, **ipam); });
    if (!st.ok()) return StepError(st, "cannot apply the IPAM result to " + env.ifname);
    result = MergeIpamResult(std::move(result), **ipam);
    state.steps.push_back("ipam");
  }

  if (conf.prev_result) {
    // Chained after other plugins: keep what they reported and add ours.
    auto prev = ParseResult(*conf.prev_result);
    if (!prev.ok()) return prev.error();
    result = ChainResult(std::move(prev).value(), result);
  }
  auto out = ToJson(result, conf.cni_version);
  if (!out.ok()) return out.error();
  state.result = *out;
  if (Status saved = ctx.store.Save(state); !saved.ok()) {
    return StepError(saved, "cannot save state");
  }
  undo.Commit();
  LogInfo("attached", {{"device", device},
                       {"ifname", env.ifname},
                       {"container", env.container_id},
                       {"pod", PodKey(env)}});
  return *out;
}

MaybeError CmdDel(const CniEnv& env, const NetConf& conf, const AttachContext& ctx) {
  auto ipam_del = [&](const json& netconf) -> MaybeError {
    if (!conf.ipam) return std::nullopt;
    auto r = RunIpam(env, "DEL", netconf.is_null() ? conf.raw : netconf, conf.ipam_type);
    if (!r.ok()) return r.error();
    return std::nullopt;
  };
  auto loaded = ctx.store.Load(env.container_id, env.ifname);
  if (!loaded.ok()) {
    if (!loaded.status().IsNotFound()) return FromStatus(loaded.status(), "cannot read state");
    LogDebug("DEL without state: releasing IPAM only",
             {{"container", env.container_id}, {"ifname", env.ifname}});
    return ipam_del(json());
  }
  AttachmentState state = std::move(loaded).value();
  auto lock = ctx.store.Lock(state.device, ctx.lock_wait);
  if (!lock.ok()) return CniError{kErrTryAgainLater, lock.status().message(), ""};
  auto host = Netns::Current();
  if (!host.ok()) return FromStatus(host.status(), "cannot open the host network namespace");

  // The interface, back to the host, when the pod's namespace still exists.
  std::optional<Netns> pod;
  if (!env.netns.empty()) {
    auto opened = Netns::Open(env.netns);
    if (opened.ok()) pod = std::move(opened).value();
  }
  if (pod && state.Done("netdev")) {
    Status st = ReturnToHost(state, env.ifname, *pod, *host, ctx.netdev);
    if (!st.ok() && !st.IsNotFound()) {
      return FromStatus(st, "cannot return " + env.ifname + " to the host");
    }
  } else if (state.Done("netdev")) {
    LogInfo("pod network namespace is gone; its interface returned to the host by itself",
            {{"device", state.device}, {"netns", env.netns}});
  }
  if (MaybeError e = ipam_del(state.netconf)) return e;
  if (Status st = RestorePf(state, ctx.vf); !st.ok()) {
    return FromStatus(st, "cannot restore the PF-side settings of " + state.device);
  }
  if (Status st = ctx.store.ReleaseOwner(state.device, env.container_id, env.ifname); !st.ok()) {
    return FromStatus(st, "cannot remove the owner marker");
  }
  if (Status st = ctx.store.Remove(env.container_id, env.ifname); !st.ok()) {
    return FromStatus(st, "cannot remove the state file");
  }
  LogInfo("detached", {{"device", state.device}, {"ifname", env.ifname}});
  return std::nullopt;
}

MaybeError CmdCheck(const CniEnv& env, const NetConf& conf, const AttachContext& ctx) {
  auto state = ctx.store.Load(env.container_id, env.ifname);
  if (!state.ok()) {
    return CniError{kErrUnknownContainer, "no attachment " + env.container_id + "/" + env.ifname,
                    ""};
  }
  auto pod = Netns::Open(env.netns);
  if (!pod.ok())
    return CniError{kErrUnknownContainer, "cannot open CNI_NETNS", pod.status().message()};
  std::string want_mac;  // ours is the interface named CNI_IFNAME (chained: not always [0])
  for (const auto& iface : state->result.value("interfaces", json::array())) {
    if (iface.value("name", "") == env.ifname) want_mac = iface.value("mac", "");
  }
  Status st = InNetns(*pod, [&]() -> Status {
    auto link = ctx.netdev.Get(env.ifname);
    if (!link.ok()) return link.status();
    if (!want_mac.empty() && link->mac != want_mac) {
      return Status::FailedPrecondition(env.ifname + " has MAC " + link->mac + ", expected " +
                                        want_mac);
    }
    return Status::Ok();
  });
  if (!st.ok()) return FromStatus(st, "attachment " + env.ifname + " is not as ADD left it");
  if (conf.ipam) {
    auto r = RunIpam(env, "CHECK", conf.raw, conf.ipam_type);
    if (!r.ok()) return r.error();
  }
  return std::nullopt;
}

}  // namespace hcashare::cni
