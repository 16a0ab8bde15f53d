// A GPU's or NIC's PCIe link as trained, against what both ends of the link can do.
//
// NCCL sizes its PCIe links from max_link_* (the capability) and never looks at
// current_link_*: a card that trained at x8 in an x16 slot, or at 8 GT/s on a 16 GT/s link,
// moves half the data and NCCL's topology does not show it. This view compares the two.
// Pure functions of the host snapshot.
#pragma once

#include <string>

#include "hostfacts/facts.h"

namespace hcashare::topo {

// One function's link. Unknown (`known` false) for VFs (their link is their PF's), links
// that are down (width 0) and trees without the attributes.
struct PcieLink {
  bool known = false;         // both widths were readable and non-zero
  int width = -1;             // current_link_width
  int max_width = -1;         // attainable: min(its max_link_width, the upstream port's)
  double speed_gts = -1;      // current_link_speed; -1 when unknown
  double max_speed_gts = -1;  // attainable, like max_width; -1 when unknown
  bool width_degraded = false;
  bool speed_degraded = false;
  bool degraded() const { return width_degraded || speed_degraded; }
};

// The link of `f` (read with ReadOptions::all_functions).
PcieLink LinkOf(const hostfacts::PciFunction& f);

// "x16 @ 16.0 GT/s", "x8 of x16 @ 16.0 GT/s", "x16 @ 8.0 of 16.0 GT/s"; "" when unknown.
std::string LinkText(const PcieLink& link);

}  // namespace hcashare::topo
