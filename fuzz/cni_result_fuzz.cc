// Fuzzes CNI result parsing and rendering: ParseResultText (what a delegated IPAM plugin
// prints, or a prevResult), then ToJson in every supported version.
// Invariants beyond "no crash": errors have a known code and print as valid JSON; a parsed
// result renders in every version, and render -> parse -> render is a fixpoint in its own
// version; chaining a result after itself still renders and parses (see cni_check.h).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "cni/result.h"
#include "fuzz/cni_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace cni = hcashare::cni;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const hcashare::Result<cni::CniResult> result = cni::ParseResultText(text);
  if (!result.ok()) {
    hcashare::fuzz::CheckCniError(result.status());
    return 0;
  }
  hcashare::fuzz::CheckResultRoundTrip(*result);
  return 0;
}
