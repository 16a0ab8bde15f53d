#include "cni/child_link.h"

#include <algorithm>
#include <set>

#include "cni/allocation.h"
#include "cni/error.h"
#include "cni/fault_points.h"
#include "cni/gpu_affinity.h"
#include "cni/link_identity.h"
#include "cni/steps.h"
#include "common/log.h"
#include "common/netns.h"
#include "common/safe_file.h"
#include "common/strings.h"

namespace hcashare::cni {

namespace {

// The description hcashare-device-plugin published of shared pool `resource`.
Result<PoolInfo> ReadPoolDescription(const NetConf& conf, const std::string& resource) {
  const std::string path = conf.node.pool_info_dir + "/" + PoolInfoFileName(resource);
  // The device-plugin pod (unprivileged) writes this directory: whatever it put there is
  // read as a bounded regular file or not at all.
  SafeReadOptions read;
  read.max_bytes = kMaxPoolInfoBytes;
  read.beneath = conf.node.pool_info_dir;
  read.what = "pool description";
  auto text = ReadFileSafely(path, read);
  if (text.status().IsNotFound()) {
    return CniStatus(kErrDeviceNotFound, "no description of pool " + resource,
                     path + " is missing; is hcashare-device-plugin running with --pool-info-dir " +
                         conf.node.pool_info_dir + " and does it serve " + resource + "?");
  }
  if (!text.ok()) {
    return CniStatus(kErrIo, "cannot read the description of pool " + resource,
                     text.status().message() + "; nothing was changed");
  }
  auto info = ParsePoolInfo(*text);
  if (!info.ok()) {
    return CniStatus(kErrIo, "cannot read the description of pool " + resource,
                     path + ": " + info.status().message());
  }
  return info;
}

// With the allocation check: an error unless the pod holds `resource` and `master` (when
// the configuration names it) is a netdev of one of its pool's HCAs. A network may not put
// a child of any other host netdev (the node's uplink, another tenant's HCA) into the pod.
Status CheckChildLinkAllowed(const CniEnv& env, const NetConf& conf, const AttachContext& ctx) {
  if (!conf.node.check_allocation) return Status::Ok();
  if (!conf.resource_name) {
    return CniStatus(kErrInvalidNetConf, "\"master\" needs \"resourceName\" on this node",
                     "a child link is for pods of a shared resource: name it in resourceName, so "
                     "that the plugin can check that the pod holds the pool and that " +
                         conf.master.value_or("") + " is one of its HCAs");
  }
  const std::string& resource = *conf.resource_name;
  RETURN_IF_ERROR(CheckResourceAllocatedToPod(env, conf, ctx, resource));
  if (!conf.master) return Status::Ok();  // ChoosePoolNetdev picks among the pool's HCAs
  ASSIGN_OR_RETURN(const PoolInfo info, ReadPoolDescription(conf, resource));
  std::vector<std::string> netdevs;
  for (const auto& h : info.hcas) {
    for (const auto& n : h.netdevs) {
      if (n == *conf.master) return Status::Ok();
      netdevs.push_back(n);
    }
  }
  return CniStatus(kErrInvalidNetConf,
                   "master " + *conf.master + " is not an HCA netdev of pool " + resource,
                   "the pool's HCAs have " + (netdevs.empty() ? "no netdevs" : Join(netdevs)) +
                       "; name one of them, or leave master out to let the plugin choose");
}

}  // namespace

Result<PoolChoice> ChoosePoolNetdev(const NetConf& conf, const AttachContext& ctx,
                                    const std::string& resource) {
  ASSIGN_OR_RETURN(const PoolInfo loaded, ReadPoolDescription(conf, resource));
  const PoolInfo* info = &loaded;
  const std::string path = conf.node.pool_info_dir + "/" + PoolInfoFileName(resource);
  // The pod's devices: the NUMA nodes of the IDs it was granted (topology-aware pools),
  // and its GPUs.
  std::set<int> nodes;
  std::optional<PodGpuView> gpus;
  // Without topology or GPU resources to look for, the kubelet is not asked.
  if (ctx.pod_devices && (!info->id_numa.empty() || !conf.gpu_resources.empty())) {
    auto granted = ctx.pod_devices();
    if (granted.ok()) {
      auto it = granted->by_resource.find(resource);
      if (it != granted->by_resource.end()) {
        for (const auto& id : it->second) {
          if (auto n = info->id_numa.find(id); n != info->id_numa.end()) nodes.insert(n->second);
        }
      }
      gpus = ReadPodGpus(conf, ctx, *granted);
    } else {
      LogWarn("cannot look up the pod's devices; picking any pool HCA",
              {{"resource", resource}, {"error", granted.status().message()}});
    }
  }
  // Healthy HCAs with a netdev, those on the granted IDs' NUMA nodes first.
  std::vector<const PoolInfoHca*> usable;
  for (const auto& h : info->hcas) {
    if (h.healthy && !h.netdevs.empty()) usable.push_back(&h);
  }
  std::stable_partition(usable.begin(), usable.end(),
                        [&](const PoolInfoHca* h) { return nodes.count(h->numa) > 0; });
  if (usable.empty()) {
    return CniStatus(kErrDeviceNotFound, "pool " + resource + " has no healthy HCA with a netdev",
                     path);
  }
  PoolChoice choice{usable.front()->netdevs.front(), std::nullopt};
  if (gpus) {
    // The nearest to the pod's GPUs by path class; NUMA, then pool order, break ties.
    std::vector<std::string> pcis;
    for (const PoolInfoHca* h : usable) pcis.push_back(h->pci);
    if (auto match = topo::NearestToGpus(gpus->distances, gpus->gpus.gpus, pcis)) {
      const size_t at = std::find(pcis.begin(), pcis.end(), match->device) - pcis.begin();
      choice = {usable[at]->netdevs.front(), std::move(match)};
    }
  }
  return choice;
}

Result<nlohmann::json> AddChildLink(const CniEnv& env, const NetConf& conf,
                                    const AttachContext& ctx) {
  auto pod = Netns::Open(env.netns);
  if (!pod.ok()) {
    return CniStatus(kErrUnknownContainer, "cannot open CNI_NETNS", pod.status().message());
  }
  ASSIGN_OR_RETURN(const std::optional<std::string> mac, SelectMac(conf, env.cni_args));
  ASSIGN_OR_RETURN(const std::optional<std::string> guid, SelectGuid(conf, env.cni_args));
  if (PfGroups(conf, mac, guid).size() > (mac ? 1u : 0u)) {
    return CniStatus(kErrInvalidNetConf, "PF-side VF settings do not apply to a child link",
                     "remove vlan, spoofchk, trust, link_state, the tx rates and guid");
  }
  RETURN_IF_ERROR(CheckChildLinkAllowed(env, conf, ctx));
  std::string master = conf.master.value_or("");
  std::optional<topo::GpuMatch> gpu;
  if (master.empty()) {
    ASSIGN_OR_RETURN(PoolChoice choice,
                     ChoosePoolNetdev(conf, ctx, conf.resource_name.value_or("")));
    master = std::move(choice.netdev);
    gpu = std::move(choice.gpu);
  }
  if (gpu) {
    LogInfo("chose the pool HCA nearest the pod's GPU", {{"master", master},
                                                         {"hca", gpu->device},
                                                         {"gpu", gpu->gpu.uuid},
                                                         {"gpu_pci", gpu->gpu.address},
                                                         {"path", topo::PathTypeName(gpu->path)}});
  }
  auto lower = ctx.netdev.Get(master);
  if (!lower.ok()) {
    return CniStatus(kErrDeviceNotFound, "master netdev " + master + " not found",
                     lower.status().message());
  }
  RETURN_IF_ERROR(CheckIfnameFree(env, *pod, ctx.netdev));
  if (ctx.store.Load(env.container_id, env.ifname).ok()) {
    return CniStatus(kErrDeviceBusy,
                     "attachment " + env.container_id + "/" + env.ifname + " already exists",
                     "run DEL first");
  }
  // Everything checked, nothing changed yet (see CmdAdd).
  ASSIGN_OR_RETURN(const AddRunning running, MarkRunning(env, ctx));
  AttachmentState state;
  state.owner = {env.container_id, env.ifname,  env.netns,
                 env.PodUid(),     PodKey(env), conf.resource_name.value_or(""),
                 ctx.chained_by};
  state.device = master;
  state.host_ifindex = lower->ifindex;  // the child's lower device: part of its identity
  state.netns_ino = pod->Inode();
  state.child_link = true;
  state.netconf = conf.raw;
  UndoStack undo;
  undo.Push("state file", [&] { return ctx.store.Remove(env.container_id, env.ifname); });
  if (Status st = ctx.store.Save(state); !st.ok()) return StateError(st, "cannot save state");
  HCASHARE_FAULT_POINT("add:state-saved");

  const bool ipoib = conf.mode == AttachMode::kIpoib;
  undo.Push("child link", [&] {
    return InNetns(*pod, [&]() -> Status {
      auto ours = FindChildLink(ctx.netdev, state);
      if (!ours.ok()) return ours.status().IsNotFound() ? Status::Ok() : ours.status();
      return ctx.netdev.Delete(ours->name);
    });
  });
  Status created = ipoib ? ctx.netdev.CreateIpoibChild(master, env.ifname, conf.pkey, *pod)
                         : ctx.netdev.CreateMacvlan(master, env.ifname, *pod);
  if (!created.ok()) {
    return Summarize(created, std::string("cannot create ") +
                                  (ipoib ? "an IPoIB child" : "a macvlan") + " of " + master +
                                  " in the pod");
  }
  ResultInterface iface;
  iface.name = env.ifname;
  iface.sandbox = env.netns;
  if (gpu) iface.gpu_affinity = DescribeGpuMatch(*gpu);
  Status st = InNetns(*pod, [&]() -> Status {
    ASSIGN_OR_RETURN(hcashare::LinkState child, FindChildLink(ctx.netdev, state));
    state.pod_ifindex = child.ifindex;
    if (mac) RETURN_IF_ERROR(ctx.netdev.SetMac(env.ifname, *mac));
    if (conf.mtu) RETURN_IF_ERROR(ctx.netdev.SetMtu(env.ifname, static_cast<uint32_t>(*conf.mtu)));
    RETURN_IF_ERROR(ctx.netdev.SetUp(env.ifname, true));
    auto now = ctx.netdev.Get(env.ifname);
    if (!now.ok()) return now.status();
    iface.mac = now->mac;
    iface.mtu = now->mtu;
    return Status::Ok();
  });
  if (!st.ok()) return Summarize(st, "cannot configure " + env.ifname + " in the pod");
  state.pod_mac = iface.mac;
  state.steps.push_back("netdev");
  (void)ctx.store.Save(state);
  HCASHARE_FAULT_POINT("add:child-created");
  CniResult result;
  result.interfaces.push_back(iface);
  return FinishAdd(env, conf, ctx, *pod, /*apply_ipam=*/true, &state, std::move(result), &undo);
}

}  // namespace hcashare::cni
