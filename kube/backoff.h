// Pacing for API calls: exponential back-off with jitter between retries, and a client-side
// token-bucket rate limit (a node daemon runs on every node: its calls add up). Both take
// their clock and randomness from the caller's side, so tests need no sleeps.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <random>

namespace hcashare::kube {

// How a Backoff grows.
struct BackoffPolicy {
  std::chrono::milliseconds initial{200};  // the first delay's ceiling
  std::chrono::milliseconds max{30000};    // no delay above this
  double factor = 2.0;                     // ceiling growth per attempt (>= 1)
};

// Delays between attempts: attempt n waits a random time in [c/2, c] where
// c = min(max, initial * factor^n) ("equal jitter": never zero, never in lock-step with
// other nodes). A Retry-After from the server replaces the computed delay. Not thread-safe.
class Backoff {
 public:
  // A back-off at its first delay; `seed` makes the jitter repeatable in tests.
  explicit Backoff(BackoffPolicy policy = {}, uint64_t seed = std::random_device{}());

  // The delay before the next attempt, and counts the attempt. `retry_after_seconds`, when
  // set, is used as it is (capped at policy.max).
  std::chrono::milliseconds Next(std::optional<int> retry_after_seconds = std::nullopt);
  // Back to the first delay (after a success).
  void Reset() { attempt_ = 0; }
  // Attempts counted since the last Reset().
  int attempts() const { return attempt_; }

 private:
  BackoffPolicy policy_;
  std::mt19937_64 rng_;
  int attempt_ = 0;
};

// A token bucket: `qps` tokens a second, at most `burst` saved up. Thread-safe.
class RateLimiter {
 public:
  using Clock = std::function<std::chrono::steady_clock::time_point()>;

  // qps <= 0 turns the limit off. `clock` defaults to std::chrono::steady_clock::now.
  RateLimiter(double qps, int burst, Clock clock = nullptr);

  // Takes a token if one is free within `max_wait`, and returns how long the caller must
  // wait before using it (zero when one is free now); nullopt, taking nothing, when the
  // wait would be longer.
  std::optional<std::chrono::nanoseconds> TryReserve(std::chrono::nanoseconds max_wait);

 private:
  const double qps_;
  const double burst_;
  const Clock clock_;
  std::mutex mu_;
  double tokens_;  // may go negative: tokens promised to waiting callers
  std::chrono::steady_clock::time_point last_;
};

}  // namespace hcashare::kube
