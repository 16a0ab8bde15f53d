// ListWatchStream: one open ListAndWatch call, on gRPC's callback API.
//
// The stream holds no thread while idle. It sends the current device list at once, then
// the newest snapshot after every publish; a write in flight is never doubled up, and
// when several generations are published during one write only the latest is sent next.
// It ends when the kubelet cancels the call, a write fails, or End() is called. Lists go
// out as the snapshot's pre-serialized bytes (a raw method), which every stream shares:
// nothing is re-encoded or copied, so a stream holds no list of its own. A client that
// does not read keeps a write pending: once one has been pending for the stall limit, the
// next publish cancels the call instead of queueing a newer list behind it, so that
// streams that do not read never hold more than the generations published within the limit.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include <grpcpp/server_context.h>
#include <grpcpp/support/byte_buffer.h>
#include <grpcpp/support/server_callback.h>

#include "deviceplugin/plugin_service_events.h"
#include "deviceplugin/plugin_state.h"

namespace hcashare::dp {

class ListWatchStream final : public grpc::ServerWriteReactor<grpc::ByteBuffer>,
                              public StateWatcher {
 public:
  // `state` and `events` must outlive the stream; `ctx` is the call's. `on_done` runs last,
  // from OnDone, and may destroy the stream.
  ListWatchStream(const PluginState& state, const ServiceEvents& events,
                  grpc::CallbackServerContext* ctx, std::chrono::milliseconds stall_limit,
                  std::function<void(ListWatchStream*)> on_done);

  // Subscribes to `state` and starts the first write. Call once, after construction.
  void Begin();
  // Ends the stream with OK from our side (plugin shutdown). Idempotent; non-blocking.
  void End();

  void OnPublished() override;
  void OnWriteDone(bool ok) override;
  void OnCancel() override;
  void OnDone() override;

 private:
  // Starts a write of the current snapshot unless one is in flight or it was sent.
  void MaybeWrite();
  // Records that the stream should finish; finishes now unless a write is in flight.
  void RequestFinish(bool by_peer);

  const PluginState& state_;
  const ServiceEvents& events_;
  grpc::CallbackServerContext* const ctx_;
  const std::chrono::milliseconds stall_limit_;
  std::function<void(ListWatchStream*)> on_done_;
  std::string name_;

  std::mutex mu_;
  bool writing_ = false;                                 // guarded by mu_
  bool finish_requested_ = false;                        // guarded by mu_
  bool finished_ = false;                                // guarded by mu_
  bool by_peer_ = false;                                 // guarded by mu_
  uint64_t sent_ = 0;                                    // guarded by mu_: generation last written
  uint64_t inflight_generation_ = 0;                     // guarded by mu_
  std::chrono::steady_clock::time_point write_started_;  // guarded by mu_
  bool dropped_ = false;                                 // guarded by mu_: cancelled as stalled
  grpc::ByteBuffer inflight_;  // guarded by mu_: the message being written
};

}  // namespace hcashare::dp
