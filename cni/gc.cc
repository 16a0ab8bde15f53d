#include "cni/gc.h"

#include "common/log.h"

namespace hcashare::cni {

Status CmdGc(const CniEnv& env, const NetConf& conf, const AttachContext& ctx) {
  const std::vector<Attachment> valid = conf.valid_attachments.value_or(std::vector<Attachment>{});
  Status first;
  for (const AttachmentState& state : ctx.store.List()) {
    if (state.netconf.value("name", "") != conf.name) continue;  // another network's
    bool keep = false;
    // The runtime knows an attachment of the DRA step by its invocation's CNI_IFNAME.
    const std::string& known_as =
        state.owner.chained_by.empty() ? state.owner.ifname : state.owner.chained_by;
    for (const auto& a : valid) {
      keep = keep || (a.container_id == state.owner.container_id && a.ifname == known_as);
    }
    if (keep) continue;
    LogInfo("GC: releasing an attachment the runtime no longer knows",
            {{"container", state.owner.container_id},
             {"ifname", state.owner.ifname},
             {"device", state.device}});
    Status st = CmdDelRecorded(env, conf, ctx, state);
    if (!st.ok()) {
      LogError("GC could not release an attachment", {{"container", state.owner.container_id},
                                                      {"ifname", state.owner.ifname},
                                                      {"error", st.message()}});
      if (first.ok()) first = st;
    }
  }
  return first;
}

}  // namespace hcashare::cni
