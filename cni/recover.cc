#include "cni/recover.h"

#include "common/log.h"
#include "common/netns.h"

namespace hcashare::cni {

std::vector<RecoveryItem> RecoverAttachments(const AttachContext& ctx, const std::string& cni_path,
                                             bool apply) {
  std::vector<RecoveryItem> items;
  for (const AttachmentState& state : ctx.store.List()) {
    RecoveryItem item{state.owner.container_id, state.owner.ifname, state.device, "", ""};
    if (IsStale(state.owner)) {
      item.reason = "its pod network namespace " + state.owner.netns + " is gone";
    } else if (state.result.is_null()) {
      item.reason = "its ADD never finished";
    }
    if (!item.reason.empty() && apply) {
      CniEnv env;
      env.verb = Verb::kDel;
      env.command = "DEL";
      env.container_id = state.owner.container_id;
      env.ifname = state.owner.ifname;
      env.netns = IsStale(state.owner) ? "" : state.owner.netns;
      env.path = cni_path;
      auto conf = ParseNetConf(state.netconf.dump(), Verb::kDel);
      if (!conf.ok()) {
        item.error = "its recorded configuration does not parse: " + conf.status().message();
      } else if (Status st = CmdDel(env, *conf, ctx); !st.ok()) {
        item.error = st.message() + (st.details().empty() ? "" : ": " + st.details());
      }
      LogInfo("cni-gc released an attachment", {{"container", item.container_id},
                                                {"ifname", item.ifname},
                                                {"device", item.device},
                                                {"reason", item.reason},
                                                {"error", item.error}});
    }
    items.push_back(std::move(item));
  }
  return items;
}

}  // namespace hcashare::cni
