#include "cni/recover.h"

#include "common/lock_file.h"
#include "common/log.h"
#include "common/netns.h"
#include "json/dump.h"

namespace hcashare::cni {

std::vector<RecoveryItem> RecoverAttachments(const AttachContext& ctx, const NodeSettings& node,
                                             const std::string& cni_path, bool apply) {
  std::vector<RecoveryItem> items;
  for (const AttachmentState& state : ctx.store.List()) {
    RecoveryItem item{state.owner.container_id, state.owner.ifname, state.device, "", ""};
    if (IsStale(state.owner)) {
      item.reason = "its pod network namespace " + state.owner.netns + " is gone";
    } else if (state.result.is_null()) {
      // No result: an ADD that crashed, or one still running (it holds its mark from
      // before its first state write until it returns), or one that finished since the
      // listing.
      auto running = ctx.store.IsAddRunning(state.owner.container_id, state.owner.ifname);
      auto now = ctx.store.Load(state.owner.container_id, state.owner.ifname);
      if (!running.ok()) {
        item.error = "cannot tell whether its ADD is running: " + running.status().message();
      } else if (!*running && now.ok() && now->result.is_null()) {
        item.reason = "its ADD never finished";
      }
    }
    if (!item.reason.empty() && apply) {
      CniEnv env;
      env.verb = Verb::kDel;
      env.command = "DEL";
      env.container_id = state.owner.container_id;
      env.ifname = state.owner.ifname;
      env.netns = IsStale(state.owner) ? "" : state.owner.netns;
      env.path = cni_path;
      auto conf = ParseNetConf(DumpJson(state.netconf), Verb::kDel, node);
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

std::vector<StaleLock> RemoveStaleAddMarks(const StateStore& store, bool apply) {
  std::vector<StaleLock> out;
  for (const std::string& path : store.AddMarkFiles()) {
    auto removed = RemoveLockFileIfUnheld(path, apply);
    if (!removed.ok()) {
      out.push_back({path, removed.status().message()});
    } else if (*removed) {
      out.push_back({path, ""});
    }
  }
  return out;
}

}  // namespace hcashare::cni
