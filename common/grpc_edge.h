// Happens-before annotations for ThreadSanitizer where control passes between our code and
// gRPC. Debian's gRPC is not built with -fsanitize=thread, so TSan cannot see the
// synchronisation by which gRPC hands an object from the thread that gave it to gRPC
// (built a server, started a write, made a call) to the thread that runs the callback or
// handler; without these, every such hand-off is reported as a race in our code. The
// model: handing off to gRPC releases, being called by gRPC acquires, on one address.
// It only orders what really ran one after the other, so concurrent handlers still race.
// No-ops unless built with -fsanitize=thread (scripts/tsan.sh).
#pragma once

#if defined(__SANITIZE_THREAD__)
#include <sanitizer/tsan_interface.h>
#define HCASHARE_TSAN 1
#endif

namespace hcashare {

#ifdef HCASHARE_TSAN
inline char grpc_edge_sync;  // the address the annotations synchronise on
// Before handing something to gRPC.
inline void GrpcHandOff() { __tsan_release(&grpc_edge_sync); }
// On being called by gRPC (or after a call into gRPC returned).
inline void GrpcTakeOver() { __tsan_acquire(&grpc_edge_sync); }
#else
inline void GrpcHandOff() {}
inline void GrpcTakeOver() {}
#endif

// For the body of a gRPC handler or callback: takes over on entry, hands off on exit.
class GrpcCallbackScope {
 public:
  GrpcCallbackScope() { GrpcTakeOver(); }
  ~GrpcCallbackScope() { GrpcHandOff(); }
  GrpcCallbackScope(const GrpcCallbackScope&) = delete;
  GrpcCallbackScope& operator=(const GrpcCallbackScope&) = delete;
};

// Around a blocking call into gRPC (a client call, Server::Wait): hands off before, takes
// over after.
class GrpcCallScope {
 public:
  GrpcCallScope() { GrpcHandOff(); }
  ~GrpcCallScope() { GrpcTakeOver(); }
  GrpcCallScope(const GrpcCallScope&) = delete;
  GrpcCallScope& operator=(const GrpcCallScope&) = delete;
};

}  // namespace hcashare
