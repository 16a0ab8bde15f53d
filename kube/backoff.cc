#include "kube/backoff.h"

#include <algorithm>
#include <cmath>

namespace hcashare::kube {

Backoff::Backoff(BackoffPolicy policy, uint64_t seed) : policy_(policy), rng_(seed) {
  policy_.factor = std::max(policy_.factor, 1.0);
  policy_.initial = std::max(policy_.initial, std::chrono::milliseconds(1));
  policy_.max = std::max(policy_.max, policy_.initial);
}

std::chrono::milliseconds Backoff::Next(std::optional<int> retry_after_seconds) {
  const int n = attempt_;
  if (attempt_ < 64) ++attempt_;
  if (retry_after_seconds) {
    return std::min<std::chrono::milliseconds>(
        std::chrono::seconds(std::max(*retry_after_seconds, 0)), policy_.max);
  }
  const double ceiling =
      std::min(static_cast<double>(policy_.initial.count()) * std::pow(policy_.factor, n),
               static_cast<double>(policy_.max.count()));
  const auto c = static_cast<int64_t>(ceiling);
  std::uniform_int_distribution<int64_t> jitter(c / 2, c);
  return std::chrono::milliseconds(jitter(rng_));
}

RateLimiter::RateLimiter(double qps, int burst, Clock clock)
    : qps_(qps),
      burst_(std::max(burst, 1)),
      clock_(clock ? std::move(clock) : Clock([] { return std::chrono::steady_clock::now(); })),
      tokens_(burst_),
      last_(clock_()) {}

std::optional<std::chrono::nanoseconds> RateLimiter::TryReserve(std::chrono::nanoseconds max_wait) {
  if (qps_ <= 0) return std::chrono::nanoseconds(0);
  std::lock_guard<std::mutex> lock(mu_);
  const auto now = clock_();
  const double elapsed = std::chrono::duration<double>(now - last_).count();
  if (elapsed > 0) {
    tokens_ = std::min(burst_, tokens_ + elapsed * qps_);
    last_ = now;
  }
  const double after = tokens_ - 1;
  const auto wait =
      after >= 0 ? std::chrono::nanoseconds(0)
                 : std::chrono::nanoseconds(static_cast<int64_t>(std::ceil(-after / qps_ * 1e9)));
  if (wait > max_wait) return std::nullopt;
  tokens_ = after;
  return wait;
}

}  // namespace hcashare::kube
