// "Did you mean" suggestions for misspelt configuration keys.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hcashare::config {

// Largest case-insensitive edit distance at which a known key is still suggested.
inline constexpr int kMaxSuggestDistance = 2;

// Optimal-string-alignment distance between `a` and `b` after ASCII lower-casing both:
// insertions, deletions, substitutions and swaps of two adjacent characters cost 1 each.
int CaseInsensitiveEditDistance(std::string_view a, std::string_view b);

// Returns the element of `known` closest to `unknown` when it is within
// kMaxSuggestDistance (a case-only difference has distance 0). Ties go to the earlier
// element. A non-zero distance must also be shorter than both keys, so one- or
// two-letter keys are not "corrected" into unrelated words. std::nullopt when nothing is
// close enough.
std::optional<std::string> SuggestKey(std::string_view unknown,
                                      const std::vector<std::string>& known);

}  // namespace hcashare::config
