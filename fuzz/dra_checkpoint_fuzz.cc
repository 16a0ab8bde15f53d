// Fuzzes the DRA driver's checkpoint reader, dra::Checkpoint::Parse: the file hcashare-cni
// reads to turn a pod's DRA devices into PCI addresses, and the daemon reads at start.
// Invariants beyond "no crash": a parsed checkpoint serializes to a text that parses back to
// the same claims (what is written is what is read).
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz/fuzz_check.h"
#include "interop/dra_checkpoint.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  const auto claims = hcashare::dra::Checkpoint::Parse(text, "fuzz");
  if (!claims.ok()) return 0;
  const std::string again = hcashare::dra::Checkpoint::Serialize(*claims);
  const auto reread = hcashare::dra::Checkpoint::Parse(again, "fuzz");
  FUZZ_CHECK(reread.ok());
  FUZZ_CHECK(*reread == *claims);
  return 0;
}
