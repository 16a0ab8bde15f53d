// kube/informer.h against testing/fake_apiserver.h over HTTPS on loopback: sync by pages,
// changes followed, transform and byte count, bookmarks, a stream cut mid-event, the
// server's end of a watch, 410 (as an ERROR event and as HTTP) with deletions found by the
// relist, 429 Retry-After, 5xx back-off, the memory bound, a prompt Stop() and reads while
// events stream (run under TSan in CI).
#include "kube/informer.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "kube/status_error.h"
#include "tests/kube_test_util.h"
#include "tests/test_util.h"

namespace hcashare::kube {
namespace {

using ::hcashare::testing::MsSince;
using ::hcashare::testing::WaitUntil;
using ::testing::HasSubstr;
using json = nlohmann::json;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr char kNads[] = "/apis/k8s.cni.cncf.io/v1/namespaces/ml/network-attachment-definitions";
constexpr char kAllNads[] = "/apis/k8s.cni.cncf.io/v1/network-attachment-definitions";

json Nad(const std::string& name, const std::string& config) {
  return {{"apiVersion", "k8s.cni.cncf.io/v1"},
          {"kind", "NetworkAttachmentDefinition"},
          {"metadata",
           {{"name", name}, {"annotations", {{"k8s.v1.cni.cncf.io/resourceName", "rdma/a"}}}}},
          {"spec", {{"config", config}}}};
}

std::string Config(const CachedObject& o) {
  return o ? (*o)["spec"].value("config", "") : "<absent>";
}

class KubeInformerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = testing::StartFakeApiServer();
    ASSERT_NE(server_, nullptr);
    client_ = testing::UnlimitedClient(*server_);
    ASSERT_NE(client_, nullptr);
  }

  // Options for kAllNads with a fast back-off and an event log.
  InformerOptions Options() {
    InformerOptions o;
    o.path = kAllNads;
    o.page_size = 2;
    o.backoff.initial = milliseconds(10);
    o.backoff.max = milliseconds(2000);
    o.backoff_seed = 1;
    o.on_event = [this](WatchEventType type, const CachedObject& object) {
      std::lock_guard<std::mutex> lock(mu_);
      events_.push_back(std::string(WatchEventTypeName(type)) + " " +
                        (*object)["metadata"].value("name", ""));
    };
    return o;
  }

  std::unique_ptr<Informer> Started(InformerOptions o) {
    auto informer = std::make_unique<Informer>(client_.get(), std::move(o));
    Status st = informer->Start();
    EXPECT_TRUE(st.ok()) << st.ToString();
    return informer;
  }

  std::vector<std::string> Events() {
    std::lock_guard<std::mutex> lock(mu_);
    return events_;
  }
  size_t CountEvent(const std::string& e) {
    std::vector<std::string> all = Events();
    return static_cast<size_t>(std::count(all.begin(), all.end(), e));
  }

  std::unique_ptr<fake::FakeApiServer> server_;
  std::unique_ptr<RestClient> client_;
  std::mutex mu_;
  std::vector<std::string> events_;
};

TEST_F(KubeInformerTest, SyncsInPagesAndFollowsChanges) {
  for (int i = 0; i < 5; ++i) server_->Seed(kNads, Nad("n" + std::to_string(i), "c"));
  auto informer = Started(Options());
  ASSERT_TRUE(informer->WaitForSync(milliseconds(5000))) << informer->LastError().ToString();
  EXPECT_EQ(informer->Size(), 5u);
  EXPECT_EQ(informer->Lists(), 1u);
  EXPECT_EQ(Config(informer->Get("ml", "n3")), "c");
  EXPECT_EQ(informer->Get("other", "n3"), nullptr);
  ASSERT_TRUE(WaitUntil([&] { return server_->open_watches() == 1; }));

  server_->Seed(kNads, Nad("new", "c1"));
  server_->Seed(kNads, Nad("n0", "c2"));
  ASSERT_TRUE(server_->Delete(kNads, "n1"));
  ASSERT_TRUE(WaitUntil([&] { return informer->Get("ml", "n1") == nullptr; }));
  // The cache changes before on_event runs: wait for the callback too.
  ASSERT_TRUE(WaitUntil([&] { return CountEvent("DELETED n1") >= 1; }));
  EXPECT_EQ(Config(informer->Get("ml", "new")), "c1");
  EXPECT_EQ(Config(informer->Get("ml", "n0")), "c2");
  EXPECT_EQ(informer->Size(), 5u);
  // The version is taken after on_event returns.
  EXPECT_TRUE(WaitUntil([&] {
    return informer->ResourceVersion() == std::to_string(server_->resource_version());
  })) << informer->ResourceVersion();
  EXPECT_EQ(CountEvent("ADDED new"), 1u);
  EXPECT_EQ(CountEvent("MODIFIED n0"), 1u);
  EXPECT_EQ(CountEvent("DELETED n1"), 1u);
  EXPECT_TRUE(informer->LastError().ok());
  // Pages of two: three list requests.
  size_t lists = 0;
  for (const auto& r : server_->Requests()) lists += r.target.find("limit=2") != std::string::npos;
  EXPECT_EQ(lists, 3u);
}

TEST_F(KubeInformerTest, TransformShapesWhatIsStoredAndCounted) {
  server_->Seed(kNads, Nad("a", std::string(1000, 'x')));
  InformerOptions o = Options();
  o.transform = [](json object) {
    return json{{"metadata",
                 {{"name", object["metadata"]["name"]},
                  {"namespace", object["metadata"].value("namespace", "")},
                  {"annotations", object["metadata"]["annotations"]}}}};
  };
  auto informer = Started(std::move(o));
  ASSERT_TRUE(informer->WaitForSync(milliseconds(5000)));
  CachedObject a = informer->Get("ml", "a");
  ASSERT_NE(a, nullptr);
  EXPECT_FALSE(a->contains("spec"));
  EXPECT_EQ((*a)["metadata"]["annotations"]["k8s.v1.cni.cncf.io/resourceName"], "rdma/a");
  EXPECT_EQ(informer->Bytes(), a->dump().size());
  EXPECT_LT(informer->Bytes(), 1000u);
}

TEST_F(KubeInformerTest, BookmarksAdvanceTheVersion) {
  server_->Seed(kNads, Nad("a", "c"));
  auto informer = Started(Options());
  ASSERT_TRUE(informer->WaitForSync(milliseconds(5000)));
  ASSERT_TRUE(WaitUntil([&] { return server_->open_watches() == 1; }));
  server_->Seed("/api/v1/namespaces/ml/configmaps", {{"metadata", {{"name", "x"}}}});
  const std::string now = std::to_string(server_->resource_version());
  EXPECT_NE(informer->ResourceVersion(), now);
  server_->SendBookmarks();
  ASSERT_TRUE(WaitUntil([&] { return informer->ResourceVersion() == now; }));
  EXPECT_EQ(informer->Size(), 1u);
}

TEST_F(KubeInformerTest, CutMidEventReconnectsWithoutABogusEventOrALostChange) {
  server_->Seed(kNads, Nad("a", "c1"));
  auto informer = Started(Options());
  ASSERT_TRUE(informer->WaitForSync(milliseconds(5000)));
  ASSERT_TRUE(WaitUntil([&] { return server_->open_watches() == 1; }));
  server_->CutNextEvent();
  server_->Seed(kNads, Nad("a", "c2"));
  ASSERT_TRUE(WaitUntil([&] { return Config(informer->Get("ml", "a")) == "c2"; }));
  ASSERT_TRUE(WaitUntil([&] { return CountEvent("MODIFIED a") >= 1; }));
  EXPECT_EQ(Events(), (std::vector<std::string>{"ADDED a", "MODIFIED a"}));
  EXPECT_EQ(informer->Lists(), 1u);  // watched again from the last version, no relist
  EXPECT_GE(server_->watches_started(), 2u);
}

TEST_F(KubeInformerTest, ServerEndOfWatchRewatchesFromTheLastVersion) {
  server_->Seed(kNads, Nad("a", "c1"));
  auto informer = Started(Options());
  ASSERT_TRUE(informer->WaitForSync(milliseconds(5000)));
  ASSERT_TRUE(WaitUntil([&] { return server_->open_watches() == 1; }));
  const std::string rv = informer->ResourceVersion();
  server_->EndWatches();
  ASSERT_TRUE(WaitUntil([&] { return server_->watches_started() == 2; }));
  EXPECT_THAT(server_->Requests().back().target, HasSubstr("resourceVersion=" + rv));
  server_->Seed(kNads, Nad("b", "c"));
  ASSERT_TRUE(WaitUntil([&] { return informer->Get("ml", "b") != nullptr; }));
  EXPECT_EQ(informer->Lists(), 1u);
}

TEST_F(KubeInformerTest, GoneEventRelists) {
  server_->Seed(kNads, Nad("a", "c1"));
  auto informer = Started(Options());
  ASSERT_TRUE(informer->WaitForSync(milliseconds(5000)));
  ASSERT_TRUE(WaitUntil([&] { return server_->open_watches() == 1; }));
  server_->ExpireWatches();
  ASSERT_TRUE(WaitUntil([&] { return informer->Lists() == 2; }));
  EXPECT_TRUE(informer->Synced());
  EXPECT_EQ(Config(informer->Get("ml", "a")), "c1");
  EXPECT_EQ(CountEvent("ADDED a"), 1u);  // the relist found nothing new
}

// While the informer cannot reach the server (503s), an object is deleted and the history
// compacted: the watch from the old version gets 410 and the relist finds the deletion.
TEST_F(KubeInformerTest, GoneAnswerRelistsAndFindsDeletions) {
  server_->SetGoneAsHttp(true);
  server_->Seed(kNads, Nad("a", "c"));
  server_->Seed(kNads, Nad("b", "c"));
  auto informer = Started(Options());
  ASSERT_TRUE(informer->WaitForSync(milliseconds(5000)));
  ASSERT_TRUE(WaitUntil([&] { return server_->open_watches() == 1; }));
  server_->InjectError(503, "ServiceUnavailable", 1000);
  server_->EndWatches();
  ASSERT_TRUE(WaitUntil([&] { return HttpCodeOf(informer->LastError()) == 503; }));
  ASSERT_TRUE(server_->Delete(kNads, "b"));
  server_->CompactHistory();
  server_->InjectError(503, "ServiceUnavailable", 0);
  ASSERT_TRUE(WaitUntil([&] { return informer->Get("ml", "b") == nullptr; }));
  ASSERT_TRUE(WaitUntil([&] { return CountEvent("DELETED b") >= 1; }));
  EXPECT_EQ(informer->Lists(), 2u);
  EXPECT_NE(informer->Get("ml", "a"), nullptr);
  EXPECT_EQ(CountEvent("DELETED b"), 1u);
  EXPECT_TRUE(informer->Synced());
}

TEST_F(KubeInformerTest, TooManyRequestsWaitsRetryAfter) {
  auto informer = Started(Options());
  ASSERT_TRUE(informer->WaitForSync(milliseconds(5000)));
  ASSERT_TRUE(WaitUntil([&] { return server_->open_watches() == 1; }));
  server_->InjectError(429, "TooManyRequests", 1, /*retry_after=*/1);
  const auto start = Clock::now();
  server_->EndWatches();
  ASSERT_TRUE(WaitUntil([&] { return IsTooManyRequests(informer->LastError()); }));
  ASSERT_TRUE(WaitUntil([&] { return server_->watches_started() == 2; }));
  EXPECT_GE(MsSince(start), 950);  // the back-off alone would wait 10 ms
}

TEST_F(KubeInformerTest, ServerErrorsAreRetriedWithBackoff) {
  server_->Seed(kNads, Nad("a", "c"));
  server_->InjectError(500, "InternalError", 3);
  InformerOptions o = Options();
  o.backoff.initial = milliseconds(40);  // waits of at least 20 + 40 + 80 ms
  const auto start = Clock::now();
  auto informer = Started(std::move(o));
  ASSERT_TRUE(informer->WaitForSync(milliseconds(5000))) << informer->LastError().ToString();
  EXPECT_GE(MsSince(start), 140);
  size_t lists = 0;  // three 500s, then the list (a watch may follow)
  for (const auto& r : server_->Requests()) lists += r.target.find("limit=2") != std::string::npos;
  EXPECT_EQ(lists, 4u);
  EXPECT_TRUE(informer->LastError().ok());
}

TEST_F(KubeInformerTest, ListOverTheBoundGivesUp) {
  for (int i = 0; i < 5; ++i) server_->Seed(kNads, Nad("n" + std::to_string(i), "c"));
  InformerOptions o = Options();
  o.max_objects = 3;
  auto informer = Started(std::move(o));
  ASSERT_TRUE(WaitUntil([&] { return informer->GaveUp(); }));
  EXPECT_FALSE(informer->WaitForSync(milliseconds(10)));
  EXPECT_EQ(informer->LastError().code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(informer->LastError().message(), HasSubstr("max_objects 3"));
  EXPECT_THAT(informer->LastError().message(), HasSubstr("GETs"));
  EXPECT_EQ(informer->Size(), 0u);
}

// Issue 34: past its bound the informer gave up for good (a frozen fallback to GETs). With
// retry_after_give_up it lists again, gives up again while the kind is still over, and is
// synced once the kind fits.
TEST_F(KubeInformerTest, AfterGivingUpItListsAgainAndRecoversWhenTheKindFits) {
  for (int i = 0; i < 4; ++i) server_->Seed(kNads, Nad("n" + std::to_string(i), "c"));
  InformerOptions o = Options();
  o.max_objects = 3;
  o.retry_after_give_up = milliseconds(50);
  auto informer = Started(std::move(o));
  ASSERT_TRUE(WaitUntil([&] { return informer->GaveUp(); }));
  const size_t asked = server_->Requests().size();
  ASSERT_TRUE(WaitUntil([&] { return server_->Requests().size() > asked + 2; }));  // listed again
  EXPECT_TRUE(informer->GaveUp());                                                 // still over
  EXPECT_FALSE(informer->Synced());
  ASSERT_TRUE(server_->Delete(kNads, "n3"));
  ASSERT_TRUE(WaitUntil([&] { return informer->Synced(); })) << informer->LastError().ToString();
  EXPECT_FALSE(informer->GaveUp());
  EXPECT_EQ(informer->Size(), 3u);
  EXPECT_TRUE(informer->LastError().ok());
}

// A relist (after 410) shares the stored object of every unchanged item instead of holding a
// second copy of the cache: the peak is one cache plus what changed.
TEST_F(KubeInformerTest, ARelistSharesTheObjectsThatDidNotChange) {
  server_->Seed(kNads, Nad("same", "c"));
  server_->Seed(kNads, Nad("changes", "c1"));
  auto informer = Started(Options());
  ASSERT_TRUE(informer->WaitForSync(milliseconds(5000)));
  ASSERT_TRUE(WaitUntil([&] { return server_->open_watches() == 1; }));
  const CachedObject same = informer->Get("ml", "same");
  const CachedObject before = informer->Get("ml", "changes");
  server_->SetGoneAsHttp(true);
  server_->InjectError(503, "ServiceUnavailable", 1000);
  server_->EndWatches();
  ASSERT_TRUE(WaitUntil([&] { return HttpCodeOf(informer->LastError()) == 503; }));
  server_->Seed(kNads, Nad("changes", "c2"));
  server_->CompactHistory();
  server_->InjectError(503, "ServiceUnavailable", 0);
  ASSERT_TRUE(WaitUntil([&] { return informer->Lists() == 2; }));
  EXPECT_EQ(informer->Get("ml", "same").get(), same.get());  // the very same object
  EXPECT_NE(informer->Get("ml", "changes").get(), before.get());
  EXPECT_EQ(Config(informer->Get("ml", "changes")), "c2");
}

TEST_F(KubeInformerTest, WatchOverTheByteBoundGivesUp) {
  server_->Seed(kNads, Nad("a", "c"));
  InformerOptions o = Options();
  o.max_bytes = 2000;
  auto informer = Started(std::move(o));
  ASSERT_TRUE(informer->WaitForSync(milliseconds(5000)));
  ASSERT_TRUE(WaitUntil([&] { return server_->open_watches() == 1; }));
  server_->Seed(kNads, Nad("big", std::string(3000, 'x')));
  ASSERT_TRUE(WaitUntil([&] { return informer->GaveUp(); }));
  EXPECT_FALSE(informer->Synced());
  EXPECT_THAT(informer->LastError().message(), HasSubstr("max_bytes 2000"));
  EXPECT_EQ(informer->Size(), 0u);
  EXPECT_EQ(informer->Bytes(), 0u);
}

TEST_F(KubeInformerTest, StopIsPromptWhileTheWatchIsIdle) {
  auto informer = Started(Options());
  ASSERT_TRUE(informer->WaitForSync(milliseconds(5000)));
  ASSERT_TRUE(WaitUntil([&] { return server_->open_watches() == 1; }));
  const auto start = Clock::now();
  informer->Stop();
  EXPECT_LT(MsSince(start), 1000);
}

TEST_F(KubeInformerTest, StopIsPromptWhileTheServerStalls) {
  auto informer = Started(Options());
  ASSERT_TRUE(informer->WaitForSync(milliseconds(5000)));
  ASSERT_TRUE(WaitUntil([&] { return server_->open_watches() == 1; }));
  server_->SetStall(true);
  server_->EndWatches();  // the next watch request is never answered
  const size_t seen = server_->Requests().size();
  ASSERT_TRUE(WaitUntil([&] { return server_->Requests().size() > seen; }));
  const auto start = Clock::now();
  informer->Stop();
  EXPECT_LT(MsSince(start), 1000);
}

TEST_F(KubeInformerTest, StopIsPromptWhileTheListStalls) {
  server_->SetStall(true);  // the list request is never answered
  auto informer = Started(Options());
  ASSERT_TRUE(WaitUntil([&] { return !server_->Requests().empty(); }));
  const auto start = Clock::now();
  informer->Stop();
  EXPECT_LT(MsSince(start), 1000);
  EXPECT_FALSE(informer->Synced());
}

TEST_F(KubeInformerTest, ReadsWhileEventsStream) {
  auto informer = Started(Options());
  ASSERT_TRUE(informer->WaitForSync(milliseconds(5000)));
  ASSERT_TRUE(WaitUntil([&] { return server_->open_watches() == 1; }));
  std::atomic<bool> done{false};
  std::atomic<size_t> reads{0};
  std::vector<std::thread> readers;
  for (int t = 0; t < 3; ++t) {
    readers.emplace_back([&] {
      while (!done) {
        CachedObject o = informer->Get("ml", "n7");
        if (o) {
          EXPECT_EQ((*o)["metadata"]["name"], "n7");
        }
        for (const CachedObject& each : informer->List()) EXPECT_TRUE(each->contains("metadata"));
        (void)informer->Size();
        (void)informer->Bytes();
        (void)informer->Synced();
        ++reads;
      }
    });
  }
  for (int i = 0; i < 100; ++i)
    server_->Seed(kNads, Nad("n" + std::to_string(i % 20), std::to_string(i)));
  ASSERT_TRUE(WaitUntil([&] { return Config(informer->Get("ml", "n19")) == "99"; }));
  done = true;
  for (auto& t : readers) t.join();
  EXPECT_EQ(informer->Size(), 20u);
  EXPECT_GT(reads.load(), 0u);
}

TEST_F(KubeInformerTest, BadOptionsAndASecondStartAreRefused) {
  InformerOptions o = Options();
  o.path = "nads";
  EXPECT_EQ(Informer(client_.get(), o).Start().code(), StatusCode::kInvalidArgument);
  o = Options();
  o.max_bytes = 0;
  EXPECT_EQ(Informer(client_.get(), o).Start().code(), StatusCode::kInvalidArgument);
  auto informer = Started(Options());
  EXPECT_EQ(informer->Start().code(), StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace hcashare::kube
