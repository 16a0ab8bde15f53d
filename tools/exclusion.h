// Why a device is not in a resource's pool — the answer to "why does my resource show 0?".
//
// Selection is re-run one selector at a time with deviceplugin's own matcher
// (node::Matches), in the order docs/config-reference.md lists the selectors, so the explanation
// can never disagree with what the daemon does; discovery's own reasons are read from its record.
// Pure functions.
#pragma once

#include <optional>
#include <string>

#include "config/config.h"
#include "node/discovery.h"

namespace hcashare::cli {

// The first rule that excluded a device.
struct Rejection {
  std::string rule;    // "selectors.ifNames", or "requirement"
  std::string detail;  // "has ib3; wants ib0, ib1"
};

// Why discovered function `fn` is not in the pool of `rc`: a pool requirement (scalable
// functions only in exclusive pools), else the first selector that rejects it. nullopt
// when `fn` is selected.
std::optional<Rejection> WhyNotSelected(const config::ResourceConfig& rc,
                                        const node::PciFunction& fn);

// Why the network function at PCI address `address` is not in the inventory at all, as
// discovery recorded it (Inventory::not_offered): no RDMA device, not a network
// controller, no bound driver. nullopt for functions that are neither network controllers
// nor RDMA devices (bridges, GPUs, storage), or when no requirement is unmet.
std::optional<Rejection> WhyNotDiscovered(const node::Inventory& inv, const std::string& address);

}  // namespace hcashare::cli
