// hcashare: operator tools for the hcashare RDMA device plugin and CNI.
#include <iostream>

#include <CLI/CLI.hpp>

#include "common/version.h"
#include "tools/commands.h"

namespace {

constexpr const char* kHostRootHelp =
    "root under which /sys, /dev and /proc are read (e.g. /host in a container, or a "
    "fixture tree)";

constexpr const char* kSnapshotHelp =
    "read this snapshot file (from `hcashare snapshot`) instead of the host";

}  // namespace

int main(int argc, char** argv) {
  namespace cli = hcashare::cli;
  CLI::App app{"hcashare: RDMA for Kubernetes pods — operator tools"};
  app.require_subcommand(0, 1);
  bool version = false;
  app.add_flag("--version", version, "print the version and exit");

  std::string file;
  bool validate_json = false;
  std::string validate_root = "/";
  auto* validate = app.add_subcommand("validate", "check a device-plugin config file");
  validate->add_option("file", file, "config file (JSON or YAML)")->required();
  validate->add_flag("--json", validate_json, "print the report as JSON");
  std::string validate_against;
  validate->add_option("--against", validate_against,
                       "a node's snapshot (`hcashare snapshot`): also report what each resource "
                       "selects there; exit 1 when one selects nothing");
  validate->add_option("--host-root", validate_root,
                       "accepted like every subcommand's; validate reads no host state, and "
                       "FILE is read as given");

  // The demo is its own binary (hcashare-demo, next to this one): every argument, --help
  // included, goes to it unparsed.
  auto* demo = app.add_subcommand(
      "demo", "run the device plugin on a simulated node (hcashare-demo; see demo --help)");
  demo->prefix_command();
  demo->set_help_flag();

  cli::TopoOptions topo_opts;
  auto* topo = app.add_subcommand(
      "topo", "GPU/NIC PCIe and NUMA distance matrix (PIX/PXB/PHB/NODE/SYS), best NIC per GPU");
  topo->add_option("--format", topo_opts.format,
                   "table (default), json, dot, or nccl-xml (an NCCL_TOPO_FILE for this node)")
      ->check(CLI::IsMember({"table", "json", "dot", "nccl-xml"}));
  topo->add_flag("--json", topo_opts.json, "same as --format json");
  topo->add_option("--host-root", topo_opts.host_root, kHostRootHelp);
  topo->add_option("--snapshot", topo_opts.snapshot, kSnapshotHelp);
  topo->add_option("--pod", topo_opts.pod,
                   "NAMESPACE/NAME: a running pod's GPUs, RDMA devices and the path class "
                   "between each pair (asks the kubelet's pod-resources API on this node)");
  topo->add_option("--kubelet-root", topo_opts.kubelet_root,
                   "with --pod: the kubelet's root dir (default: /var/lib/kubelet under "
                   "--host-root)");
  topo->add_option("--gpu-resource", topo_opts.gpu_resources,
                   "with --pod: a resource whose device IDs are GPU UUIDs (repeatable; default "
                   "nvidia.com/gpu)");

  cli::DoctorOptions doctor_opts;
  auto* doctor =
      app.add_subcommand("doctor",
                         "will RDMA (and NCCL's IB transport) work here? PASS/WARN/FAIL per check; "
                         "exit 1 on any FAIL");
  doctor->add_flag("--json", doctor_opts.json, "print the results as JSON");
  doctor->add_option("--host-root", doctor_opts.host_root, kHostRootHelp);
  doctor->add_option("--pod", doctor_opts.pod,
                     "NAMESPACE/NAME: does this pod request the RDMA resource of every network "
                     "it names, and what would hcashare-webhook add (asks the API server)");
  doctor->add_option("--kubeconfig", doctor_opts.kubeconfig,
                     "with --pod: kubeconfig file (default $KUBECONFIG, ~/.kube/config, else "
                     "the in-cluster config)");

  cli::DiscoverOptions discover_opts;
  auto* discover = app.add_subcommand(
      "discover",
      "what the device plugin would advertise and allocate with a config, and why "
      "other devices are left out");
  discover->add_option("--config", discover_opts.config, "device-plugin config file (JSON or YAML)")
      ->required();
  discover->add_flag("--json", discover_opts.json, "print the report as JSON");
  discover->add_flag("--use-cdi", discover_opts.use_cdi,
                     "answer Allocate as the daemon does with --use-cdi");
  discover->add_option("--host-root", discover_opts.host_root, kHostRootHelp);
  discover->add_option("--snapshot", discover_opts.snapshot, kSnapshotHelp);
  discover->add_flag("--dra", discover_opts.dra,
                     "print the ResourceSlice objects of the config's DRA resources (\"api\": "
                     "\"dra\") as JSON: what the node would publish");
  discover->add_option("--node-name", discover_opts.node_name,
                       "with --dra: the node's name (default $NODE_NAME, else the host name)");

  cli::SnapshotOptions snapshot_opts;
  auto* snapshot = app.add_subcommand(
      "snapshot",
      "write this node's host snapshot (PCI, RDMA, netdev and route facts; docs/snapshot.md) "
      "as JSON, for a bug report or for --snapshot/--against elsewhere");
  snapshot->add_option("-o,--output", snapshot_opts.output, "file to write (default: stdout)");
  snapshot->add_option("--host-root", snapshot_opts.host_root, kHostRootHelp);

  cli::CniGcOptions gc_opts;
  auto* cni_gc = app.add_subcommand(
      "cni-gc",
      "release hcashare-cni attachments whose pod is gone or whose ADD never finished "
      "(run by hand or from a node start-up hook)");
  cni_gc->add_option("--state-dir", gc_opts.state_dir,
                     "hcashare-cni's stateDir (default: the node configuration's, "
                     "/etc/hcashare/cni.json or $HCASHARE_CNI_CONFIG)");
  cni_gc->add_option("--cni-path", gc_opts.cni_path, "where the IPAM plugins are")
      ->capture_default_str();
  cni_gc->add_flag("--dry-run", gc_opts.dry_run, "only report what would be released");
  cni_gc->add_flag("--json", gc_opts.json, "print the result as JSON");
  cni_gc->add_option("--host-root", gc_opts.host_root, kHostRootHelp);

  CLI11_PARSE(app, argc, argv);
  if (version) {
    std::cout << "hcashare " << hcashare::VersionString() << "\n";
    return 0;
  }
  if (*validate) return cli::RunValidate(file, validate_json, validate_against);
  if (*snapshot) return cli::RunSnapshot(snapshot_opts);
  if (*demo) return cli::RunDemo(demo->remaining());
  if (*topo) return cli::RunTopo(topo_opts);
  if (*doctor) return cli::RunDoctor(doctor_opts);
  if (*discover) return cli::RunDiscover(discover_opts);
  if (*cni_gc) return cli::RunCniGc(gc_opts);
  std::cout << app.help();
  return 0;
}
