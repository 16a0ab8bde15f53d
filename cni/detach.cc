#include <chrono>
#include <optional>

#include "cni/attach.h"
#include "cni/child_link.h"
#include "cni/error.h"
#include "cni/fault_points.h"
#include "cni/ipam.h"
#include "cni/link_identity.h"
#include "cni/steps.h"
#include "cni/vf_rebind.h"
#include "common/log.h"
#include "common/netns.h"
#include "interop/dra_network_status.h"
#include "json/dump.h"

namespace hcashare::cni {
namespace {

// How long DEL waits for the kernel to hand a VF back from a pod namespace that is gone
// (the namespace is torn down asynchronously, usually within milliseconds).
constexpr std::chrono::milliseconds kNetdevReturnWait{3000};

// The pod namespace of `state`: the path ADD recorded, else CNI_NETNS; when ADD recorded
// the namespace's inode, only a namespace with that inode (a path reused for another
// namespace is not the pod's). std::nullopt when the namespace is gone.
std::optional<Netns> OpenAttachedNetns(const AttachmentState& state, const CniEnv& env) {
  for (const std::string& path : {state.owner.netns, env.netns}) {
    if (path.empty()) continue;
    auto opened = Netns::Open(path);
    if (!opened.ok()) continue;
    if (state.netns_ino != 0 && opened->Inode() != state.netns_ino) continue;
    return std::move(opened).value();
  }
  return std::nullopt;
}

// DEL of a macvlan/IPoIB child: delete it (found by identity) and release IPAM. A
// namespace that is gone took the child along.
template <typename IpamDel>
Status DelChildLink(const CniEnv& env, const AttachmentState& state,
                    const std::optional<Netns>& pod, const AttachContext& ctx,
                    const IpamDel& ipam_del) {
  if (pod) {
    Status st = InNetns(*pod, [&]() -> Status {
      auto ours = FindChildLink(ctx.netdev, state);
      if (!ours.ok()) return ours.status();
      return ctx.netdev.Delete(ours->name);
    });
    if (!st.ok() && !st.IsNotFound()) return Summarize(st, "cannot delete " + env.ifname);
    HCASHARE_FAULT_POINT("del:child-deleted");
  }
  RETURN_IF_ERROR(ipam_del(state.netconf));
  HCASHARE_FAULT_POINT("del:ipam-released");
  if (Status st = ctx.store.Remove(env.container_id, env.ifname); !st.ok()) {
    return StateError(st, "cannot remove the state file");
  }
  HCASHARE_FAULT_POINT("del:state-removed");
  LogInfo("detached", {{"child", env.ifname}, {"master", state.device}});
  return Status::Ok();
}

}  // namespace

Status CmdDel(const CniEnv& env, const NetConf& conf, const AttachContext& ctx) {
  auto ipam_del = [&](const nlohmann::json& netconf) -> Status {
    if (!conf.ipam) return Status::Ok();
    return RunIpam(env, "DEL", netconf.is_null() ? conf.raw : netconf, conf.ipam_type).status();
  };
  auto loaded = ctx.store.Load(env.container_id, env.ifname);
  if (!loaded.ok()) {
    if (!loaded.status().IsNotFound()) return StateError(loaded.status(), "cannot read state");
    LogDebug("DEL without state: releasing IPAM only",
             {{"container", env.container_id}, {"ifname", env.ifname}});
    return ipam_del(nlohmann::json());
  }
  AttachmentState state = std::move(loaded).value();
  // The namespace ADD put the device in, wherever the runtime says it is now (CNI_NETNS
  // may be empty on DEL); std::nullopt when it is gone.
  std::optional<Netns> pod = OpenAttachedNetns(state, env);
  if (state.child_link) return DelChildLink(env, state, pod, ctx, ipam_del);

  auto lock = ctx.store.Lock(state.device, ctx.lock_wait);
  if (!lock.ok()) return StateError(lock.status(), "cannot lock device " + state.device);
  auto host = Netns::Current();
  if (!host.ok()) return Summarize(host.status(), "cannot open the host network namespace");

  // A rebind that failed or was killed (ADD's or an earlier DEL's) may have left the VF
  // bound to no driver, its netdev and RDMA device gone: bind it first; its new netdev is
  // then in the host, under its host name again.
  bool netdev_home = false;
  if (MayNeedRebindRepair(state)) {
    auto repaired = RepairRebindingVf(state, ctx);
    if (!repaired.ok()) {
      return Summarize(repaired.status(), "cannot bind " + state.device + " to its driver again");
    }
    netdev_home = *repaired;
  }

  // In the reverse order of ADD, while the pod's namespace still exists: the RDMA device,
  // then the netdev. A namespace that is gone has returned both to the host already.
  // Both are looked for whenever the state names them, not only when its steps record the
  // move: an ADD killed between the move and the next state write left them in the pod.
  if (pod && !state.rdma_device.empty()) {
    if (Status st = ReturnRdmaToHost(state, *pod, *host, ctx.rdma); !st.ok()) {
      return Summarize(st, "cannot return RDMA device " + state.rdma_device + " to the host");
    }
    HCASHARE_FAULT_POINT("del:rdma-returned");
  }
  if (netdev_home) {
    LogInfo("the VF's netdev is in the host namespace", {{"device", state.device}});
  } else if (pod && !state.host_ifname.empty()) {
    Status st = ReturnToHost(state, *pod, *host, ctx.netdev);
    if (!st.ok() && !st.IsNotFound()) {
      return Summarize(st, "cannot return " + env.ifname + " to the host");
    }
    // Forget the attachment only once its netdev is back: not in the pod (by identity)
    // is not enough while the pod lives.
    auto back = BackOnHost(state, ctx.netdev);
    if (!back.ok()) return Summarize(back.status(), "cannot list the host's interfaces");
    if (!*back) {
      return CniStatus(kErrHostSetupFailed,
                       "the netdev of " + state.device + " is neither in the host nor in the pod",
                       "it is not in " + state.owner.netns + " under any name, and " +
                           state.host_ifname +
                           " is not back in the host; the attachment is kept so that DEL can "
                           "be retried once it is found (was it moved to another namespace?)");
    }
    HCASHARE_FAULT_POINT("del:netdev-returned");
  } else if (!state.host_ifname.empty()) {
    LogInfo("pod network namespace is gone; the kernel returns its interface to the host",
            {{"device", state.device}, {"netns", state.owner.netns}});
    if (Status st = RestoreReturnedNetdev(state, ctx.host, ctx.netdev, kNetdevReturnWait);
        !st.ok()) {
      return Summarize(st, "cannot restore the netdev of " + state.device);
    }
  }
  RETURN_IF_ERROR(ipam_del(state.netconf));
  HCASHARE_FAULT_POINT("del:ipam-released");
  if (Status st = RestorePf(state, ctx.vf); !st.ok()) {
    return Summarize(st, "cannot restore the PF-side settings of " + state.device);
  }
  HCASHARE_FAULT_POINT("del:pf-restored");
  // Restored GUIDs take effect when the VF's driver is bound again. ADD may have rebound it
  // with the new ones before it recorded that, so whenever it set them.
  if (state.Done("pf:guid") && !state.dpdk) {
    if (Status st = RebindVf(state, ctx, "del:vf-unbound"); !st.ok()) {
      return Summarize(st, "cannot rebind " + state.device + " to restore its GUID");
    }
    HCASHARE_FAULT_POINT("del:vf-rebound");
  }
  if (!state.device_info_file.empty() &&
      !IsDeviceInfoFileIn(state.device_info_file, conf.node.device_info_dir)) {
    // Recorded by a version that took any path: never removed outside the directory.
    LogWarn("the device-info file is not in this node's device-info directory: left alone",
            {{"file", state.device_info_file}, {"dir", conf.node.device_info_dir}});
  } else if (!state.device_info_file.empty()) {
    if (Status st = RemoveIfExists(state.device_info_file); !st.ok()) {
      return Summarize(st, "cannot remove the device-info file");
    }
    HCASHARE_FAULT_POINT("del:device-info-removed");
  }
  if (!state.dra_status_file.empty()) {
    // Only a file of this node's network status directory (the state is root's, yet the
    // path is checked as the device-info file's is).
    const std::string dir = dra::NetworkStatusDir(conf.node.kubelet_root_dir, conf.node.dra_driver);
    if (!IsDeviceInfoFileIn(state.dra_status_file, dir)) {
      LogWarn("the DRA network status file is not in this node's directory: left alone",
              {{"file", state.dra_status_file}, {"dir", dir}});
    } else if (Status st = RemoveIfExists(state.dra_status_file); !st.ok()) {
      return Summarize(st, "cannot remove the DRA network status file");
    }
    HCASHARE_FAULT_POINT("del:dra-status-removed");
  }
  if (Status st = ctx.store.ReleaseOwner(state.device, env.container_id, env.ifname); !st.ok()) {
    return StateError(st, "cannot remove the owner marker");
  }
  HCASHARE_FAULT_POINT("del:owner-released");
  if (Status st = ctx.store.Remove(env.container_id, env.ifname); !st.ok()) {
    return StateError(st, "cannot remove the state file");
  }
  HCASHARE_FAULT_POINT("del:state-removed");
  LogInfo("detached", {{"device", state.device}, {"ifname", env.ifname}});
  return Status::Ok();
}

Status CmdDelRecorded(const CniEnv& env, const NetConf& conf, const AttachContext& ctx,
                      const AttachmentState& state) {
  CniEnv del = env;
  del.verb = Verb::kDel;
  del.command = "DEL";
  del.container_id = state.owner.container_id;
  del.ifname = state.owner.ifname;
  del.netns = state.owner.netns;
  Result<NetConf> recorded = ParseNetConf(DumpJson(state.netconf), Verb::kDel, conf.node);
  if (!recorded.ok()) {
    LogWarn("the attachment's recorded configuration cannot be read; using the caller's",
            {{"container", del.container_id},
             {"ifname", del.ifname},
             {"error", recorded.status().message()}});
  }
  return CmdDel(del, recorded.ok() ? *recorded : conf, ctx);
}

Status CmdDelWithInvalidConf(const CniEnv& env, const NodeSettings& node, const Status& invalid,
                             const AttachContext& ctx) {
  const CniError why = FromStatus(invalid);
  NetConf fallback;  // when a record's own configuration cannot be read either
  fallback.node = node;
  Status first;
  size_t undone = 0;
  for (const AttachmentState& state : ctx.store.List()) {
    if (state.owner.container_id != env.container_id ||
        (state.owner.ifname != env.ifname && state.owner.chained_by != env.ifname)) {
      continue;
    }
    LogWarn(
        "the network configuration no longer validates; DEL undoes the attachment as ADD "
        "recorded it",
        {{"container", env.container_id},
         {"ifname", state.owner.ifname},
         {"error", why.msg + ": " + why.details}});
    Status st = CmdDelRecorded(env, fallback, ctx, state);
    if (!st.ok() && first.ok()) first = st;
    ++undone;
  }
  if (undone == 0) {
    LogWarn(
        "the network configuration no longer validates and nothing is recorded for it; "
        "DEL has nothing to undo",
        {{"container", env.container_id},
         {"ifname", env.ifname},
         {"error", why.msg + ": " + why.details}});
  }
  return first;
}

}  // namespace hcashare::cni
