#include "config/suggest.h"

#include <algorithm>

#include "common/strings.h"

namespace hcashare::config {
namespace {

// Keys longer than this are never compared (keeps the quadratic table small).
constexpr size_t kMaxComparedLength = 256;

}  // namespace

int CaseInsensitiveEditDistance(std::string_view a_in, std::string_view b_in) {
  const std::string a = ToLowerAscii(a_in);
  const std::string b = ToLowerAscii(b_in);
  const size_t n = a.size();
  const size_t m = b.size();
  // d[i][j] = distance between a[0..i) and b[0..j), stored row-major.
  std::vector<int> d((n + 1) * (m + 1));
  auto at = [&](size_t i, size_t j) -> int& { return d[i * (m + 1) + j]; };
  for (size_t i = 0; i <= n; ++i) at(i, 0) = static_cast<int>(i);
  for (size_t j = 0; j <= m; ++j) at(0, j) = static_cast<int>(j);
  for (size_t i = 1; i <= n; ++i) {
    for (size_t j = 1; j <= m; ++j) {
      const int cost = a[i - 1] == b[j - 1] ? 0 : 1;
      int best = std::min({at(i - 1, j) + 1, at(i, j - 1) + 1, at(i - 1, j - 1) + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        best = std::min(best, at(i - 2, j - 2) + 1);
      }
      at(i, j) = best;
    }
  }
  return at(n, m);
}

std::optional<std::string> SuggestKey(std::string_view unknown,
                                      const std::vector<std::string>& known) {
  if (unknown.size() > kMaxComparedLength) return std::nullopt;
  std::optional<std::string> best;
  int best_distance = kMaxSuggestDistance + 1;
  for (const std::string& candidate : known) {
    const int distance = CaseInsensitiveEditDistance(unknown, candidate);
    // A one- or two-letter key is "close" to almost anything; demand a real overlap.
    const size_t shorter = std::min(unknown.size(), candidate.size());
    if (distance > 0 && static_cast<size_t>(distance) >= shorter) continue;
    if (distance < best_distance) {
      best_distance = distance;
      best = candidate;
    }
  }
  return best;
}

}  // namespace hcashare::config
