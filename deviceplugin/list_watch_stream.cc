#include "deviceplugin/list_watch_stream.h"

#include "common/grpc_edge.h"
#include "common/log.h"

namespace hcashare::dp {

namespace {

// Releases the snapshot a slice of its list bytes kept alive (gRPC's slice destructor).
void ReleaseSnapshot(void* keep) { delete static_cast<std::shared_ptr<const Snapshot>*>(keep); }

}  // namespace

ListWatchStream::ListWatchStream(const PluginState& state, const ServiceEvents& events,
                                 grpc::CallbackServerContext* ctx,
                                 std::chrono::milliseconds stall_limit,
                                 std::function<void(ListWatchStream*)> on_done)
    : state_(state),
      events_(events),
      ctx_(ctx),
      stall_limit_(stall_limit),
      on_done_(std::move(on_done)),
      name_(state.Current()->rc.FullName()) {}

void ListWatchStream::Begin() {
  LogInfo("ListAndWatch started", {{"resource", name_}});
  events_.stream_changed(+1, false);
  state_.AddWatcher(this);
  MaybeWrite();
}

void ListWatchStream::End() { RequestFinish(/*by_peer=*/false); }

void ListWatchStream::OnPublished() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (dropped_) return;
    if (writing_ && std::chrono::steady_clock::now() - write_started_ >= stall_limit_) {
      // Not reading: queueing the new list behind the pending one would only hold more.
      dropped_ = true;
      LogWarn("ListAndWatch client does not read; dropping the stream",
              {{"resource", name_},
               {"pending_generation", inflight_generation_},
               {"stall_limit_seconds", stall_limit_.count() / 1000.0}});
      ctx_->TryCancel();  // the pending write fails, and OnDone follows
      return;
    }
  }
  MaybeWrite();
}

void ListWatchStream::MaybeWrite() {
  std::shared_ptr<const Snapshot> snap = state_.Current();
  {
    std::lock_guard<std::mutex> lock(mu_);
    // `<=`, not `==`: a snapshot read before another thread wrote a newer one is stale, and
    // sending it would put an older list after a newer one.
    if (writing_ || finish_requested_ || snap->generation <= sent_) return;
    writing_ = true;
    write_started_ = std::chrono::steady_clock::now();
    inflight_generation_ = snap->generation;
    // The snapshot's own bytes, kept alive by the slice: every stream shares them.
    auto* keep = new std::shared_ptr<const Snapshot>(snap);
    grpc::Slice bytes(const_cast<char*>((*keep)->list_bytes.data()), (*keep)->list_bytes.size(),
                      &ReleaseSnapshot, keep);
    inflight_ = grpc::ByteBuffer(&bytes, 1);
  }
  GrpcHandOff();
  StartWrite(&inflight_);
}

void ListWatchStream::OnWriteDone(bool ok) {
  GrpcCallbackScope edge;  // see common/grpc_edge.h
  bool finish_now = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    writing_ = false;
    if (ok) {
      sent_ = inflight_generation_;
      LogDebug("sent device list", {{"resource", name_}, {"generation", sent_}});
    } else if (!finish_requested_) {
      finish_requested_ = true;
      by_peer_ = !dropped_;  // the kubelet went away mid-write, unless we dropped it
    }
    inflight_.Clear();
    finish_now = finish_requested_ && !finished_;
    if (finish_now) finished_ = true;
  }
  if (finish_now) {
    GrpcHandOff();
    Finish(grpc::Status::OK);
    return;
  }
  MaybeWrite();  // a publish may have arrived during the write
}

void ListWatchStream::OnCancel() {
  GrpcCallbackScope edge;
  bool dropped;
  {
    std::lock_guard<std::mutex> lock(mu_);
    dropped = dropped_;
  }
  RequestFinish(/*by_peer=*/!dropped);
}

void ListWatchStream::RequestFinish(bool by_peer) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (finish_requested_) return;
    finish_requested_ = true;
    by_peer_ = by_peer;
    if (writing_) return;  // OnWriteDone finishes
    finished_ = true;
  }
  GrpcHandOff();
  Finish(grpc::Status::OK);
}

void ListWatchStream::OnDone() {
  GrpcTakeOver();  // no hand-off at the end: `this` may be gone
  state_.RemoveWatcher(this);
  bool by_peer;
  {
    std::lock_guard<std::mutex> lock(mu_);
    by_peer = by_peer_;
  }
  LogInfo("ListAndWatch ended", {{"resource", name_}, {"by", by_peer ? "kubelet" : "plugin"}});
  events_.stream_changed(-1, by_peer);
  on_done_(this);  // may delete this: nothing after it touches a member
  GrpcHandOff();   // to whoever waits for the server to finish (Server::Wait)
}

}  // namespace hcashare::dp
