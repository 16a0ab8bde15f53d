// Fuzzes kube::ListSplitter, which splits the API server's list answers (the NADs of every
// tenant, through the webhook's informer) into items as their bytes arrive. Invariants
// beyond "no crash": the result does not depend on how the bytes are cut (whole, or in
// pieces of a size the input picks), and every item handed over is a JSON object.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fuzz/fuzz_check.h"
#include "kube/list_stream.h"

namespace {

struct Outcome {
  std::vector<std::string> items;
  bool fed = false;
  bool finished = false;
  std::string rest;
};

Outcome Split(const std::string& text, size_t piece) {
  Outcome out;
  hcashare::kube::ListSplitter s(4096, [&](std::string_view item) {
    out.items.emplace_back(item);
    return hcashare::Status::Ok();
  });
  out.fed = true;
  for (size_t at = 0; at < text.size() && out.fed; at += piece) {
    out.fed = s.Feed(std::string_view(text).substr(at, piece)).ok();
  }
  if (!out.fed) return out;
  auto rest = s.Finish();
  out.finished = rest.ok();
  if (rest.ok()) out.rest = rest->dump();
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const size_t piece = data[0] % 7 + 1;
  const std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
  const Outcome whole = Split(text, text.size() + 1);
  const Outcome cut = Split(text, piece);
  FUZZ_CHECK(whole.fed == cut.fed);
  FUZZ_CHECK(whole.finished == cut.finished);
  FUZZ_CHECK(whole.rest == cut.rest);
  FUZZ_CHECK(whole.items == cut.items);
  if (whole.finished) {
    for (const std::string& item : whole.items) {
      // An item is the text of one object: balanced, starting with '{'. (Its content is
      // parsed by the caller, which refuses what is not JSON.)
      FUZZ_CHECK(!item.empty() && item.front() == '{' && item.back() == '}');
    }
  }
  return 0;
}
