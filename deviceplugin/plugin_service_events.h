// ServiceEvents: what the gRPC services report to the server that owns them.
#pragma once

#include <functional>
#include <string>

namespace hcashare::dp {

// Callbacks from the services to their owner. Each must be quick and non-blocking (they
// run on gRPC threads).
struct ServiceEvents {
  // A ListAndWatch stream started (+1) or ended (-1). `by_peer` is true when the kubelet
  // (not our own stop) ended it.
  std::function<void(int delta, bool by_peer)> stream_changed;
  // The kubelet reported the plugins_registry registration result.
  std::function<void(bool registered, const std::string& error)> registration_status;
};

}  // namespace hcashare::dp
