// kube/list.h and kube/watch.h (over RestClient::Stream) against testing/fake_apiserver.h
// over HTTPS on loopback: pages followed, an expired continue token, the item bound,
// selectors; watch events in order, bookmarks, a stream cut mid-event, 410 as an HTTP
// answer and as an ERROR event, the idle timeout, the line cap and a cancel.
#include "kube/watch.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "kube/list.h"
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

constexpr char kConfigMaps[] = "/api/v1/namespaces/ml/configmaps";

json ConfigMap(const std::string& name, const std::string& value,
               const json& labels = json::object()) {
  return {{"metadata", {{"name", name}, {"labels", labels}}}, {"data", {{"k", value}}}};
}

// A Watch() on a thread of its own, its events gathered.
class WatchRun {
 public:
  WatchRun(RestClient* client, WatchOptions options) {
    thread_ = std::thread([this, client, options] {
      Status st = Watch(*client, kConfigMaps, options, [&](const WatchEvent& e) {
        std::lock_guard<std::mutex> lock(mu_);
        events_.push_back(e);
        return true;
      });
      std::lock_guard<std::mutex> lock(mu_);
      result_ = st;
      done_ = true;
    });
  }
  ~WatchRun() { thread_.join(); }

  std::vector<WatchEvent> events() {
    std::lock_guard<std::mutex> lock(mu_);
    return events_;
  }
  size_t count() { return events().size(); }
  bool done() {
    std::lock_guard<std::mutex> lock(mu_);
    return done_;
  }
  Status result() {
    std::lock_guard<std::mutex> lock(mu_);
    return result_;
  }

 private:
  std::mutex mu_;
  std::vector<WatchEvent> events_;
  Status result_;
  bool done_ = false;
  std::thread thread_;
};

class KubeWatchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = testing::StartFakeApiServer();
    ASSERT_NE(server_, nullptr);
    client_ = testing::UnlimitedClient(*server_);
    ASSERT_NE(client_, nullptr);
  }

  std::string Rv() const { return std::to_string(server_->resource_version()); }

  WatchOptions From(const std::string& rv) {
    WatchOptions o;
    o.resource_version = rv;
    o.cancel = &cancel_;
    return o;
  }

  StreamCancel cancel_;
  std::unique_ptr<fake::FakeApiServer> server_;
  std::unique_ptr<RestClient> client_;
};

TEST_F(KubeWatchTest, ListFollowsPages) {
  for (int i = 0; i < 7; ++i) server_->Seed(kConfigMaps, ConfigMap("cm" + std::to_string(i), "v"));
  ListOptions options;
  options.limit = 3;
  Result<ListResult> r = ListAll(*client_, kConfigMaps, options);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->items.size(), 7u);
  for (int i = 0; i < 7; ++i) EXPECT_EQ(r->items[i]["metadata"]["name"], "cm" + std::to_string(i));
  EXPECT_EQ(r->resource_version, Rv());
  std::vector<fake::SeenRequest> seen = server_->Requests();
  ASSERT_EQ(seen.size(), 3u);
  EXPECT_THAT(seen[0].target, HasSubstr("limit=3"));
  EXPECT_THAT(seen[0].target, ::testing::Not(HasSubstr("continue=")));
  EXPECT_THAT(seen[1].target, HasSubstr("continue="));
  EXPECT_THAT(seen[2].target, HasSubstr("continue="));
}

// Issue 34: a page is parsed item by item as it arrives, so a page of large objects (a
// tenant's NADs of 1 MiB each) is no longer bounded by the client's answer cap, nor held
// whole: a client whose cap is 2 MiB lists 8 objects of 1 MiB in one page.
TEST_F(KubeWatchTest, APageLargerThanTheAnswerCapIsReadItemByItem) {
  for (int i = 0; i < 8; ++i) {
    server_->Seed(kConfigMaps, ConfigMap("big" + std::to_string(i), std::string(1 << 20, 'x')));
  }
  kube::RestOptions o;
  o.qps = 0;
  o.max_response_bytes = size_t{2} << 20;
  auto small = kube::RestClient::Create(testing::ConfigFor(*server_), o);
  ASSERT_TRUE(small.ok());
  size_t seen = 0;
  Result<std::string> rv = ListEach(**small, kConfigMaps, ListOptions{}, [&](json item) {
    EXPECT_EQ(item["data"]["k"].get<std::string>().size(), size_t{1} << 20);
    ++seen;
    return Status::Ok();
  });
  ASSERT_TRUE(rv.ok()) << rv.status().ToString();
  EXPECT_EQ(seen, 8u);
  // An item over the list's own bound is refused, naming the page.
  ListOptions tight;
  tight.max_item_bytes = 512 << 10;
  Status st = ListEach(**small, kConfigMaps, tight, [](json) { return Status::Ok(); }).status();
  EXPECT_EQ(st.code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(st.message(), ::testing::AllOf(HasSubstr("GET /api/v1/namespaces/"),
                                             HasSubstr("larger than 524288 bytes")));
}

TEST_F(KubeWatchTest, ExpiredContinueRestartsTheListOnce) {
  for (int i = 0; i < 5; ++i) server_->Seed(kConfigMaps, ConfigMap("cm" + std::to_string(i), "v"));
  ListOptions options;
  options.limit = 2;
  int restarts = 0;
  int expire_left = 1;
  std::vector<std::string> names;
  auto on_item = [&](json item) {
    names.push_back(item["metadata"]["name"]);
    if (names.size() == 2 && expire_left-- > 0) server_->ExpireContinueTokens();
    return Status::Ok();
  };
  auto on_restart = [&] {
    ++restarts;
    names.clear();
  };
  Result<std::string> rv = ListEach(*client_, kConfigMaps, options, on_item, on_restart);
  ASSERT_TRUE(rv.ok()) << rv.status().ToString();
  EXPECT_EQ(restarts, 1);
  EXPECT_EQ(names, (std::vector<std::string>{"cm0", "cm1", "cm2", "cm3", "cm4"}));

  // A second expiry in the same list is returned.
  expire_left = 2;
  names.clear();
  restarts = 0;
  auto twice = [&](json item) {
    names.push_back(item["metadata"]["name"]);
    if (names.size() % 2 == 0 && expire_left-- > 0) server_->ExpireContinueTokens();
    return Status::Ok();
  };
  rv = ListEach(*client_, kConfigMaps, options, twice, on_restart);
  EXPECT_TRUE(IsGone(rv.status())) << rv.status().ToString();
  EXPECT_EQ(restarts, 1);
}

TEST_F(KubeWatchTest, ListRefusesMoreThanMaxItems) {
  for (int i = 0; i < 5; ++i) server_->Seed(kConfigMaps, ConfigMap("cm" + std::to_string(i), "v"));
  ListOptions options;
  options.limit = 2;
  options.max_items = 4;
  Result<ListResult> r = ListAll(*client_, kConfigMaps, options);
  EXPECT_EQ(r.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(r.status().message(), HasSubstr("more than 4 items"));
  options.max_items = 5;
  EXPECT_TRUE(ListAll(*client_, kConfigMaps, options).ok());
  options.limit = 0;
  EXPECT_EQ(ListAll(*client_, kConfigMaps, options).status().code(), StatusCode::kInvalidArgument);
}

TEST_F(KubeWatchTest, ListSelectors) {
  server_->Seed(kConfigMaps, ConfigMap("a", "1", {{"app", "x"}}));
  server_->Seed(kConfigMaps, ConfigMap("b", "2", {{"app", "y"}}));
  server_->Seed("/api/v1/namespaces/other/configmaps", ConfigMap("c", "3", {{"app", "x"}}));
  ListOptions options;
  options.label_selector = "app=x";
  Result<ListResult> r = ListAll(*client_, "/api/v1/configmaps", options);  // every namespace
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->items.size(), 2u);
  EXPECT_EQ(r->items[0]["metadata"]["name"], "a");
  EXPECT_EQ(r->items[1]["metadata"]["name"], "c");
  options = {};
  options.field_selector = "metadata.name=b";
  r = ListAll(*client_, kConfigMaps, options);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->items.size(), 1u);
  EXPECT_EQ(r->items[0]["data"]["k"], "2");
}

TEST_F(KubeWatchTest, EventsArriveInOrder) {
  server_->Seed(kConfigMaps, ConfigMap("a", "1"));
  WatchRun run(client_.get(), From(Rv()));
  ASSERT_TRUE(WaitUntil([&] { return server_->open_watches() == 1; }));
  server_->Seed(kConfigMaps, ConfigMap("b", "1"));
  server_->Seed(kConfigMaps, ConfigMap("a", "2"));
  ASSERT_TRUE(server_->Delete(kConfigMaps, "b"));
  server_->Seed("/api/v1/namespaces/ml/secrets", ConfigMap("s", "1"));  // another kind
  ASSERT_TRUE(WaitUntil([&] { return run.count() >= 3; }));
  server_->EndWatches();  // as the server's timeout does: a clean end
  ASSERT_TRUE(WaitUntil([&] { return run.done(); }));
  EXPECT_TRUE(run.result().ok()) << run.result().ToString();
  std::vector<WatchEvent> events = run.events();
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[0].type, WatchEventType::kAdded);
  EXPECT_EQ(events[0].object["metadata"]["name"], "b");
  EXPECT_EQ(events[1].type, WatchEventType::kModified);
  EXPECT_EQ(events[1].object["data"]["k"], "2");
  EXPECT_EQ(events[2].type, WatchEventType::kDeleted);
  EXPECT_EQ(events[2].object["metadata"]["name"], "b");
  EXPECT_LT(std::stoll(events[0].resource_version), std::stoll(events[1].resource_version));
  EXPECT_LT(std::stoll(events[1].resource_version), std::stoll(events[2].resource_version));
  EXPECT_THAT(server_->Requests().back().target, HasSubstr("allowWatchBookmarks=true"));
}

TEST_F(KubeWatchTest, WithoutVersionEveryObjectComesAsAdded) {
  server_->Seed(kConfigMaps, ConfigMap("a", "1"));
  server_->Seed(kConfigMaps, ConfigMap("b", "1"));
  WatchRun run(client_.get(), From(""));
  ASSERT_TRUE(WaitUntil([&] { return run.count() == 2; }));
  EXPECT_EQ(run.events()[1].type, WatchEventType::kAdded);
  cancel_.Cancel();
}

TEST_F(KubeWatchTest, BookmarkCarriesTheVersion) {
  WatchRun run(client_.get(), From(Rv()));
  ASSERT_TRUE(WaitUntil([&] { return server_->open_watches() == 1; }));
  server_->Seed("/api/v1/namespaces/ml/secrets", ConfigMap("s", "1"));  // not watched
  server_->SendBookmarks();
  ASSERT_TRUE(WaitUntil([&] { return run.count() == 1; }));
  EXPECT_EQ(run.events()[0].type, WatchEventType::kBookmark);
  EXPECT_EQ(run.events()[0].resource_version, Rv());
  cancel_.Cancel();
}

TEST_F(KubeWatchTest, StreamCutMidEventIsAnErrorWithoutAPartEvent) {
  WatchRun run(client_.get(), From(Rv()));
  ASSERT_TRUE(WaitUntil([&] { return server_->open_watches() == 1; }));
  server_->CutNextEvent();
  server_->Seed(kConfigMaps, ConfigMap("a", "1"));
  ASSERT_TRUE(WaitUntil([&] { return run.done(); }));
  EXPECT_EQ(run.result().code(), StatusCode::kUnavailable) << run.result().ToString();
  EXPECT_EQ(run.count(), 0u);
}

TEST_F(KubeWatchTest, TooOldVersionIsGoneAsEventAndAsHttp) {
  const std::string old = Rv();
  server_->Seed(kConfigMaps, ConfigMap("a", "1"));
  server_->CompactHistory();
  Status st = Watch(*client_, kConfigMaps, From(old), [](const WatchEvent&) { return true; });
  EXPECT_TRUE(IsGone(st)) << st.ToString();
  EXPECT_THAT(st.message(), HasSubstr("ERROR event"));
  server_->SetGoneAsHttp(true);
  st = Watch(*client_, kConfigMaps, From(old), [](const WatchEvent&) { return true; });
  EXPECT_TRUE(IsGone(st)) << st.ToString();
  EXPECT_THAT(st.message(), ::testing::Not(HasSubstr("ERROR event")));
  // The current version is fine.
  WatchRun run(client_.get(), From(Rv()));
  ASSERT_TRUE(WaitUntil([&] { return server_->open_watches() == 1; }));
  cancel_.Cancel();
}

TEST_F(KubeWatchTest, ExpiredWatchEndsWithGone) {
  WatchRun run(client_.get(), From(Rv()));
  ASSERT_TRUE(WaitUntil([&] { return server_->open_watches() == 1; }));
  server_->ExpireWatches();
  ASSERT_TRUE(WaitUntil([&] { return run.done(); }));
  EXPECT_TRUE(IsGone(run.result())) << run.result().ToString();
}

TEST_F(KubeWatchTest, CancelEndsAnIdleWatchPromptly) {
  WatchRun run(client_.get(), From(Rv()));
  ASSERT_TRUE(WaitUntil([&] { return server_->open_watches() == 1; }));
  const auto start = Clock::now();
  cancel_.Cancel();
  ASSERT_TRUE(WaitUntil([&] { return run.done(); }));
  EXPECT_LT(MsSince(start), 1000);
  EXPECT_THAT(run.result().message(), HasSubstr("cancelled"));
  // A watch started after the cancel fails at once.
  Status st = Watch(*client_, kConfigMaps, From(Rv()), [](const WatchEvent&) { return true; });
  EXPECT_THAT(st.message(), HasSubstr("cancelled"));
}

TEST_F(KubeWatchTest, SilentStreamTimesOut) {
  WatchOptions o = From(Rv());
  o.idle_timeout = milliseconds(200);
  const auto start = Clock::now();
  Status st = Watch(*client_, kConfigMaps, o, [](const WatchEvent&) { return true; });
  EXPECT_EQ(st.code(), StatusCode::kUnavailable);
  EXPECT_THAT(st.message(), HasSubstr("no data for 200 ms"));
  EXPECT_GE(MsSince(start), 190);
}

TEST_F(KubeWatchTest, OversizeEventIsRefused) {
  server_->Seed(kConfigMaps, ConfigMap("big", std::string(5000, 'x')));
  WatchOptions o = From("");
  o.max_event_bytes = 1000;
  Status st = Watch(*client_, kConfigMaps, o, [](const WatchEvent&) { return true; });
  EXPECT_EQ(st.code(), StatusCode::kFailedPrecondition) << st.ToString();
  EXPECT_THAT(st.message(), HasSubstr("longer than 1000 bytes"));
}

TEST_F(KubeWatchTest, ServerEndsTheWatchAfterItsTimeout) {
  WatchOptions o = From(Rv());
  o.timeout_seconds = 1;
  const auto start = Clock::now();
  Status st = Watch(*client_, kConfigMaps, o, [](const WatchEvent&) { return true; });
  EXPECT_TRUE(st.ok()) << st.ToString();
  EXPECT_GE(MsSince(start), 900);
  EXPECT_THAT(server_->Requests().back().target, HasSubstr("timeoutSeconds=1"));
}

TEST_F(KubeWatchTest, BadEventLinesAreNamed) {
  EXPECT_THAT(ParseWatchEvent("{").status().message(), HasSubstr("not a JSON object"));
  EXPECT_THAT(ParseWatchEvent(R"({"object":{}})").status().message(), HasSubstr("without a type"));
  EXPECT_THAT(ParseWatchEvent(R"({"type":"NEW","object":{}})").status().message(),
              HasSubstr("unknown type \"NEW\""));
  EXPECT_THAT(ParseWatchEvent(R"({"type":"ADDED"})").status().message(),
              HasSubstr("without an object"));
  Result<WatchEvent> e =
      ParseWatchEvent(R"({"type":"MODIFIED","object":{"metadata":{"resourceVersion":"7"}}})");
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->type, WatchEventType::kModified);
  EXPECT_EQ(e->resource_version, "7");
}

TEST_F(KubeWatchTest, ErrorAnswerToTheWatchIsTyped) {
  server_->InjectError(429, "TooManyRequests", 1, 3);
  Status st = Watch(*client_, kConfigMaps, From(Rv()), [](const WatchEvent&) { return true; });
  EXPECT_TRUE(IsTooManyRequests(st)) << st.ToString();
  EXPECT_EQ(RetryAfterOf(st), 3);
}

}  // namespace
}  // namespace hcashare::kube
