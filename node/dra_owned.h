// The rule that a PCI function is offered through one API only (issue 27): a function that
// a resource with "api": "dra" selects belongs to the DRA driver, and device-plugin pools
// refuse it; among DRA resources the first in configList that selects a function owns it.
// Pure functions of the config and an Inventory; thread-safe.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "config/config.h"
#include "node/discovery.h"
#include "node/pool.h"

namespace hcashare::node {

// Function address -> the full name ("<prefix>/<name>") of the DRA resource that owns it.
using DraOwners = std::map<std::string, std::string>;

// The functions of `inv` that DRA resources of `cfg` offer: those each one's pool would hand
// out (BuildPool: selectors, SF and ExclusiveRefusal rules), the first resource in
// configList winning. Empty when no resource has "api": "dra".
DraOwners DraOwnedFunctions(const config::PluginConfig& cfg, const Inventory& inv);

// Why a pool does not offer a function that `owner` offers through DRA:
// "offered through DRA by resource <owner>".
std::string DraOwnedReason(const std::string& owner);

// Moves every function of `pool` that `owners` lists from pool->hcas (and in_use) to
// pool->refused, with DraOwnedReason; `refused` stays sorted by address.
void RefuseDraOwned(const DraOwners& owners, PoolState* pool);

// The resources of `resources` that the device plugin serves ("api": "devicePlugin"), in
// order: the ones with a kubelet server, a CDI spec and a pool description.
std::vector<config::ResourceConfig> DevicePluginResources(
    const std::vector<config::ResourceConfig>& resources);

}  // namespace hcashare::node
