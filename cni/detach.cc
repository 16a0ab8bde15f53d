#include <chrono>
#include <optional>

#include "cni/attach.h"
#include "cni/crash_points.h"
#include "cni/ipam.h"
#include "cni/steps.h"
#include "common/log.h"
#include "common/netns.h"

namespace hcashare::cni {
namespace {

// How long DEL waits for the kernel to hand a VF back from a pod namespace that is gone
// (the namespace is torn down asynchronously, usually within milliseconds).
constexpr std::chrono::milliseconds kNetdevReturnWait{3000};

}  // namespace

MaybeError CmdDel(const CniEnv& env, const NetConf& conf, const AttachContext& ctx) {
  auto ipam_del = [&](const nlohmann::json& netconf) -> MaybeError {
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
    return ipam_del(nlohmann::json());
  }
  AttachmentState state = std::move(loaded).value();
  if (state.child_link) {
    // Deleting the child link is all there is (a namespace that is gone took it along).
    if (!env.netns.empty()) {
      if (auto pod = Netns::Open(env.netns); pod.ok()) {
        Status st = InNetns(*pod, [&] { return ctx.netdev.Delete(env.ifname); });
        if (!st.ok() && !st.IsNotFound()) return FromStatus(st, "cannot delete " + env.ifname);
      }
    }
    if (MaybeError e = ipam_del(state.netconf)) return e;
    if (Status st = ctx.store.Remove(env.container_id, env.ifname); !st.ok()) {
      return FromStatus(st, "cannot remove the state file");
    }
    LogInfo("detached", {{"child", env.ifname}, {"master", state.device}});
    return std::nullopt;
  }
  auto lock = ctx.store.Lock(state.device, ctx.lock_wait);
  if (!lock.ok()) return CniError{kErrTryAgainLater, lock.status().message(), ""};
  auto host = Netns::Current();
  if (!host.ok()) return FromStatus(host.status(), "cannot open the host network namespace");

  // In the reverse order of ADD, while the pod's namespace still exists: the RDMA device,
  // then the netdev. A namespace that is gone has returned both to the host already.
  // Both are looked for whenever the state names them, not only when its steps record the
  // move: an ADD killed between the move and the next state write left them in the pod.
  std::optional<Netns> pod;
  if (!env.netns.empty()) {
    auto opened = Netns::Open(env.netns);
    if (opened.ok()) pod = std::move(opened).value();
  }
  if (pod && !state.rdma_device.empty()) {
    if (Status st = ReturnRdmaToHost(state, *pod, *host, ctx.rdma); !st.ok()) {
      return FromStatus(st, "cannot return RDMA device " + state.rdma_device + " to the host");
    }
    CrashPoint("del:rdma-returned");
  }
  if (pod && !state.host_ifname.empty()) {
    Status st = ReturnToHost(state, env.ifname, *pod, *host, ctx.netdev);
    if (!st.ok() && !st.IsNotFound()) {
      return FromStatus(st, "cannot return " + env.ifname + " to the host");
    }
    CrashPoint("del:netdev-returned");
  } else if (state.Done("netdev") && !state.host_ifname.empty()) {
    LogInfo("pod network namespace is gone; the kernel returns its interface to the host",
            {{"device", state.device}, {"netns", env.netns}});
    if (Status st = RestoreReturnedNetdev(state, ctx.host, ctx.netdev, kNetdevReturnWait);
        !st.ok()) {
      return FromStatus(st, "cannot restore the netdev of " + state.device);
    }
  }
  if (MaybeError e = ipam_del(state.netconf)) return e;
  CrashPoint("del:ipam-released");
  if (Status st = RestorePf(state, ctx.vf); !st.ok()) {
    return FromStatus(st, "cannot restore the PF-side settings of " + state.device);
  }
  CrashPoint("del:pf-restored");
  if (!state.device_info_file.empty()) {
    if (Status st = RemoveIfExists(state.device_info_file); !st.ok()) {
      return FromStatus(st, "cannot remove the device-info file");
    }
    CrashPoint("del:device-info-removed");
  }
  if (Status st = ctx.store.ReleaseOwner(state.device, env.container_id, env.ifname); !st.ok()) {
    return FromStatus(st, "cannot remove the owner marker");
  }
  CrashPoint("del:owner-released");
  if (Status st = ctx.store.Remove(env.container_id, env.ifname); !st.ok()) {
    return FromStatus(st, "cannot remove the state file");
  }
  CrashPoint("del:state-removed");
  LogInfo("detached", {{"device", state.device}, {"ifname", env.ifname}});
  return std::nullopt;
}

}  // namespace hcashare::cni
