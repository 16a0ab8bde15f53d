#include "node/grpc_status.h"

#include "common/grpc_edge.h"

namespace hcashare::node {

grpc::Status ToGrpc(const Status& s) {
  switch (s.code()) {
    case StatusCode::kOk:
      return grpc::Status::OK;
    case StatusCode::kInvalidArgument:
      return {grpc::StatusCode::INVALID_ARGUMENT, s.message()};
    case StatusCode::kNotFound:
      return {grpc::StatusCode::NOT_FOUND, s.message()};
    case StatusCode::kFailedPrecondition:
      return {grpc::StatusCode::FAILED_PRECONDITION, s.message()};
    case StatusCode::kAlreadyExists:
      return {grpc::StatusCode::ALREADY_EXISTS, s.message()};
    case StatusCode::kPermissionDenied:
      return {grpc::StatusCode::PERMISSION_DENIED, s.message()};
    case StatusCode::kUnavailable:
      return {grpc::StatusCode::UNAVAILABLE, s.message()};
    case StatusCode::kUnimplemented:
      return {grpc::StatusCode::UNIMPLEMENTED, s.message()};
    default:
      return {grpc::StatusCode::INTERNAL, s.message()};
  }
}

grpc::ServerUnaryReactor* FinishUnary(grpc::CallbackServerContext* ctx, const grpc::Status& st) {
  grpc::ServerUnaryReactor* reactor = ctx->DefaultReactor();
  GrpcHandOff();
  reactor->Finish(st);
  return reactor;
}

}  // namespace hcashare::node
