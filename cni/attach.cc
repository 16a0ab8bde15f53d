#include "cni/attach.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <optional>

#include "cni/allocation.h"
#include "cni/child_link.h"
#include "cni/dra_chain.h"
#include "cni/error.h"
#include "cni/fault_points.h"
#include "cni/gpu_affinity.h"
#include "cni/guid_unique.h"
#include "cni/ipam.h"
#include "cni/link_identity.h"
#include "cni/result.h"
#include "cni/steps.h"
#include "cni/undo.h"
#include "cni/vf.h"
#include "cni/vf_rebind.h"
#include "common/atomic_file.h"
#include "common/log.h"
#include "common/netns.h"
#include "common/strings.h"
#include "interop/device_info_json.h"

namespace hcashare::cni {
namespace {

using json = nlohmann::json;

// The device of an attachment, and the GPU it was chosen for.
struct FoundDevice {
  std::string id;
  bool is_aux = false;
  std::optional<topo::GpuMatch> gpu;
};

// With gpuRails: the pod's devices `candidates` with the one for this interface's rail
// (netN: the nearest to the pod's Nth GPU) first, and that match; unchanged otherwise.
std::vector<std::string> RailFirst(const CniEnv& env, const NetConf& conf, const AttachContext& ctx,
                                   const PodDeviceMap& granted, std::vector<std::string> candidates,
                                   std::optional<topo::GpuMatch>* match) {
  const std::optional<size_t> ordinal = InterfaceOrdinal(env.ifname);
  const std::optional<PodGpuView> view = ReadPodGpus(conf, ctx, granted);
  if (!ordinal || !view) {
    LogInfo("gpuRails: no rail for this interface; taking the first free device",
            {{"ifname", env.ifname}, {"pod_gpus", view ? view->gpus.gpus.size() : 0}});
    return candidates;
  }
  const std::vector<topo::GpuMatch> rails =
      topo::AssignRails(view->distances, view->gpus.gpus, candidates);
  if (*ordinal >= rails.size()) {
    LogInfo("gpuRails: more interfaces than placed GPUs; taking the first free device",
            {{"ifname", env.ifname}, {"rails", rails.size()}});
    return candidates;
  }
  *match = rails[*ordinal];
  auto it = std::find(candidates.begin(), candidates.end(), (*match)->device);
  std::rotate(candidates.begin(), it, it + 1);
  return candidates;
}

// The device for this attachment: the configured deviceID, once the kubelet is known to
// have allocated it to the pod, else a pod-resources lookup (also with gpuRails, where the
// pod's devices are assigned to interfaces by GPU).
Result<FoundDevice> FindDevice(const CniEnv& env, const NetConf& conf, const AttachContext& ctx) {
  const bool rails = conf.gpu_rails && conf.resource_name;
  if (conf.device && !rails) {
    RETURN_IF_ERROR(CheckAllocatedToPod(env, conf, ctx, conf.device->value));
    return FoundDevice{conf.device->value, conf.device->kind == DeviceKind::kAuxDevice, {}};
  }
  if (!conf.resource_name) {
    return CniStatus(kErrInvalidNetConf, "no device to attach",
                     "the configuration has no deviceID (Multus injects it when the "
                     "NetworkAttachmentDefinition carries the k8s.v1.cni.cncf.io/resourceName "
                     "annotation) and no resourceName to look the pod's devices up by");
  }
  const std::string& resource = *conf.resource_name;
  const std::string pod = PodKey(env).empty() ? "(unknown pod)" : PodKey(env);
  if (!ctx.pod_devices) return CniStatus(kErrInternal, "no pod-resources lookup configured");
  auto found = ctx.pod_devices();
  if (!found.ok()) {
    return Summarize(found.status(), "cannot look up the devices of pod " + pod);
  }
  auto it = found->by_resource.find(resource);
  if (it == found->by_resource.end() || it->second.empty()) {
    std::vector<std::string> present;
    for (const auto& [name, ids] : found->by_resource) {
      present.push_back(name + " (" + std::to_string(ids.size()) + ")");
    }
    return CniStatus(kErrDeviceNotFound,
                     "pod " + pod + " has no devices of " + resource +
                         " (resources present: " + (present.empty() ? "none" : Join(present)) +
                         "); does the pod request it and does the NAD carry the "
                         "k8s.v1.cni.cncf.io/resourceName annotation?",
                     "looked up through " + found->source);
  }
  FoundDevice found_device;
  std::vector<std::string> candidates = it->second;
  if (rails) {
    candidates = RailFirst(env, conf, ctx, *found, std::move(candidates), &found_device.gpu);
  }
  ASSIGN_OR_RETURN(found_device.id, ChooseDevice(candidates, env, ctx.store, resource));
  found_device.is_aux = found_device.id.find(':') == std::string::npos;
  if (found_device.gpu && found_device.gpu->device != found_device.id) {
    LogWarn("gpuRails: the device nearest this interface's GPU is held by another attachment",
            {{"wanted", found_device.gpu->device}, {"taken", found_device.id}});
    found_device.gpu.reset();
  }
  if (conf.device && conf.device->value != found_device.id) {
    LogInfo("gpuRails: using the pod's device for this rail instead of the injected deviceID",
            {{"deviceID", conf.device->value}, {"device", found_device.id}});
  }
  return found_device;
}

// Writes the Multus device-info document to `path` (its directory is created).
Status WriteDeviceInfo(const std::string& path, const std::string& device,
                       const std::vector<std::string>& rdma_devices, const std::string& pf_pci) {
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
  if (ec) return Status::IoError("create the directory of " + path + ": " + ec.message());
  return WriteFileAtomically(path, PciDeviceInfoJson(device, rdma_devices, pf_pci));
}

// A shared pool's IDs ("0".."rdmaHcaMax-1") are counters, not devices: netdev mode needs
// an exclusive (per-VF) resource.
Status RejectSharedPoolId(const NetConf& conf, const std::string& device) {
  if (device.empty() || device.find_first_not_of("0123456789") != std::string::npos) {
    return Status::Ok();
  }
  const std::string resource = conf.resource_name.value_or("the resource");
  return CniStatus(kErrInvalidNetConf,
                   resource + " is a shared pool: its ID \"" + device +
                       "\" is a share of the pool's HCAs, not a VF to move into the pod",
                   "netdev mode needs an exclusive resource (one VF per device); to attach a "
                   "shared pool, set \"mode\": \"macvlan\" (RoCE) or \"mode\": \"ipoib\" "
                   "(InfiniBand) in the network configuration");
}

}  // namespace

Result<std::string> ChooseDevice(const std::vector<std::string>& candidates, const CniEnv& env,
                                 const StateStore& store, const std::string& resource) {
  std::vector<std::string> held;
  std::optional<std::string> handed_over;  // the first the pod's DRA step holds
  for (const auto& id : candidates) {
    auto owner = store.OwnerOf(id);
    if (!owner) return id;
    if (owner->container_id == env.container_id && owner->ifname == env.ifname) return id;
    if (IsStale(*owner)) return id;
    if (!handed_over && IsHandedOver(*owner, env)) handed_over = id;
    held.push_back(id + " (by " + owner->ifname + ")");
  }
  if (handed_over) return *handed_over;
  return CniStatus(kErrDeviceBusy,
                   "every device of " + resource + " assigned to the pod is already attached",
                   Join(held));
}

Result<AddRunning> MarkRunning(const CniEnv& env, const AttachContext& ctx) {
  auto running = ctx.store.MarkAddRunning(env.container_id, env.ifname);
  if (!running.ok()) {
    return StateError(running.status(), "cannot mark the ADD of " + env.container_id + "/" +
                                            env.ifname + " as running");
  }
  return running;
}

Result<json> CmdAdd(const CniEnv& env, const NetConf& conf, const AttachContext& ctx) {
  if (conf.mode != AttachMode::kNetdev) return AddChildLink(env, conf, ctx);
  auto pod = Netns::Open(env.netns);
  if (!pod.ok()) {
    return CniStatus(kErrUnknownContainer, "cannot open CNI_NETNS", pod.status().message());
  }
  ASSIGN_OR_RETURN(const FoundDevice found, FindDevice(env, conf, ctx));
  const std::string& device = found.id;
  // The pod's DRA step attached it before Multus ran this network: this attachment takes
  // it over (the device enters the pod once, under this network's name and settings).
  RETURN_IF_ERROR(TakeOverFromDraStep(env, conf, ctx, device));
  const bool is_aux = found.is_aux;
  if (found.gpu) {
    LogInfo("chose the device nearest the pod's GPU",
            {{"device", device},
             {"ifname", env.ifname},
             {"gpu", found.gpu->gpu.uuid},
             {"gpu_pci", found.gpu->gpu.address},
             {"path", topo::PathTypeName(found.gpu->path)}});
  }
  RETURN_IF_ERROR(RejectSharedPoolId(conf, device));
  auto vf = ResolveVf(ctx.host, device, is_aux);
  if (!vf.ok()) return Summarize(vf.status(), "cannot use device " + device);
  RETURN_IF_ERROR(RejectHostUplink(*vf));
  const bool dpdk = vf->dpdk;  // only PF-side settings: there is no netdev to move
  if (!dpdk && vf->netdev.empty()) {
    return CniStatus(kErrDeviceNotFound,
                     "device " + device + " has no netdev in the host namespace",
                     "is it attached to another pod, or bound to a driver without a netdev?");
  }
  ASSIGN_OR_RETURN(const std::optional<std::string> mac, SelectMac(conf, env.cni_args));
  ASSIGN_OR_RETURN(const std::optional<std::string> guid, SelectGuid(conf, env.cni_args));
  RETURN_IF_ERROR(CheckIbKubernetes(conf));
  if (guid) RETURN_IF_ERROR(CheckGuidApplies(*vf, ctx));
  const std::vector<PfGroup> groups = PfGroups(conf, mac, guid);
  // A MAC alone also works without the PF (the netdev gets it); anything else needs it.
  const bool beyond_mac = groups.size() > (mac && !dpdk ? 1u : 0u);
  const bool pf_reachable = !vf->is_sf && !vf->pf_netdev.empty() && vf->vf_index >= 0;
  if (beyond_mac && !pf_reachable) {
    return CniStatus(kErrInvalidNetConf, "PF-side VF settings cannot be applied to " + device,
                     vf->is_sf ? "it is a scalable function" : "its PF has no netdev");
  }
  ASSIGN_OR_RETURN(const std::string rdma_device, dpdk ? Result<std::string>(std::string())
                                                       : PlanRdmaMove(conf.rdma, *vf, ctx.rdma));
  if (!dpdk) RETURN_IF_ERROR(CheckIfnameFree(env, *pod, ctx.netdev));

  // Everything checked, nothing changed yet. Held until ADD returns, from before its
  // first state write, so that `hcashare cni-gc` leaves a running ADD alone.
  ASSIGN_OR_RETURN(const AddRunning running, MarkRunning(env, ctx));
  auto lock = ctx.store.Lock(device, ctx.lock_wait);
  if (!lock.ok()) return StateError(lock.status(), "cannot lock device " + device);
  if (auto owner = ctx.store.OwnerOf(device); owner && !IsStale(*owner)) {
    return CniStatus(kErrDeviceBusy, "device " + device + " is already attached",
                     "to " + owner->container_id + "/" + owner->ifname + " in " + owner->netns);
  }
  if (ctx.store.Load(env.container_id, env.ifname).ok()) {
    return CniStatus(kErrDeviceBusy,
                     "attachment " + env.container_id + "/" + env.ifname + " already exists",
                     "run DEL first");
  }
  // Held until ADD returns: the GUID's check and its record in the state are one step.
  DeviceLock guid_lock;
  if (guid) {
    auto locked = LockGuid(*guid, ctx);
    if (!locked.ok()) return StateError(locked.status(), "cannot lock GUID " + *guid);
    guid_lock = std::move(locked).value();
    RETURN_IF_ERROR(CheckGuidUnique(*guid, *vf, env, ctx));
  }

  // Record what will be restored before changing anything.
  auto host = Netns::Current();
  if (!host.ok()) return Summarize(host.status(), "cannot open the host network namespace");
  AttachmentState state;
  state.owner = {env.container_id, env.ifname,  env.netns,
                 env.PodUid(),     PodKey(env), conf.resource_name.value_or(""),
                 ctx.chained_by};
  state.device = device;
  state.is_sf = vf->is_sf;
  state.dpdk = dpdk;
  state.vf_driver = vf->driver;  // what a VF a rebind left unbound is bound to again
  state.guid = guid.value_or("");
  state.rdma_device = rdma_device;
  state.pf_netdev = vf->pf_netdev;
  state.vf_index = vf->vf_index;
  state.netns_ino = pod->Inode();
  state.netconf = conf.raw;
  // Recorded up front, so that a DEL after a crash right after writing it removes it.
  if (conf.device_info_file && !vf->is_sf) state.device_info_file = *conf.device_info_file;
  if (!dpdk) {
    auto link = ctx.netdev.Get(vf->netdev);
    if (!link.ok()) return Summarize(link.status(), "cannot read netdev " + vf->netdev);
    state.host_ifname = vf->netdev;
    state.host_mac = link->mac;
    state.host_mtu = link->mtu;
    state.host_up = link->admin_up;
    state.host_ifindex = link->ifindex;
    state.pod_mac = mac.value_or(link->mac);
  }
  // The PF is queried only when a PF-side setting (or a MAC) was asked for.
  std::optional<VfSettings> pf_current;
  if (!groups.empty() && pf_reachable) {
    auto cur = ctx.vf.Get(vf->pf_netdev, vf->vf_index);
    if (cur.ok()) {
      pf_current = *cur;
      for (const auto& g : groups) state.pf_original.MergeFrom(OriginalOf(*cur, g.wanted));
    } else if (!cur.status().IsNotFound() || beyond_mac) {
      return Summarize(cur.status(), "cannot read VF " + std::to_string(vf->vf_index) + " of PF " +
                                         vf->pf_netdev);
    }
  }
  // Each step registers its undo before it changes anything: an undo acts on the identity
  // of what its step changes and finds nothing to do when the step never happened, so a
  // step that fails halfway is undone too.
  UndoStack undo;
  // Set when the undo of a rebind cannot bind the VF again: the state and the owner marker
  // are then kept, so that DEL or `hcashare cni-gc` binds it (the state has its driver).
  bool keep_state = false;
  undo.Push("state file", [&]() -> Status {
    if (keep_state) return Status::Ok();
    return ctx.store.Remove(env.container_id, env.ifname);
  });
  if (Status st = ctx.store.Save(state); !st.ok()) return StateError(st, "cannot save state");
  HCASHARE_FAULT_POINT("add:state-saved");
  undo.Push("owner marker", [&]() -> Status {
    if (keep_state) return Status::Ok();
    return ctx.store.ReleaseOwner(device, env.container_id, env.ifname);
  });
  if (Status st = ctx.store.SetOwner(device, state.owner); !st.ok()) {
    return StateError(st, "cannot mark the device as owned");
  }
  HCASHARE_FAULT_POINT("add:owner-marked");

  // 1. PF side, one group at a time (a PF that does not report the VF gets no admin MAC).
  // GUIDs take effect when the VF's driver is next bound: once it was rebound, their undo
  // rebinds it too.
  bool rebound = false;
  for (const auto& g : groups) {
    if (!pf_current) break;
    const VfSettings original = OriginalOf(*pf_current, g.wanted);
    const bool is_guid = std::string(g.name) == "guid";
    undo.Push(std::string("PF ") + g.name, [&, original, is_guid]() -> Status {
      Status set = ctx.vf.Set(state.pf_netdev, state.vf_index, original);
      if (!is_guid || !rebound) return set;
      // Also when the rebind stopped between its unbind and its bind: this binds it.
      if (Status again = RebindVf(state, ctx, ""); !again.ok()) {
        keep_state = true;
        return again;
      }
      return set;
    });
    if (Status st = ctx.vf.Set(vf->pf_netdev, vf->vf_index, g.wanted); !st.ok()) {
      return Summarize(st, std::string("cannot set ") + g.name + " of VF " +
                               std::to_string(vf->vf_index) + " on PF " + vf->pf_netdev);
    }
    state.steps.push_back(std::string("pf:") + g.name);
    (void)ctx.store.Save(state);
    HCASHARE_FAULT_POINT("add:pf-set");
  }
  if (guid && !dpdk) {
    // 1b. mlx5 reads the new GUIDs when the VF's driver is bound again; the rebind makes
    // a new netdev and RDMA device, found again by the VF's PCI address.
    // `rebound` once the VF was unbound: a rebind refused before that changed nothing.
    if (Status st = RebindVf(state, ctx, "add:vf-unbound", &rebound); !st.ok()) {
      return Summarize(st, "cannot rebind " + device + " to apply its GUID");
    }
    auto again = ResolveVf(ctx.host, device, is_aux);
    if (!again.ok()) {
      return Summarize(again.status(), "cannot find " + device + " after its rebind");
    }
    *vf = std::move(again).value();
    ASSIGN_OR_RETURN(state.rdma_device, PlanRdmaMove(conf.rdma, *vf, ctx.rdma));
    auto link = ctx.netdev.Get(state.host_ifname);
    if (!link.ok()) {
      return Summarize(link.status(), "cannot read netdev " + state.host_ifname + " of " + device +
                                          " after its rebind");
    }
    // The IPoIB hardware address holds the GUID: the host's is the new one from now on.
    state.host_mac = link->mac;
    state.host_ifindex = link->ifindex;
    if (!mac) state.pod_mac = link->mac;
    (void)ctx.store.Save(state);
    HCASHARE_FAULT_POINT("add:vf-rebound");
  }

  CniResult result;
  ResultInterface iface;
  iface.name = env.ifname;
  iface.sandbox = env.netns;
  if (!vf->is_sf) iface.pci_id = device;
  if (found.gpu) iface.gpu_affinity = DescribeGpuMatch(*found.gpu);
  if (!dpdk) {
    // 2. The netdev: into the pod, renamed, with its MAC and MTU, and up, in one request.
    LinkChanges into_pod;
    into_pod.name = env.ifname;
    into_pod.mac = mac;
    if (conf.mtu) into_pod.mtu = static_cast<uint32_t>(*conf.mtu);
    into_pod.up = true;
    undo.Push("netdev into the pod", [&]() -> Status {
      Status back = ReturnToHost(state, *pod, *host, ctx.netdev);
      return back.IsNotFound() ? Status::Ok() : back;  // it never left the host
    });
    if (Status st = ctx.netdev.MoveAndChange(state.host_ifindex, *pod, into_pod); !st.ok()) {
      return Summarize(st, "cannot move " + vf->netdev + " into the pod as " + env.ifname);
    }
    HCASHARE_FAULT_POINT("add:netdev-moved");
    Status st = InNetns(*pod, [&]() -> Status {
      ASSIGN_OR_RETURN(hcashare::LinkState now, FindAttachedLink(ctx.netdev, state));
      if (now.name != env.ifname) {
        return Status::FailedPrecondition(vf->netdev + " is " + now.name + " in the pod, not " +
                                          env.ifname);
      }
      if (mac && now.mac != *mac) {
        return Status::FailedPrecondition("MAC of " + env.ifname + " reads back as " + now.mac +
                                          ", not " + *mac);
      }
      state.pod_ifindex = now.ifindex;
      iface.mac = now.mac;
      iface.mtu = now.mtu;
      return Status::Ok();
    });
    if (!st.ok()) return Summarize(st, "cannot configure " + env.ifname + " in the pod");
    state.steps.push_back("netdev");
    (void)ctx.store.Save(state);
    HCASHARE_FAULT_POINT("add:netdev-saved");
  }
  result.interfaces.push_back(iface);

  // 3. The RDMA device, after the netdev (DEL returns it first).
  if (!state.rdma_device.empty()) {
    undo.Push("RDMA device into the pod",
              [&] { return ReturnRdmaToHost(state, *pod, *host, ctx.rdma); });
    if (Status st = ctx.rdma.MoveToNetns(state.rdma_device, pod->fd()); !st.ok()) {
      return Summarize(st, "cannot move RDMA device " + state.rdma_device + " into the pod");
    }
    state.steps.push_back("rdma");
    (void)ctx.store.Save(state);
    HCASHARE_FAULT_POINT("add:rdma-moved");
  }

  // 4. The Multus device-info file, when the runtime asked for one.
  if (!state.device_info_file.empty()) {
    undo.Push("device-info file", [&] { return RemoveIfExists(state.device_info_file); });
    if (Status st = WriteDeviceInfo(state.device_info_file, device, vf->rdma_devices, vf->pf_pci);
        !st.ok()) {
      return Summarize(st, "cannot write the device-info file");
    }
    HCASHARE_FAULT_POINT("add:device-info-written");
  }

  // 5. IPAM (a DPDK VF has no interface: its addresses are reported, not applied).
  return FinishAdd(env, conf, ctx, *pod, /*apply_ipam=*/!dpdk, &state, std::move(result), &undo);
}

}  // namespace hcashare::cni
