// Test-only backends for hcashare-cni-testhost (never linked into a shipped binary): a PF
// VF table and an RDMA subsystem kept in files, so that they outlive a SIGKILLed process
// as the kernel's would, and so that the state-diff oracle sees them as files.
//
//   HCASHARE_TEST_VF_TABLE=<file>  {"<pf>/<vf>": {"mac": ..., "vlan": ..., ...}} (the
//                                  fields of cni::VfSettingsToJson): the VFs the PFs
//                                  report; a VF not listed is not reported.
//                                  With it, the VF driver is the model of
//                                  vf_driver_model.h: a bind copies the VF's nodeGuid
//                                  and portGuid to boundNodeGuid and boundPortGuid (what
//                                  mlx5 does: new GUIDs apply when the driver binds).
//   HCASHARE_TEST_RDMA=<file>      {"mode": "exclusive"|"shared",
//                                   "devices": {"<name>": <netns inode>}}
// Without the variable, the kernel's (netlink) backend is used.
#pragma once

#include <memory>
#include <string>

#include "common/host.h"
#include "nl/rdma_netlink.h"
#include "nl/sriov.h"

namespace hcashare::testing {

// The VF table in `path`; every Set rewrites the file atomically.
std::unique_ptr<VfOps> NewFileVfOps(std::string path);
// The RDMA subsystem in `path`; a device "moves" by having its namespace inode rewritten.
std::unique_ptr<RdmaSystem> NewFileRdmaSystem(std::string path);

}  // namespace hcashare::testing
