// hcashare's NRI plugin service: it subscribes to pod sandbox events only (run, stop,
// remove) and hands each pod to a PodHandler; at every (re)connection the runtime's pods
// are handed over once (Synchronize), so that pods started while the plugin was away are
// caught up. Pod events arrive as dedicated RPCs (NRI v0.12 and later) or through
// StateChange (earlier runtimes; later ones fall back to it).
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "nri/session.h"

namespace hcashare::nri {

// A pod sandbox as the runtime describes it (values unchecked: a PodHandler checks what it
// uses).
struct Pod {
  std::string id;  // the sandbox ID: CNI_CONTAINERID of the pod's networks
  std::string name;
  std::string uid;
  std::string namespace_name;
  std::string netns;  // path of its network namespace; "" for a pod on the host network
};

// What the plugin does with pods; called one at a time.
class PodHandler {
 public:
  virtual ~PodHandler() = default;
  // The plugin's configuration as the runtime holds it (a pre-installed plugin's conf.d
  // file; "" for none). An error refuses the configuration.
  virtual Status Configure(const std::string& config) = 0;
  // Every pod the runtime knows, at each (re)connection. The runtime bounds the call
  // (containerd: 2 s) and an outage can leave many pods to catch up, so what takes long
  // goes to Background. Errors are the handler's to log.
  virtual void Synchronize(const std::vector<Pod>& pods) = 0;
  // One piece of the work Synchronize left, run while the runtime waits for nothing (its
  // pod events come first); true while more is left.
  virtual bool Background() { return false; }
  // A pod's sandbox started (its network is set up): an error fails the pod's start. It
  // runs to its end even past the runtime's timeout for the call: a runtime that gave up
  // drops the plugin but still starts the pod, which should then have its devices.
  virtual Status Started(const Pod& pod) = 0;
  // A pod's sandbox stopped or was removed (called for both; the second finds nothing).
  virtual Status Stopped(const Pod& pod) = 0;
};

// NRI's event numbers (api.proto's Event) this plugin subscribes to.
inline constexpr int kEventRunPodSandbox = 1;
inline constexpr int kEventStopPodSandbox = 2;
inline constexpr int kEventRemovePodSandbox = 3;

// Bounds on what one call may carry.
inline constexpr size_t kMaxSyncPods = 100000;

// The Plugin service over a PodHandler.
class PodPlugin : public PluginService {
 public:
  explicit PodPlugin(PodHandler& handler) : handler_(handler) {}

  Reply Call(const std::string& method, const std::string& request) override;
  bool Background() override { return handler_.Background(); }

 private:
  Reply PodEvent(int event, const Pod& pod);

  PodHandler& handler_;
  std::vector<Pod> sync_;  // pods of a Synchronize that has more to come
};

}  // namespace hcashare::nri
