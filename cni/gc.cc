#include "cni/gc.h"

#include "common/log.h"
#include "json/dump.h"

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
    CniEnv del = env;
    del.verb = Verb::kDel;
    del.command = "DEL";
    del.container_id = state.owner.container_id;
    del.ifname = state.owner.ifname;
    del.netns = state.owner.netns;
    auto del_conf = ParseNetConf(DumpJson(state.netconf), Verb::kDel, conf.node);
    LogInfo("GC: releasing an attachment the runtime no longer knows",
            {{"container", del.container_id}, {"ifname", del.ifname}, {"device", state.device}});
    Status st = CmdDel(del, del_conf.ok() ? *del_conf : conf, ctx);
    if (!st.ok()) {
      LogError("GC could not release an attachment",
               {{"container", del.container_id}, {"ifname", del.ifname}, {"error", st.message()}});
      if (first.ok()) first = st;
    }
  }
  return first;
}

}  // namespace hcashare::cni
