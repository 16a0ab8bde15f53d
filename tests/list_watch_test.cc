// ListWatchStream and DevicePluginService::FinishStreams over a real gRPC unix socket:
// the first list at once, the latest of a burst of publishes always delivered, and the
// stream ends reported as by the plugin or by the kubelet.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "common/host.h"
#include "common/temp_dir.h"
#include "deviceplugin/plugin_service.h"
#include "tests/grpc_non_reader.h"
#include "tests/test_util.h"

namespace hcashare::dp {
namespace {

using std::chrono::milliseconds;
using testing::NonReader;

config::ResourceConfig Resource(int max) {
  config::ResourceConfig rc;
  rc.resource_name = "hca_a";
  rc.resource_prefix = "rdma";
  rc.rdma_hca_max = max;
  return rc;
}

class ListWatchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    events_.stream_changed = [this](int delta, bool by_peer) {
      // The end counters first: WaitOpen(0) must see them once the stream count drops.
      if (delta < 0 && by_peer) ++ended_by_peer_;
      if (delta < 0 && !by_peer) ++ended_by_plugin_;
      open_ += delta;
    };
    events_.registration_status = [](bool, const std::string&) {};
    service_ = std::make_unique<DevicePluginService>(state_, *host_, events_, tmp_.path(),
                                                     /*use_cdi=*/false, "", nullptr, stall_limit_);
    grpc::ServerBuilder builder;
    builder.AddListeningPort("unix:" + tmp_.path() + "/dp.sock", grpc::InsecureServerCredentials());
    builder.RegisterService(service_.get());
    server_ = builder.BuildAndStart();
    ASSERT_NE(server_, nullptr);
    stub_ = v1beta1::DevicePlugin::NewStub(grpc::CreateChannel("unix://" + tmp_.path() + "/dp.sock",
                                                               grpc::InsecureChannelCredentials()));
  }
  void TearDown() override {
    service_->FinishStreams();
    server_->Shutdown(std::chrono::system_clock::now() + milliseconds(500));
    server_->Wait();
  }

  bool WaitOpen(int n) {
    return testing::WaitUntil([&] { return open_.load() == n; });
  }

  milliseconds stall_limit_{10000};  // the default; set before SetUp to change it
  TempDir tmp_{"hcashare-lw-"};
  std::unique_ptr<Host> host_ = NewRootedHost(tmp_.path());
  PluginState state_{Resource(1)};
  ServiceEvents events_;
  std::atomic<int> open_{0}, ended_by_peer_{0}, ended_by_plugin_{0};
  std::unique_ptr<DevicePluginService> service_;
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<v1beta1::DevicePlugin::Stub> stub_;
};

TEST_F(ListWatchTest, BurstOfPublishesEndsOnTheLatest) {
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));  // fail, not hang
  auto reader = stub_->ListAndWatch(&ctx, v1beta1::Empty());
  v1beta1::ListAndWatchResponse resp;
  ASSERT_TRUE(reader->Read(&resp));
  EXPECT_EQ(resp.devices_size(), 1);  // the current list, at once
  ASSERT_TRUE(WaitOpen(1));

  constexpr int kPublishes = 300;
  for (int i = 2; i <= kPublishes; ++i) state_.Publish(Resource(i), node::PoolState{});
  int received = 1;
  while (resp.devices_size() != kPublishes) {
    ASSERT_TRUE(reader->Read(&resp)) << "stream ended after " << received << " lists";
    ++received;
  }
  // Intermediate generations may be skipped, never repeated or sent out of order (an older
  // list after a newer one); the latest always arrives, and nothing follows it.
  EXPECT_LE(received, kPublishes);
  EXPECT_EQ(resp.devices(kPublishes - 1).id(), std::to_string(kPublishes - 1));

  service_->FinishStreams();
  EXPECT_FALSE(reader->Read(&resp));
  EXPECT_TRUE(reader->Finish().ok());
  ASSERT_TRUE(WaitOpen(0));
  EXPECT_EQ(ended_by_plugin_.load(), 1);
  EXPECT_EQ(ended_by_peer_.load(), 0);
}

TEST_F(ListWatchTest, KubeletCancelEndsTheStreamAsByPeer) {
  {
    grpc::ClientContext ctx;
    auto reader = stub_->ListAndWatch(&ctx, v1beta1::Empty());
    v1beta1::ListAndWatchResponse resp;
    ASSERT_TRUE(reader->Read(&resp));
    ASSERT_TRUE(WaitOpen(1));
    ctx.TryCancel();
    EXPECT_FALSE(reader->Read(&resp));
  }
  ASSERT_TRUE(WaitOpen(0));
  EXPECT_EQ(ended_by_peer_.load(), 1);
  // Publishing with no stream open touches nothing.
  state_.Publish(Resource(5), node::PoolState{});
}

TEST_F(ListWatchTest, StreamOpenedAfterFinishStreamsEndsAtOnce) {
  service_->FinishStreams();
  grpc::ClientContext ctx;
  auto reader = stub_->ListAndWatch(&ctx, v1beta1::Empty());
  v1beta1::ListAndWatchResponse resp;
  while (reader->Read(&resp)) {
  }
  EXPECT_TRUE(reader->Finish().ok());
  ASSERT_TRUE(WaitOpen(0));
  EXPECT_EQ(ended_by_plugin_.load(), 1);
}

// The per-resource cap (config::kMaxRdmaHcaMax): a list of ~1 MB, far more than a
// flow-control window and the socket buffers take.
constexpr int kBigList = 50000;

class StallingListWatchTest : public ListWatchTest {
 protected:
  StallingListWatchTest() { stall_limit_ = milliseconds(300); }
};

// A stream whose write has been pending past the stall limit is cancelled at the next
// publish (as ended by the plugin: it says nothing about the kubelet), while a stream that
// reads is never dropped.
TEST_F(StallingListWatchTest, AStreamThatDoesNotReadIsDroppedAfterTheLimit) {
  state_.Publish(Resource(kBigList), node::PoolState{});
  grpc::ClientContext reading_ctx;
  reading_ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
  auto reading = stub_->ListAndWatch(&reading_ctx, v1beta1::Empty());
  v1beta1::ListAndWatchResponse resp;
  ASSERT_TRUE(reading->Read(&resp));
  std::atomic<int> lists{1};
  std::thread reader([&] {
    while (reading->Read(&resp)) ++lists;
  });
  NonReader idle(tmp_.path() + "/dp.sock");  // its first write, the 1 MB list, stalls
  ASSERT_TRUE(WaitOpen(2));
  // Small lists from now on (the reader takes them at once); one every 50 ms until the idle
  // stream is gone (bounded: 200 rounds).
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < 200 && open_.load() == 2; ++i) {
    state_.Publish(Resource(5 + i % 2), node::PoolState{});
    std::this_thread::sleep_for(milliseconds(50));  // pacing of the publishes
  }
  EXPECT_EQ(open_.load(), 1) << "the stream that does not read was kept";
  EXPECT_LT(testing::MsSince(start), 3000);
  EXPECT_EQ(ended_by_peer_.load(), 0);
  EXPECT_EQ(ended_by_plugin_.load(), 1);
  const int seen = lists.load();
  state_.Publish(Resource(7), node::PoolState{});
  EXPECT_TRUE(testing::WaitUntil([&] { return lists.load() > seen; }))
      << "the reading stream stopped getting lists";
  service_->FinishStreams();
  reader.join();
}

TEST(PluginStateTest, SnapshotCarriesSerializedListAndCounts) {
  PluginState state(Resource(3));
  auto snap = state.Current();
  EXPECT_EQ(snap->devices, 3);
  EXPECT_EQ(snap->healthy_devices, 0);  // no HCA in the pool
  auto list = snap->List();
  ASSERT_EQ(list.devices_size(), 3);
  EXPECT_EQ(list.devices(2).health(), kUnhealthy);
  EXPECT_FALSE(state.Publish(Resource(3), node::PoolState{}));  // same content: nothing sent
  EXPECT_EQ(state.Current()->generation, snap->generation);
  EXPECT_TRUE(state.Publish(Resource(4), node::PoolState{}));
  EXPECT_EQ(state.Current()->generation, snap->generation + 1);
}

}  // namespace
}  // namespace hcashare::dp
