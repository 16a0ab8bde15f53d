#include "deviceplugin/list_watch_stream.h"

#include "common/grpc_edge.h"
#include "common/log.h"

namespace hcashare::dp {

ListWatchStream::ListWatchStream(const PluginState& state, const ServiceEvents& events,
                                 std::function<void(ListWatchStream*)> on_done)
    : state_(state),
      events_(events),
      on_done_(std::move(on_done)),
      name_(state.Current()->rc.FullName()) {}

void ListWatchStream::Begin() {
  LogInfo("ListAndWatch started", {{"resource", name_}});
  events_.stream_changed(+1, false);
  state_.AddWatcher(this);
  MaybeWrite();
}

void ListWatchStream::End() { RequestFinish(/*by_peer=*/false); }

void ListWatchStream::OnPublished() { MaybeWrite(); }

void ListWatchStream::MaybeWrite() {
  std::shared_ptr<const Snapshot> snap = state_.Current();
  {
    std::lock_guard<std::mutex> lock(mu_);
    // `<=`, not `==`: a snapshot read before another thread wrote a newer one is stale, and
    // sending it would put an older list after a newer one.
    if (writing_ || finish_requested_ || snap->generation <= sent_) return;
    writing_ = true;
    inflight_generation_ = snap->generation;
    grpc::Slice bytes(snap->list_bytes);
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
      by_peer_ = true;  // the kubelet went away mid-write
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
  RequestFinish(/*by_peer=*/true);
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
