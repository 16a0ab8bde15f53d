// A ListAndWatch client that never reads, on a connection of its own with BDP probing off,
// so that its flow-control windows stay at their initial 64 KiB (nothing else grows them):
// the server's writes to it stall at once. The stalled peer of the memory tests.
#pragma once

#include <memory>
#include <string>

#include <grpcpp/grpcpp.h>

#include "deviceplugin/api/deviceplugin_v1beta1.grpc.pb.h"

namespace hcashare::testing {

struct NonReader {
  // Opens the stream on the unix socket `socket`.
  explicit NonReader(const std::string& socket)
      : stub(v1beta1::DevicePlugin::NewStub(grpc::CreateCustomChannel(
            "unix://" + socket, grpc::InsecureChannelCredentials(), Args()))) {
    reader = stub->ListAndWatch(&ctx, v1beta1::Empty());
  }
  static grpc::ChannelArguments Args() {
    grpc::ChannelArguments args;
    args.SetInt(GRPC_ARG_HTTP2_BDP_PROBE, 0);
    return args;
  }
  std::unique_ptr<v1beta1::DevicePlugin::Stub> stub;
  grpc::ClientContext ctx;
  std::unique_ptr<grpc::ClientReader<v1beta1::ListAndWatchResponse>> reader;
};

}  // namespace hcashare::testing
