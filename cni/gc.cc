#include "cni/gc.h"

#include "common/log.h"

namespace hcashare::cni {

MaybeError CmdGc(const CniEnv& env, const NetConf& conf, const AttachContext& ctx) {
  const std::vector<Attachment> valid = conf.valid_attachments.value_or(std::vector<Attachment>{});
  MaybeError first;
  for (const AttachmentState& state : ctx.store.List()) {
    if (state.netconf.value("name", "") != conf.name) continue;  // another network's
    bool keep = false;
    for (const auto& a : valid) {
      keep = keep || (a.container_id == state.owner.container_id && a.ifname == state.owner.ifname);
    }
    if (keep) continue;
    CniEnv del = env;
    del.verb = Verb::kDel;
    del.command = "DEL";
    del.container_id = state.owner.container_id;
    del.ifname = state.owner.ifname;
    del.netns = state.owner.netns;
    auto del_conf = ParseNetConf(state.netconf.dump(), Verb::kDel);
    LogInfo("GC: releasing an attachment the runtime no longer knows",
            {{"container", del.container_id}, {"ifname", del.ifname}, {"device", state.device}});
    MaybeError e = CmdDel(del, del_conf.ok() ? *del_conf : conf, ctx);
    if (e) {
      LogError("GC could not release an attachment",
               {{"container", del.container_id}, {"ifname", del.ifname}, {"error", e->msg}});
      if (!first) first = e;
    }
  }
  return first;
}

}  // namespace hcashare::cni
