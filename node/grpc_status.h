// The edge of a kubelet-facing gRPC handler, for both front-ends: the one mapping from a
// Status to the gRPC status it returns (protocol errors are made only here), and the end of
// a unary callback call.
#pragma once

#include <grpcpp/server_context.h>
#include <grpcpp/support/server_callback.h>
#include <grpcpp/support/status.h>

#include "common/status.h"

namespace hcashare::node {

// Maps a Status to the gRPC status returned at the edge: each code to its gRPC namesake,
// anything without one to INTERNAL; the message is kept.
grpc::Status ToGrpc(const Status& s);

// Finishes a unary callback call with `st` on the context's default reactor (handing off to
// gRPC first: common/grpc_edge.h) and returns that reactor, for the handler to return.
grpc::ServerUnaryReactor* FinishUnary(grpc::CallbackServerContext* ctx, const grpc::Status& st);

}  // namespace hcashare::node
