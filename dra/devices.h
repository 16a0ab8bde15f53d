// The devices the DRA driver offers: the selection of the config's "api": "dra" resources
// from the device plugin's view of the host (node::Inventory), with the host facts the
// ResourceSlice attributes need. The same selection rules as the device plugin's pools
// (node::BuildPool: selectors, never a PF with VFs or the host uplink unless the resource
// opts in); a function is offered through one API only, and within DRA by the first
// resource in configList that selects it. Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "config/config.h"
#include "hostfacts/facts.h"
#include "node/discovery.h"

namespace hcashare::dra {

// One device of the driver's pool.
struct DraDevice {
  // A DNS label, unique in the pool: "pci-0000-3b-00-0" (exclusive PCI function),
  // "sf-mlx5-core-sf-4" (scalable function), "rdma-rxe0" (virtual RDMA device), or
  // "shared-0000-3b-00-0" / "shared-rdma-rxe0" (one HCA of a shared resource).
  std::string name;
  config::ResourceConfig resource;  // the resource that offers it ("api": "dra")
  node::PciFunction fn;             // the function (of a shared device: the HCA)
  // A shared resource's HCA: allocatable to several claims, `rdmaHcaMax` shares each.
  bool shared = false;
  // "pci0000:3a": the first component under /sys/devices of the function's (an SF's: its
  // PF's) resolved sysfs path; "" for a virtual device or when unknown.
  std::string pcie_root;
  std::string fw_version;   // the RDMA device's `fw_ver`; "" when unknown
  std::string port_state;   // port 1's state name ("ACTIVE", "DOWN"); "" when unknown
  int port_rate_gbps = -1;  // port 1's rate in whole Gb/s; -1 when unknown
  // The taint it carries (MarkTaints): "NoSchedule" while unhealthy, "NoExecute" once its
  // function vanished, "" for none; since when (unix seconds), kept across views.
  std::string taint_effect;
  int64_t taint_since = 0;

  bool operator==(const DraDevice& o) const;
};

// Per device name: the taint effect it carried in the last view and since when.
using TaintTimes = std::map<std::string, std::pair<std::string, int64_t>>;

// A function a DRA resource selected but does not offer, and why.
struct DraRefusal {
  std::string address;   // node::PciFunction::address
  std::string resource;  // the resource's full name, "rdma/hca_dra"
  std::string reason;
  bool operator==(const DraRefusal& o) const {
    return address == o.address && resource == o.resource && reason == o.reason;
  }
};

// What the DRA driver offers on one host.
struct DraInventory {
  std::vector<DraDevice> devices;   // sorted by name, names unique
  std::vector<DraRefusal> refused;  // in configList order, then by address

  // The device named `name`, or null.
  const DraDevice* Find(const std::string& name) const;
  bool operator==(const DraInventory& o) const {
    return devices == o.devices && refused == o.refused;
  }
};

// The devices of `cfg`'s DRA resources on the host `inv` and `snap` describe (`inv` is
// node::Discover(snap), or a later health refresh of it). Exclusive resources: one device per
// function their pool would hold. Shared resources: one device per HCA of the pool
// (PCI functions and virtual devices, never SFs, as in the device plugin); refused whole
// while the RDMA netns mode is exclusive. A function another DRA resource earlier in
// configList offers, or whose device name is not a DNS label or is taken, is refused.
DraInventory SelectDraDevices(const config::PluginConfig& cfg, const node::Inventory& inv,
                              const hostfacts::HostSnapshot& snap);

// Keeps in `next` the exclusive devices of `previous` that are in use: a device handed to a
// pod whose RDMA device (and netdev) moved into the pod's namespace is gone from host sysfs
// while its function is still present (`inv.present`). As the device plugin's exclusive pools
// do, it stays published with its last known details while its function exists, its resource
// is unchanged in `cfg`, and no device of `next` took its name or function.
void KeepDevicesInUse(const DraInventory& previous, const config::PluginConfig& cfg,
                      const node::Inventory& inv, DraInventory* next);

// A device a prepared claim holds, as the driver's checkpoint records it.
struct HeldDevice {
  std::string name;                       // the DRA device name
  std::string address;                    // its PCI address
  std::string resource;                   // "<prefix>/<name>" of its config resource
  std::vector<std::string> rdma_devices;  // "mlx5_2", ...
};

// Keeps in `next` the exclusive devices prepared claims hold that this view lacks: after a
// restart KeepDevicesInUse has no previous view, while a held device's RDMA device (and
// netdev) still live in its pod's namespace. Kept while its resource is still an exclusive
// DRA resource of `cfg`, its name is the one its function gets, and no device of `next`
// took its name or function. With its PCI function present it is described by what the
// snapshot still shows of it (identity, NUMA node, PCIe root) and the held RDMA device
// names, in use, hence healthy; with its function gone it stays, `gone` (to be tainted
// NoExecute, so that the pods holding it go), until no claim holds it.
void KeepHeldDevices(const std::vector<HeldDevice>& held, const config::PluginConfig& cfg,
                     const node::Inventory& inv, const hostfacts::HostSnapshot& snap,
                     DraInventory* next);

// Sets each device's taint from its function's state (gone: NoExecute; unhealthy:
// NoSchedule), keeping the time a device first carried its present effect from `times`
// (else `now`); `times` becomes this view's.
void MarkTaints(DraInventory* inv, TaintTimes* times, int64_t now);

// The device name of `fn` (see DraDevice::name), before the DNS label check.
std::string DeviceName(const node::PciFunction& fn, bool shared);

// "pci0000:3a" for "/sys/devices/pci0000:3a/0000:3a:00.0/0000:3b:00.0"; "" when `sysfs_path`
// is not under /sys/devices/pci*.
std::string PcieRootOf(const std::string& sysfs_path);

}  // namespace hcashare::dra
