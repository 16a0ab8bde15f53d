// The hcashare-cni process: reads the CNI_* environment and the network configuration on
// stdin, runs the verb, and prints the result (or a spec error object with a non-zero
// exit) on stdout. Logs go to stderr, or to `logFile`. The binary (main.cc) runs it on
// the kernel's interfaces; the failure-path tests run the same code on a PF whose VF
// table they can see (tests/support/), in a binary that is never shipped.
#pragma once

#include <functional>
#include <memory>

#include "cni/vf_driver.h"
#include "nl/netdev.h"
#include "nl/rdma_netlink.h"
#include "nl/sriov.h"

namespace hcashare::cni {

// What the plugin reaches the host through; each is created once per invocation.
struct PluginBackends {
  std::function<std::unique_ptr<NetdevOps>()> netdev;
  std::function<std::unique_ptr<VfOps>()> vf;
  std::function<std::unique_ptr<RdmaSystem>()> rdma;
  std::function<std::unique_ptr<VfDriver>(const Host&)> vf_driver;
};

// The kernel's: rtnetlink and RDMA netlink.
PluginBackends NetlinkBackends();

// Runs one CNI invocation of this process; returns its exit code.
int RunPlugin(const PluginBackends& backends);

}  // namespace hcashare::cni
