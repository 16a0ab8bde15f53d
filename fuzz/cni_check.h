// Invariants shared by the CNI fuzz targets (fuzz/cni_*_fuzz.cc).
#pragma once

#include "cni/error.h"
#include "cni/result.h"

namespace hcashare::fuzz {

// The failed `status`, made into the CNI error the plugin prints (cni::FromStatus), has a
// known CNI code and a message, and printed as the plugin prints it, reads back as a CNI
// error with the same code.
void CheckCniError(const Status& status);

// `result` renders in every supported version, and in its own version it is a fixpoint of
// render -> parse -> render. Chaining it after itself renders and parses again (shifted
// interface indexes stay in range).
void CheckResultRoundTrip(const cni::CniResult& result);

}  // namespace hcashare::fuzz
