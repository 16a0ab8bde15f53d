#include "cni/dra_chain.h"

#include <set>

#include "cni/dra_status.h"
#include "cni/error.h"
#include "cni/result.h"
#include "cni/steps.h"
#include "cni/vf.h"
#include "common/log.h"
#include "common/strings.h"
#include "hostfacts/live.h"
#include "json/dump.h"

namespace hcashare::cni {
namespace {

using json = nlohmann::json;

const char* RdmaModeName(RdmaMode mode) {
  switch (mode) {
    case RdmaMode::kMove:
      return "move";
    case RdmaMode::kOff:
      return "off";
    case RdmaMode::kAuto:
      break;
  }
  return "auto";
}

// The invocation's environment for one device's attachment named `ifname`. CNI_ARGS' MAC
// and GUID are the runtime's for the default network's interface (CRI-O passes a pod's
// requested MAC), never for the claim's devices.
CniEnv ForDevice(const CniEnv& env, const std::string& ifname) {
  CniEnv out = env;
  out.ifname = ifname;
  out.cni_args.erase(std::string(kArgMac));
  out.cni_args.erase(std::string(kArgGuid));
  return out;
}

// The attachments the DRA step made for (container, chain ifname).
std::vector<AttachmentState> ChainedStates(const CniEnv& env, const AttachContext& ctx) {
  std::vector<AttachmentState> out;
  for (AttachmentState& s : ctx.store.List()) {
    if (s.owner.container_id == env.container_id && s.owner.chained_by == env.ifname) {
      out.push_back(std::move(s));
    }
  }
  return out;
}

// The network configuration of one device's attachment: what CmdAdd reads, and what DEL,
// CHECK and GC later read back from its state.
Result<NetConf> DeviceConf(const NetConf& conf, const dra::PreparedDevice& d) {
  json sub = {{"cniVersion", conf.cni_version},
              {"name", conf.name},
              {"type", conf.type},
              {"deviceID", d.pci_address},
              {"rdma", RdmaModeName(conf.rdma)}};
  const int mtu = d.mtu != 0 ? d.mtu : conf.mtu.value_or(0);
  if (mtu != 0) sub["mtu"] = mtu;
  // The claim's addresses through the reference `static` IPAM plugin, else the step's IPAM.
  if (!d.addresses.empty()) {
    json addresses = json::array();
    for (const std::string& a : d.addresses) addresses.push_back({{"address", a}});
    sub["ipam"] = {{"type", "static"}, {"addresses", addresses}};
  } else if (conf.ipam) {
    sub["ipam"] = *conf.ipam;
  }
  if (auto level = conf.raw.find("logLevel"); level != conf.raw.end()) sub["logLevel"] = *level;
  return ParseNetConf(DumpJson(sub), Verb::kAdd, conf.node);
}

// Why device `d` is not one to move into the pod ("" when it is), from what sysfs says.
std::string NotMoved(const dra::PreparedDevice& d, bool is_aux, const Result<VfDevice>& vf,
                     const Host& host) {
  if (d.share_id) return "a share of a device (consumable capacity): shared, not moved";
  const std::string dir = hostfacts::DeviceDir(hostfacts::PciOrAux(d.pci_address, is_aux));
  if (!vf.ok() && !is_aux && host.Exists(dir) && !host.Exists(dir + "/physfn")) {
    return "not a VF (a shared HCA: its RDMA device reaches the pod through CDI)";
  }
  // A virtual RDMA device (Soft-RoCE) is the driver's device ID: no function to move, and
  // rxe cannot change namespace (the kernel unregisters it when its netdev leaves).
  if (!vf.ok() && is_aux && !host.Exists(dir) &&
      host.Exists("/sys/class/infiniband/" + d.pci_address)) {
    return "a virtual RDMA device (Soft-RoCE): no function to move; its char devices reach the "
           "pod through CDI";
  }
  if (vf.ok() && vf->dpdk) return "bound to a userspace driver: no netdev to move";
  return "";
}

}  // namespace

bool IsHandedOver(const DeviceOwner& owner, const CniEnv& env) {
  return !owner.chained_by.empty() && owner.container_id == env.container_id &&
         owner.ifname != env.ifname;
}

Status TakeOverFromDraStep(const CniEnv& env, const NetConf& conf, const AttachContext& ctx,
                           const std::string& device) {
  if (!ctx.chained_by.empty()) return Status::Ok();  // the DRA step itself
  std::optional<DeviceOwner> owner = ctx.store.OwnerOf(device);
  if (!owner || IsStale(*owner) || !IsHandedOver(*owner, env)) return Status::Ok();
  Result<AttachmentState> state = ctx.store.Load(owner->container_id, owner->ifname);
  if (!state.ok()) {
    return StateError(state.status(), "cannot read the DRA step's attachment of " + device);
  }
  LogInfo("a network of the pod takes over a device its DRA step attached",
          {{"device", device}, {"from", owner->ifname}, {"to", env.ifname}});
  return CmdDelRecorded(env, conf, ctx, *state);
}

Result<json> CmdAddDraClaims(const CniEnv& env, const NetConf& conf, const AttachContext& ctx) {
  CniResult merged;
  if (conf.prev_result) {
    Result<CniResult> prev = ParseResult(*conf.prev_result);
    if (!prev.ok()) return prev.status();
    merged = std::move(prev).value();
  }
  if (!ctx.pod_dra_devices) return CniStatus(kErrInternal, "no DRA device lookup configured");
  auto devices = ctx.pod_dra_devices();
  if (!devices.ok()) {
    return Summarize(devices.status(), "cannot look up the DRA devices of pod " + PodKey(env));
  }
  std::vector<std::string> attached;  // interface names, in order
  auto undo_all = [&] {
    for (auto it = attached.rbegin(); it != attached.rend(); ++it) {
      Result<AttachmentState> state = ctx.store.Load(env.container_id, *it);
      Status st = state.ok() ? CmdDelRecorded(env, conf, ctx, *state) : state.status();
      if (!st.ok()) {
        LogError("cannot undo a DRA device's attachment (DEL retries it)",
                 {{"ifname", *it}, {"error", st.ToString()}});
      }
    }
  };
  // Attaches the devices in order; the first failure stops it (and undoes them all).
  std::set<std::string> seen;
  auto attach_all = [&]() -> Status {
    for (const PodClaimDevice& cd : *devices) {
      const dra::PreparedDevice& d = cd.device;
      if (d.pci_address.empty() || !seen.insert(d.pci_address).second) continue;
      if (auto owner = ctx.store.OwnerOf(d.pci_address);
          owner && !IsStale(*owner) && owner->container_id == env.container_id) {
        LogInfo("DRA device already in the pod",
                {{"device", d.pci_address}, {"as", owner->ifname}});
        continue;
      }
      const bool is_aux = d.pci_address.find(':') == std::string::npos;
      Result<VfDevice> vf = ResolveVf(ctx.host, d.pci_address, is_aux);
      if (std::string why = NotMoved(d, is_aux, vf, ctx.host); !why.empty()) {
        LogInfo("DRA device left in the host namespace", {{"device", d.pci_address}, {"why", why}});
        continue;
      }
      if (!vf.ok()) return Summarize(vf.status(), "cannot use DRA device " + d.pci_address);
      const std::string ifname = !d.interface_name.empty() ? d.interface_name : vf->netdev;
      if (ifname.empty()) {
        return CniStatus(kErrDeviceNotFound,
                         "DRA device " + d.pci_address + " has no netdev in the host namespace",
                         "is it attached to another pod, or bound to a driver without a netdev?");
      }
      ASSIGN_OR_RETURN(const NetConf sub_conf, DeviceConf(conf, d));
      const CniEnv sub_env = ForDevice(env, ifname);
      AttachContext sub_ctx = ctx;
      sub_ctx.chained_by = env.ifname;
      ASSIGN_OR_RETURN(const json added, CmdAdd(sub_env, sub_conf, sub_ctx));
      attached.push_back(ifname);
      ASSIGN_OR_RETURN(const CniResult ours, ParseResult(added));
      RecordDraNetworkStatus(sub_env, conf, ctx, cd, ours);
      merged = ChainResult(std::move(merged), ours);
    }
    return Status::Ok();
  };
  if (Status st = attach_all(); !st.ok()) {
    undo_all();
    return st;
  }
  if (!attached.empty()) {
    LogInfo(
        "attached the pod's DRA devices",
        {{"interfaces", Join(attached)}, {"pod", PodKey(env)}, {"container", env.container_id}});
  }
  Result<json> out = ToJson(merged, conf.cni_version);
  if (!out.ok()) undo_all();
  return out;
}

Status CmdDelDraClaims(const CniEnv& env, const NetConf& conf, const AttachContext& ctx) {
  Status first;
  for (const AttachmentState& state : ChainedStates(env, ctx)) {
    Status st = CmdDelRecorded(env, conf, ctx, state);
    if (!st.ok()) {
      LogError("cannot detach a DRA device",
               {{"ifname", state.owner.ifname}, {"device", state.device}, {"error", st.message()}});
      if (first.ok()) first = st;
    }
  }
  return first;
}

Status CmdCheckDraClaims(const CniEnv& env, const NetConf& conf, const AttachContext& ctx) {
  for (const AttachmentState& state : ChainedStates(env, ctx)) {
    const CniEnv check = ForDevice(env, state.owner.ifname);
    Result<NetConf> check_conf = ParseNetConf(DumpJson(state.netconf), Verb::kAdd, conf.node);
    if (!check_conf.ok()) return check_conf.status();
    RETURN_IF_ERROR(CmdCheck(check, *check_conf, ctx));
  }
  return Status::Ok();
}

}  // namespace hcashare::cni
