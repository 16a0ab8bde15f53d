// The PodHandler of hcashare-nri: each pod event runs hcashare-cni's DRA step ("mode":
// "dra", cni/dra_chain.h) for the pod, exactly as a runtime runs a chained CNI plugin, so
// that the devices of a pod's claims enter it with the same steps, undo and state as
// through the CNI step or a Multus network. Started: ADD; Stopped: DEL; Synchronize: GC of
// the attachments of pods the runtime no longer has, then ADD for each running pod that has
// none yet (one that started while the plugin was away), both in the background after the
// answer, one CNI run at a time between the runtime's calls. The attachments are owned by
// (sandbox ID, `ifname`), so a pod that also has the CNI step or a Multus network gets
// each device once.
#pragma once

#include <chrono>
#include <deque>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "nri/plugin.h"

namespace hcashare::nri {

// How CniPods runs the CNI.
struct CniPodsOptions {
  std::string cni_bin;   // the hcashare-cni executable
  std::string cni_path;  // CNI_PATH: where the IPAM plugins are
  // CNI_IFNAME of the invocations: the owner key of the attachments (never a netdev).
  std::string ifname = "hcashare-nri";
  // The step's network configuration: name, cniVersion, and what the step reads (ipam,
  // mtu, rdma, logLevel); "type" and "mode" are set here.
  nlohmann::json netconf = nlohmann::json::object();
  // Passed to the CNI besides the CNI_* variables ("K=V").
  std::vector<std::string> env;
  // A CNI run longer than this is killed (its state lets the next DEL undo it).
  std::chrono::milliseconds timeout{120000};
  // Cheap checks that spare a CNI run (an exec) for the pods it would find nothing for:
  // false when `pod` surely has no prepared claim of the driver (ADD skipped), or surely
  // has no attachment in the CNI's state (DEL skipped). Unset: always run. Most pods of a
  // node have neither, and the runtime bounds each call (containerd: 2 s by default), a
  // synchronization with all of a node's pods included.
  std::function<bool(const Pod&)> may_have_claims;
  std::function<bool(const Pod&)> may_have_attachments;
};

// The checks of CniPodsOptions from the CNI's node file (the DRA driver's checkpoint: the
// namespaces with a prepared claim; the state dir: the sandbox IDs with an attachment).
// Whatever cannot be read counts as "maybe", so nothing is skipped on doubt.
void SetNodeChecks(const std::string& state_dir, const std::string& dra_checkpoint,
                   CniPodsOptions* options);

// The step's network configuration from `options.netconf` and, when not empty, `config`
// (a JSON object; its keys win), with "type" and "mode" set. InvalidArgument when `config`
// is not a JSON object or sets "type" or "mode" to something else.
Result<nlohmann::json> StepNetConf(const nlohmann::json& base, const std::string& config);

// Pod values as CNI_ARGS carries them: refused when empty, longer than 253 bytes, or
// holding ';', '=' or a control character.
Status CheckArgValue(const std::string& what, const std::string& value);

class CniPods : public PodHandler {
 public:
  explicit CniPods(CniPodsOptions options);

  // Merges the runtime's config into the step's configuration and has the CNI check it
  // (its STATUS verb), so that a bad configuration is refused here, with the CNI's message.
  Status Configure(const std::string& config) override;
  void Synchronize(const std::vector<Pod>& pods) override;
  bool Background() override;
  Status Started(const Pod& pod) override;
  Status Stopped(const Pod& pod) override;

 private:
  // Runs the CNI with `verb` for `pod` (nullptr: no pod, for GC and STATUS).
  Status Run(const std::string& verb, const Pod* pod, const nlohmann::json& netconf);

  CniPodsOptions options_;
  nlohmann::json netconf_;
  // Since the last Synchronize: the sandbox IDs of the runtime's pods (those synchronized
  // and those started since, less those stopped since), whose attachments GC keeps.
  std::set<std::string> live_;
  bool catching_up_ = false;  // the synchronization's work is not all done
  bool gc_due_ = false;       // the synchronization's GC has not run yet
  // The synchronization's pods, checked (and ADDed when due) one per Background call.
  std::deque<Pod> catch_up_;
  size_t caught_up_ = 0;  // of this synchronization's catch-up, ADDs run so far
};

}  // namespace hcashare::nri
