// The DRA subcommands of hcashare-e2e-kubelet (tests/e2e/vm/e2e_kubelet.cc): an API server and
// the kubelet's DRA client for the real daemon in the VM suite, driven from guest-tests.sh.
// Each returns the process's exit status: 0 on success, 1 on an RPC, API or I/O error (or a
// claim answered with an error), 2 on bad arguments.
#pragma once

#include <string>

namespace hcashare::e2e {

// Milliseconds since boot (CLOCK_BOOTTIME), the clock of /proc/uptime, so that the script
// can compare a logged moment with the moment it changed the kernel.
long long BoottimeMs();

// What `dra-api` serves.
struct DraApiOptions {
  std::string kubeconfig;  // written: the server's URL, its CA inline, the bearer token
  std::string node;        // the Node seeded (the daemon's --node-name)
  std::string driver;      // the claim's allocation results name this driver...
  std::string claim_ns;    // ...in the claim <claim_ns>/<claim_name>
  std::string claim_name;
  std::string claim_device;  // ...and this device of the node's pool
  std::string uid_file;      // written last (atomically): the claim's UID
  std::string slices_log;    // one line per change of the driver's published devices
};

// Runs the fake API server (testing/fake_apiserver.h) with a CA made in-process, seeds the
// Node and a ResourceClaim allocating `claim_device` of the node's pool, writes the
// kubeconfig and then the claim's UID, and serves until killed. Each change of the devices
// the driver's ResourceSlices publish appends to `slices_log`:
//   <uptime-ms> n=<count> <device>:<rdmaDevice>:<healthy>,...
int DraApi(const DraApiOptions& options);

// A claim as the kubelet names it in Prepare and Unprepare.
struct DraClaimRef {
  std::string kubelet_root;  // plugins_registry/ is under it
  std::string driver;
  std::string ns;
  std::string name;
  std::string uid;
};

// Registers `driver` through <root>/plugins_registry as the kubelet does, calls
// NodePrepareResources (v1) for the claim and prints the answer as JSON:
//   {"claims": {"<uid>": {"error": "", "devices": [{"requestNames": [...], "poolName": ...,
//    "deviceName": ..., "cdiDeviceIds": [...]}]}}}
// 1 when the call fails or the claim's answer is an error.
int DraPrepare(const DraClaimRef& claim);
// The same with NodeUnprepareResources: {"claims": {"<uid>": {"error": ""}}}.
int DraUnprepare(const DraClaimRef& claim);

// Prints the device nodes (one path a line) a container gets from the CDI device `cdi_id`
// ("<vendor>/<class>=<name>") of the spec file `spec_path`: the spec's own and the device's
// containerEdits.deviceNodes. 1 when the spec is unreadable, of another kind, lacks the
// device, or maps a node to another host path.
int CdiNodes(const std::string& spec_path, const std::string& cdi_id);

}  // namespace hcashare::e2e
