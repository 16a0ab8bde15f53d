// Selector matching: does a discovered PCI function satisfy a resource's selectors?
#pragma once

#include "config/config.h"
#include "node/discovery.h"

namespace hcashare::node {

// True when `fn` matches every non-empty selector list in `sel` (AND across lists, OR
// within one). ifNames/linkTypes match when any of the function's values is listed; a
// pfNames entry matches its PF and that PF's VFs, or with a VF range only those VFs; isVF,
// when set, must equal the function's kind. Config values are already normalised, so
// comparisons are exact.
bool Matches(const config::Selectors& sel, const PciFunction& fn);

}  // namespace hcashare::node
