#include "cni/dra_status.h"

#include "common/log.h"
#include "interop/dra_network_status.h"

namespace hcashare::cni {

void RecordDraNetworkStatus(const CniEnv& env, const NetConf& conf, const AttachContext& ctx,
                            const PodClaimDevice& cd, const CniResult& result) {
  dra::DeviceNetworkStatus s;
  s.claim_uid = cd.claim_uid;
  s.claim_namespace = cd.claim_namespace;
  s.claim_name = cd.claim_name;
  s.pool = cd.device.pool;
  s.device = cd.device.device;
  s.share_id = cd.device.share_id;
  s.interface_name = env.ifname;
  int index = -1;
  for (size_t i = 0; i < result.interfaces.size(); ++i) {
    if (result.interfaces[i].name == env.ifname && !result.interfaces[i].sandbox.empty()) {
      index = static_cast<int>(i);
      s.hardware_address = result.interfaces[i].mac;
    }
  }
  for (const ResultIp& ip : result.ips) {
    if (ip.interface == index && s.ips.size() < dra::kMaxNetworkIps) s.ips.push_back(ip.address);
  }
  const std::string path = dra::NetworkStatusPath(
      dra::NetworkStatusDir(conf.node.kubelet_root_dir, conf.node.dra_driver), s.claim_uid,
      s.device);
  Status st = [&]() -> Status {
    ASSIGN_OR_RETURN(AttachmentState state, ctx.store.Load(env.container_id, env.ifname));
    state.dra_status_file = path;
    RETURN_IF_ERROR(ctx.store.Save(state));
    return dra::WriteNetworkStatus(path, s);
  }();
  if (!st.ok()) {
    LogWarn("cannot record the DRA device's network status (the claim's status will lack it)",
            {{"device", s.device}, {"file", path}, {"error", st.ToString()}});
  }
}

void RecordDraNetworkStatusOfAttachment(const CniEnv& env, const NetConf& conf,
                                        const AttachContext& ctx, const nlohmann::json& result) {
  if (!ctx.pod_dra_devices) return;
  Result<AttachmentState> state = ctx.store.Load(env.container_id, env.ifname);
  if (!state.ok() || state->child_link) return;
  Result<std::vector<PodClaimDevice>> devices = ctx.pod_dra_devices();
  if (!devices.ok()) {
    LogWarn("cannot tell whether the device is a DRA claim's (no network status recorded)",
            {{"device", state->device}, {"error", devices.status().ToString()}});
    return;
  }
  for (const PodClaimDevice& cd : *devices) {
    if (cd.device.pci_address != state->device) continue;
    Result<CniResult> parsed = ParseResult(result);
    if (parsed.ok()) RecordDraNetworkStatus(env, conf, ctx, cd, *parsed);
    return;
  }
}

}  // namespace hcashare::cni
