// NRI's transport (nri/wire.h) and one plugin connection (nri/session.h, nri/plugin.h)
// against the fake runtime of testing/, which speaks NRI's mux and ttrpc on a real unix
// socket: registration, configuration, synchronization in chunks, pod events by dedicated
// RPC and by StateChange, refusals, and a runtime that goes away.
#include <sys/ioctl.h>
#include <sys/socket.h>

#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <set>
#include <thread>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/temp_dir.h"
#include "nri/cni_pods.h"
#include "nri/plugin.h"
#include "nri/session.h"
#include "nri/wire.h"
#include "testing/fake_nri_runtime.h"
#include "tests/test_util.h"

namespace hcashare::nri {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string Bytes(std::initializer_list<int> b) {
  std::string s;
  for (int v : b) s.push_back(static_cast<char>(v));
  return s;
}

TEST(NriWireTest, AMessageIsItsTtrpcHeaderInOneMuxFrame) {
  // As nri's mux writes ttrpc's bytes: [conn][len] then [len][stream][type][flags] payload.
  Message m{kRuntimeServiceConn, 1, static_cast<uint8_t>(MessageType::kRequest), 0, "ab"};
  auto bytes = EncodeMessage(m);
  ASSERT_TRUE(bytes.ok());
  EXPECT_EQ(*bytes, Bytes({0, 0, 0,   2,  0, 0, 0, 12,  // mux: connection 2, 12 bytes
                           0, 0, 0,   2,  0, 0, 0, 1,   // ttrpc: 2 bytes, stream 1
                           1, 0, 'a', 'b'}));           // request, no flags
}

TEST(NriWireTest, TheReaderTakesBytesInAnyCutAndMessagesAcrossFrames) {
  Message a{kPluginServiceConn, 3, 1, 0, std::string(300, 'x')};
  Message b{kRuntimeServiceConn, 1, 2, 0, ""};
  std::string trunk = *EncodeMessage(a) + *EncodeMessage(b);
  // A third message split by its sender over two mux frames, with a frame of another
  // connection (dropped) between them.
  const std::string c = Bytes({0, 0, 0, 5, 0, 0, 0, 7, 2, 0}) + "hello";
  trunk += Bytes({0, 0, 0, 1, 0, 0, 0, 6}) + c.substr(0, 6);
  trunk += Bytes({0, 0, 0, 9, 0, 0, 0, 2}) + "zz";
  trunk += Bytes({0, 0, 0, 1, 0, 0, 0, static_cast<int>(c.size() - 6)}) + c.substr(6);
  TrunkReader reader;
  for (char ch : trunk) ASSERT_TRUE(reader.Feed(std::string_view(&ch, 1)).ok());
  auto m1 = reader.Next();
  auto m2 = reader.Next();
  auto m3 = reader.Next();
  ASSERT_TRUE(m1 && m2 && m3);
  EXPECT_EQ(m1->payload, a.payload);
  EXPECT_EQ(m1->stream_id, 3u);
  EXPECT_EQ(m2->conn, kRuntimeServiceConn);
  EXPECT_EQ(m3->payload, "hello");
  EXPECT_EQ(m3->stream_id, 7u);
  EXPECT_FALSE(reader.Next());
}

TEST(NriWireTest, OversizedFramesAndMessagesAreRefusedForGood) {
  TrunkReader frames;
  EXPECT_FALSE(frames.Feed(Bytes({0, 0, 0, 1, 0x7f, 0, 0, 0})).ok());
  EXPECT_FALSE(frames.Feed(Bytes({0, 0, 0, 1, 0, 0, 0, 0})).ok()) << "stays failed";
  TrunkReader messages;
  EXPECT_FALSE(
      messages.Feed(Bytes({0, 0, 0, 1, 0, 0, 0, 10, 0, 0x41, 0, 0, 0, 0, 0, 1, 1, 0})).ok());
  Message big{1, 1, 1, 0, std::string(kTtrpcMaxMessage + 1, 'x')};
  EXPECT_FALSE(EncodeMessage(big).ok());
}

// Records what the runtime hands over. `background_per_sync` pieces of background work
// follow each synchronization; with `hold_first`, the first waits for Release().
class RecordingHandler : public PodHandler {
 public:
  bool Background() override {
    std::unique_lock<std::mutex> lock(mu);
    if (background_left == 0) return false;
    const int n = ++background_done;
    events.push_back("background " + std::to_string(n));
    if (n == 1 && hold_first) released_cv.wait(lock, [this] { return released; });
    return --background_left > 0;
  }
  void Release() {
    std::lock_guard<std::mutex> lock(mu);
    released = true;
    released_cv.notify_all();
  }
  std::vector<std::string> Events() {
    std::lock_guard<std::mutex> lock(mu);
    return events;
  }

  Status Configure(const std::string& config) override {
    configs.push_back(config);
    return config == "bad" ? Status::InvalidArgument("$.ipam: bad") : Status::Ok();
  }
  void Synchronize(const std::vector<Pod>& pods) override {
    for (const Pod& p : pods) synced.push_back(p.id + "@" + p.netns);
    std::lock_guard<std::mutex> lock(mu);
    background_left = background_per_sync;
  }
  Status Started(const Pod& pod) override {
    std::lock_guard<std::mutex> lock(mu);
    events.push_back("start " + pod.namespace_name + "/" + pod.name + " " + pod.uid + " " +
                     pod.netns);
    if (pod.name == "refused") return Status::Unavailable("no VF for you");
    if (pod.name == "slow") std::this_thread::sleep_for(std::chrono::milliseconds(400));
    return Status::Ok();
  }
  Status Stopped(const Pod& pod) override {
    std::lock_guard<std::mutex> lock(mu);
    events.push_back("stop " + pod.id);
    return Status::Ok();
  }
  std::vector<std::string> configs, synced, events;
  std::mutex mu;  // events and the background state: the session's thread and the test's
  std::condition_variable released_cv;
  int background_per_sync = 0, background_left = 0, background_done = 0;
  bool hold_first = false, released = false;
};

class NriSessionTest : public ::testing::Test {
 protected:
  void Connect(fake::FakeNriRuntimeOptions options, const std::vector<fake::NriPod>& pods = {},
               const std::string& idx = "90") {
    runtime_ = std::make_unique<fake::FakeNriRuntime>(dir_.path() + "/nri.sock", options);
    auto plugin_end = runtime_->PluginSocketPair();
    ASSERT_TRUE(plugin_end.ok());
    plugin_fd_ = std::move(*plugin_end);
    ASSERT_EQ(::pipe(stop_), 0);
    thread_ = std::thread([this, idx] {
      SessionOptions so{"hcashare", idx, "", std::chrono::milliseconds(3000), stop_[0]};
      PodPlugin plugin(handler_);
      result_ = RunSession(plugin_fd_.get(), so, plugin);
    });
    accepted_ = runtime_->AcceptPlugin(pods, std::chrono::milliseconds(5000));
  }
  void TearDown() override {
    handler_.Release();  // a test that failed while background work was held
    if (thread_.joinable()) {
      EXPECT_EQ(::write(stop_[1], "x", 1), 1);
      thread_.join();
    }
    ::close(stop_[0]);
    ::close(stop_[1]);
  }
  void Join() { thread_.join(); }

  TempDir dir_;
  RecordingHandler handler_;
  std::unique_ptr<fake::FakeNriRuntime> runtime_;
  UniqueFd plugin_fd_;
  int stop_[2] = {-1, -1};
  std::thread thread_;
  Status result_, accepted_;
};

const fake::NriPod kPod{"0123abcd", "pod-a", "uid-a", "ns", "/var/run/netns/cni-1"};

TEST_F(NriSessionTest, RegistersSubscribesToPodEventsAndHandsOverEachPod) {
  Connect({}, {kPod, {"host1", "hostnet", "uid-h", "ns", ""}});
  ASSERT_TRUE(accepted_.ok()) << accepted_.ToString();
  EXPECT_EQ(runtime_->plugin_name(), "hcashare");
  EXPECT_EQ(runtime_->plugin_idx(), "90");
  EXPECT_EQ(runtime_->events(), 0x7) << "run, stop and remove pod sandbox only";
  EXPECT_THAT(handler_.synced, ElementsAre("0123abcd@/var/run/netns/cni-1", "host1@"));
  ASSERT_TRUE(runtime_->RunPodSandbox(kPod).ok());
  ASSERT_TRUE(runtime_->StopPodSandbox(kPod).ok());
  ASSERT_TRUE(runtime_->RemovePodSandbox(kPod).ok());
  EXPECT_THAT(handler_.events, ElementsAre("start ns/pod-a uid-a /var/run/netns/cni-1",
                                           "stop 0123abcd", "stop 0123abcd"));
  EXPECT_THAT(runtime_->calls(), ElementsAre("Configure", "Synchronize", "RunPodSandbox",
                                             "StopPodSandbox", "RemovePodSandbox"));
}

TEST_F(NriSessionTest, AnOlderRuntimeDeliversPodEventsThroughStateChange) {
  fake::FakeNriRuntimeOptions o;
  o.state_change_only = true;
  Connect(o, {});
  ASSERT_TRUE(accepted_.ok()) << accepted_.ToString();
  ASSERT_TRUE(runtime_->RunPodSandbox(kPod).ok());
  ASSERT_TRUE(runtime_->StopPodSandbox(kPod).ok());
  EXPECT_THAT(handler_.events,
              ElementsAre("start ns/pod-a uid-a /var/run/netns/cni-1", "stop 0123abcd"));
  EXPECT_THAT(runtime_->calls(),
              ElementsAre("Configure", "Synchronize", "StateChange/1", "StateChange/2"));
}

TEST_F(NriSessionTest, ARefusedPodFailsItsStartWithTheHandlersReason) {
  Connect({}, {});
  ASSERT_TRUE(accepted_.ok());
  fake::NriPod refused = kPod;
  refused.name = "refused";
  Status st = runtime_->RunPodSandbox(refused);
  EXPECT_THAT(st.message(), HasSubstr("no VF for you"));
  EXPECT_TRUE(runtime_->connected()) << "a refusal is an answer, not a protocol failure";
}

TEST_F(NriSessionTest, ManyPodsArriveInChunksAndAreHandedOverOnce) {
  fake::FakeNriRuntimeOptions o;
  o.sync_chunk = 3;
  std::vector<fake::NriPod> pods;
  for (int i = 0; i < 10; ++i) pods.push_back({"id" + std::to_string(i), "p", "u", "ns", ""});
  Connect(o, pods);
  ASSERT_TRUE(accepted_.ok());
  EXPECT_EQ(handler_.synced.size(), 10u);
  EXPECT_EQ(std::count(runtime_->calls().begin(), runtime_->calls().end(), "Synchronize"), 4);
}

TEST_F(NriSessionTest, ABadConfigurationIsRefusedWithItsReason) {
  fake::FakeNriRuntimeOptions o;
  o.config = "bad";
  Connect(o, {});
  EXPECT_FALSE(accepted_.ok());
  EXPECT_THAT(runtime_->configure_error(), HasSubstr("$.ipam: bad"));
  Join();
  EXPECT_EQ(result_.code(), StatusCode::kUnavailable) << "the runtime closed the connection";
}

TEST_F(NriSessionTest, AnInvalidIndexIsRefusedAtRegistration) {
  Connect({}, {}, "9");
  EXPECT_FALSE(accepted_.ok());
  Join();
  EXPECT_EQ(result_.code(), StatusCode::kFailedPrecondition) << result_.ToString();
  EXPECT_THAT(result_.message(), HasSubstr("invalid plugin name or index"));
}

TEST_F(NriSessionTest, ASlowAnswerDropsThePluginAsTheRuntimeDoes) {
  fake::FakeNriRuntimeOptions o;
  o.request_timeout = std::chrono::milliseconds(100);
  Connect(o, {});
  ASSERT_TRUE(accepted_.ok());
  fake::NriPod slow = kPod;
  slow.name = "slow";
  EXPECT_TRUE(runtime_->RunPodSandbox(slow).ok()) << "the runtime goes on without the plugin";
  EXPECT_FALSE(runtime_->connected());
  Join();
  EXPECT_EQ(result_.code(), StatusCode::kUnavailable) << result_.ToString();
}

// Synchronize's answer goes out before the work it leaves (containerd bounds the call to
// 2 s by default), and a pod event that arrives meanwhile waits only for the piece of work
// under way, not for the rest.
TEST_F(NriSessionTest, WorkLeftBySynchronizeRunsBetweenTheRuntimesCalls) {
  handler_.background_per_sync = 3;
  handler_.hold_first = true;
  Connect({}, {kPod});
  ASSERT_TRUE(accepted_.ok()) << "answered while the first piece of work is held";
  ASSERT_TRUE(testing::WaitUntil([&] { return !handler_.Events().empty(); }));
  Status started;
  std::thread caller([&] { started = runtime_->RunPodSandbox(kPod); });
  // The runtime's call waits on the plugin's socket until the held piece of work ends.
  ASSERT_TRUE(testing::WaitUntil([&] {
    int queued = 0;
    return ::ioctl(plugin_fd_.get(), FIONREAD, &queued) == 0 && queued > 0;
  }));
  handler_.Release();
  caller.join();
  EXPECT_TRUE(started.ok()) << started.ToString();
  ASSERT_TRUE(testing::WaitUntil([&] { return handler_.Events().size() == 4; }));
  EXPECT_THAT(handler_.Events(),
              ElementsAre("background 1", "start ns/pod-a uid-a /var/run/netns/cni-1",
                          "background 2", "background 3"));
}

TEST_F(NriSessionTest, TheStopFdEndsTheSession) {
  Connect({}, {});
  ASSERT_TRUE(accepted_.ok());
  EXPECT_EQ(::write(stop_[1], "x", 1), 1);
  Join();
  EXPECT_TRUE(result_.ok()) << result_.ToString();
}

// CniPods' background work, one piece per call: the GC keeps the pods the runtime has
// (synchronized or started since, less those stopped since), then the catch-up skips a pod
// stopped or attached before its turn. The CNI here only records what it is asked.
TEST(NriCniPodsTest, TheCatchUpFollowsThePodEventsThatCameBeforeIt) {
  TempDir dir;
  const std::string cni = dir.path() + "/cni";
  std::ofstream(cni) << "#!/bin/sh\necho \"$CNI_COMMAND $CNI_CONTAINERID\" >> " << dir.path()
                     << "/calls.log\n[ \"$CNI_COMMAND\" = GC ] && cat > " << dir.path()
                     << "/gc.json\nexit 0\n";
  std::filesystem::permissions(cni, std::filesystem::perms::owner_all);
  CniPodsOptions o;
  o.cni_bin = cni;
  o.cni_path = dir.path();
  std::set<std::string> attached = {"eee"};
  o.may_have_attachments = [&](const Pod& p) { return attached.count(p.id) != 0; };
  CniPods pods(o);
  auto calls = [&] {
    std::vector<std::string> out;
    std::ifstream in(dir.path() + "/calls.log");
    for (std::string line; std::getline(in, line);) out.push_back(line);
    return out;
  };
  const std::string netns = "/proc/self/ns/net";
  const Pod a{"aaa", "a", "uid-a", "ns", netns}, b{"bbb", "b", "uid-b", "ns", netns},
      c{"ccc", "c", "uid-c", "ns", netns}, e{"eee", "e", "uid-e", "ns", netns},
      f{"fff", "f", "uid-f", "ns", netns};
  pods.Synchronize({a, b, c, e});
  EXPECT_TRUE(calls().empty()) << "nothing runs before the answer";
  ASSERT_TRUE(pods.Stopped(b).ok());
  ASSERT_TRUE(pods.Started(f).ok());
  EXPECT_TRUE(pods.Background());  // the GC
  std::ifstream gc_in(dir.path() + "/gc.json");
  const auto gc = nlohmann::json::parse(gc_in, nullptr, false);
  std::vector<std::string> kept;
  for (const auto& v : gc.value("cni.dev/valid-attachments", nlohmann::json::array())) {
    kept.push_back(v.value("containerID", ""));
  }
  EXPECT_THAT(kept, ::testing::UnorderedElementsAre("aaa", "ccc", "eee", "fff"));
  EXPECT_TRUE(pods.Background());   // a
  attached.insert("ccc");           // attached since (as its own start would)
  EXPECT_TRUE(pods.Background());   // b: stopped since
  EXPECT_TRUE(pods.Background());   // c: attached since
  EXPECT_FALSE(pods.Background());  // e: attached already
  EXPECT_FALSE(pods.Background()) << "nothing more until the next synchronization";
  EXPECT_THAT(calls(), ElementsAre("ADD fff", "GC ", "ADD aaa"));
  // A connection that ends mid-way leaves nothing to its successor, whose own
  // synchronization follows its configuration.
  pods.Synchronize({a});
  ASSERT_TRUE(pods.Configure("").ok());
  EXPECT_FALSE(pods.Background());
  EXPECT_THAT(calls(), ElementsAre("ADD fff", "GC ", "ADD aaa", "STATUS "));
}

TEST(NriPluginTest, MethodsNotSubscribedToAreUnimplemented) {
  RecordingHandler handler;
  PodPlugin plugin(handler);
  EXPECT_EQ(plugin.Call("CreateContainer", "").code, RpcCode::kUnimplemented);
  EXPECT_EQ(plugin.Call("UpdatePodSandbox", "").code, RpcCode::kUnimplemented);
  EXPECT_EQ(plugin.Call("RunPodSandbox", "\xff").code, RpcCode::kInvalidArgument);
  EXPECT_TRUE(handler.events.empty());
}

TEST(NriSessionRegistrationTest, ARuntimeThatNeverAnswersEndsTheSessionInTime) {
  int fds[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
  UniqueFd ours(fds[0]), theirs(fds[1]);
  RecordingHandler handler;
  PodPlugin plugin(handler);
  SessionOptions so{"hcashare", "90", "", std::chrono::milliseconds(200), -1};
  const auto began = std::chrono::steady_clock::now();
  Status st = RunSession(ours.get(), so, plugin);
  EXPECT_EQ(st.code(), StatusCode::kFailedPrecondition) << st.ToString();
  EXPECT_LT(std::chrono::steady_clock::now() - began, std::chrono::seconds(2));
  // What the plugin sent: its registration, on connection 2, stream 1.
  std::string got(256, '\0');
  const ssize_t n = ::recv(theirs.get(), got.data(), got.size(), MSG_DONTWAIT);
  ASSERT_GT(n, 18);
  TrunkReader reader;
  ASSERT_TRUE(reader.Feed(std::string_view(got.data(), static_cast<size_t>(n))).ok());
  auto m = reader.Next();
  ASSERT_TRUE(m);
  EXPECT_EQ(m->conn, kRuntimeServiceConn);
  EXPECT_EQ(m->stream_id, 1u);
  EXPECT_THAT(m->payload, HasSubstr("nri.pkg.api.v1alpha1.Runtime"));
  EXPECT_THAT(m->payload, HasSubstr("RegisterPlugin"));
}

TEST(NriSessionRegistrationTest, EvenStreamIdsFromTheRuntimeAreAProtocolError) {
  int fds[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
  UniqueFd ours(fds[0]), theirs(fds[1]);
  Message bad{kPluginServiceConn, 2, static_cast<uint8_t>(MessageType::kRequest), 0, ""};
  const std::string bytes = *EncodeMessage(bad);
  ASSERT_EQ(::send(theirs.get(), bytes.data(), bytes.size(), 0),
            static_cast<ssize_t>(bytes.size()));
  RecordingHandler handler;
  PodPlugin plugin(handler);
  SessionOptions so{"hcashare", "90", "", std::chrono::milliseconds(2000), -1};
  Status st = RunSession(ours.get(), so, plugin);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << st.ToString();
}

}  // namespace
}  // namespace hcashare::nri
