// kube/backoff.h: jittered exponential back-off and the token-bucket rate limit, on a
// fake clock (no sleeps).
#include "kube/backoff.h"

#include <gtest/gtest.h>

namespace hcashare::kube {
namespace {

using std::chrono::milliseconds;
using std::chrono::nanoseconds;

TEST(KubeBackoffTest, GrowsWithJitterUpToTheMax) {
  Backoff b({milliseconds(100), milliseconds(1000), 2.0}, /*seed=*/42);
  const int64_t ceilings[] = {100, 200, 400, 800, 1000, 1000, 1000};
  for (int64_t c : ceilings) {
    const milliseconds d = b.Next();
    EXPECT_GE(d.count(), c / 2) << c;
    EXPECT_LE(d.count(), c) << c;
  }
  EXPECT_EQ(b.attempts(), 7);
  b.Reset();
  EXPECT_LE(b.Next().count(), 100);
}

TEST(KubeBackoffTest, JitterSpreadsNodes) {
  Backoff a({}, 1);
  Backoff b({}, 2);
  bool differ = false;
  for (int i = 0; i < 8; ++i) differ |= a.Next() != b.Next();
  EXPECT_TRUE(differ);
}

TEST(KubeBackoffTest, RetryAfterWinsButIsCapped) {
  Backoff b({milliseconds(100), milliseconds(5000), 2.0}, 7);
  EXPECT_EQ(b.Next(3), milliseconds(3000));
  EXPECT_EQ(b.Next(60), milliseconds(5000));
  EXPECT_EQ(b.Next(0), milliseconds(0));
  EXPECT_EQ(b.attempts(), 3);
}

TEST(KubeRateLimiterTest, BurstThenSteadyRate) {
  auto now = std::chrono::steady_clock::time_point{};
  RateLimiter limiter(10, 3, [&] { return now; });  // a token every 100 ms
  for (int i = 0; i < 3; ++i) EXPECT_EQ(limiter.TryReserve(nanoseconds(0)), nanoseconds(0));
  // Empty: the next token is 100 ms away; a caller that cannot wait takes nothing.
  EXPECT_FALSE(limiter.TryReserve(milliseconds(50)));
  EXPECT_EQ(limiter.TryReserve(milliseconds(100)), milliseconds(100));
  // That token is promised: the one after is 200 ms away.
  EXPECT_EQ(limiter.TryReserve(milliseconds(500)), milliseconds(200));
  now += milliseconds(300);
  EXPECT_EQ(limiter.TryReserve(nanoseconds(0)), nanoseconds(0));
  // Idle time saves up at most `burst` tokens.
  now += std::chrono::seconds(60);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(limiter.TryReserve(nanoseconds(0)), nanoseconds(0));
  EXPECT_FALSE(limiter.TryReserve(nanoseconds(0)));
}

TEST(KubeRateLimiterTest, OffWhenQpsIsZero) {
  RateLimiter limiter(0, 1);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(limiter.TryReserve(nanoseconds(0)), nanoseconds(0));
}

}  // namespace
}  // namespace hcashare::kube
