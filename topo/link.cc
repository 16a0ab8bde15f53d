#include "topo/link.h"

#include <algorithm>
#include <cstdio>

#include "hostfacts/attrs.h"

namespace hcashare::topo {
namespace {

// The lower of two attribute values of which either may be unknown (<= 0).
template <typename T>
T Attainable(T own, T upstream) {
  if (own <= 0) return upstream;
  if (upstream <= 0) return own;
  return std::min(own, upstream);
}

std::string Gts(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f", v);
  return buf;
}

}  // namespace

PcieLink LinkOf(const hostfacts::PciFunction& f) {
  PcieLink l;
  if (!f.physfn.empty()) return l;
  l.width = f.current_link_width;
  l.max_width = Attainable(f.max_link_width, f.upstream_max_link_width);
  l.known = l.width > 0 && l.max_width > 0;
  if (!l.known) return PcieLink{};
  l.speed_gts = hostfacts::ParseLinkSpeedGts(f.current_link_speed);
  l.max_speed_gts = Attainable(hostfacts::ParseLinkSpeedGts(f.max_link_speed),
                               hostfacts::ParseLinkSpeedGts(f.upstream_max_link_speed));
  l.width_degraded = l.width < l.max_width;
  // Sysfs speeds are multiples of 0.5 GT/s: compare with a margin.
  l.speed_degraded = l.speed_gts > 0 && l.max_speed_gts > 0 && l.speed_gts + 0.1 < l.max_speed_gts;
  return l;
}

std::string LinkText(const PcieLink& l) {
  if (!l.known) return "";
  std::string s = "x" + std::to_string(l.width);
  if (l.width_degraded) s += " of x" + std::to_string(l.max_width);
  if (l.speed_gts > 0) {
    s += " @ " + Gts(l.speed_gts);
    if (l.speed_degraded) s += " of " + Gts(l.max_speed_gts);
    s += " GT/s";
  }
  return s;
}

}  // namespace hcashare::topo
