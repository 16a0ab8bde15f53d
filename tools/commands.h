// Subcommands of the `hcashare` CLI. Each returns the process exit code.
#pragma once

#include <string>
#include <vector>

namespace hcashare::cli {

// `hcashare validate FILE [--against SNAPSHOT]`: prints the same report the daemon prints
// (text or JSON); with a snapshot (`hcashare snapshot`), also what each resource would
// select on that node. 0 when valid, 2 when not (an unreadable file is an error at "$"),
// 1 when valid but a resource selects nothing on the snapshot, 3 when the snapshot cannot
// be loaded.
int RunValidate(const std::string& file, bool json, const std::string& against = "");

struct SnapshotOptions {
  std::string host_root = "/";
  std::string output;  // "" = stdout
};

// `hcashare snapshot`: writes the node's host snapshot as JSON (docs/snapshot.md). 0 on
// success, 1 when the output cannot be written.
int RunSnapshot(const SnapshotOptions& opts);

// `hcashare demo ARGS...`: replaces this process with hcashare-demo (testing/demo.h: the
// real device plugin against a simulated node and a fake kubelet) from this executable's
// directory, with ARGS. Returns (127) only when hcashare-demo cannot be run.
int RunDemo(const std::vector<std::string>& args);

struct TopoOptions {
  std::string host_root = "/";
  std::string snapshot;                    // a snapshot file to read instead of the host
  std::string format = "table";            // "table", "json", "dot" or "nccl-xml"
  bool json = false;                       // same as format "json"
  std::string pod;                         // "namespace/name": the pod view instead of the node's
  std::string kubelet_root;                // "" = <host_root>/var/lib/kubelet
  std::vector<std::string> gpu_resources;  // empty = {"nvidia.com/gpu"}
};

// `hcashare topo`: the GPU/NIC PCIe distance matrix of the host (or snapshot). 0 on
// success, 1 when /sys/bus/pci/devices cannot be read or the snapshot cannot be loaded.
int RunTopo(const TopoOptions& opts);

struct DoctorOptions {
  std::string host_root = "/";
  bool json = false;
  std::string pod;         // NAMESPACE/NAME: check that pod's networks instead of this host
  std::string kubeconfig;  // with pod: the cluster; else $KUBECONFIG, ~/.kube/config, in-cluster
};

// `hcashare doctor`: the RDMA/NCCL readiness checks, for this process's environment; with
// --pod, whether a pod requests the resource of every network it names (asks the API
// server). 0 when no check FAILs, 1 otherwise (2 when the cluster cannot be asked).
int RunDoctor(const DoctorOptions& opts);
// `hcashare doctor --pod`: RunDoctor's answer when opts.pod is set.
int RunPodDoctor(const DoctorOptions& opts);

struct DiscoverOptions {
  std::string config;  // the device-plugin config file
  std::string host_root = "/";
  std::string snapshot;  // a snapshot file to read instead of the host
  bool json = false;
  bool use_cdi = false;  // answer Allocate as the daemon does with --use-cdi
  // Print the ResourceSlice objects of the config's DRA resources instead of the report.
  bool dra = false;
  std::string node_name;  // with dra: "" = $NODE_NAME, else the host name
};

// `hcashare discover --config FILE`: what the device plugin would advertise and allocate
// here (or on a snapshot), and why every other device is left out. 0 on success, 2 for an
// invalid config, 1 when the snapshot cannot be loaded. With opts.dra: the ResourceSlice
// objects (v1, generation 1, without the Node's ownerReference) as a JSON array, and every
// refused device on stderr.
int RunDiscover(const DiscoverOptions& opts);

struct CniGcOptions {
  // Empty: the node configuration's (cni/node_config.h), as hcashare-cni uses.
  std::string state_dir;
  std::string host_root;
  std::string cni_path = "/opt/cni/bin";  // where IPAM plugins are
  bool dry_run = false;
  bool json = false;
};

// `hcashare cni-gc`: releases hcashare-cni attachments whose pod namespace is gone or whose
// ADD never finished. 0 when everything stale was released, 1 when something failed.
int RunCniGc(const CniGcOptions& opts);

}  // namespace hcashare::cli
