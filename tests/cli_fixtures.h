// Fixtures for the tests of the `hcashare` subcommands (topo, doctor, discover): canned
// hosts built with SimNode, and running the CLI binary.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"
#include "common/temp_dir.h"
#include "testing/sim_node.h"

namespace hcashare::testing {

// A 2-socket GPU server. NUMA 0: root complex pci0000:15 with a PCIe switch (upstream
// 0000:16:00.0) holding GPU0 0000:18:00.0, HCA mlx5_0 0000:19:00.0 (ib0) and a nested
// switch with GPU1 0000:1c:00.0; root complex pci0000:36 with the onboard NIC eno1
// 0000:37:00.0 (no RDMA). NUMA 1: root complex pci0000:97 with a switch holding GPU2
// 0000:9a:00.0 and HCA mlx5_1 0000:9b:00.0 (ib1); root complex pci0000:b6 with a switch
// holding GPU3 0000:b9:00.0. Every PCIe link is x16 at 32 GT/s but mlx5_1's (16 GT/s,
// its maximum). ACS P2P redirect is on at the downstream ports of the NUMA 0
// switches (0000:17:00.0, 0000:17:01.0, 0000:17:02.0, 0000:1b:00.0) and off at those of GPU2
// and mlx5_1; two Intel NUMA
// nodes of 16 CPUs; the NVIDIA driver lists the four GPUs.
Status BuildTwoSocketHost(fake::SimNode* node);

// A single-root workstation (pci0000:00, NUMA unknown): GPU0 0000:01:00.0 and GPU1
// 0000:02:00.0 on their own root ports, an Intel NIC enp5s0 0000:05:00.0 (no RDMA), and a
// dual-port RoCE NIC on one root port: mlx5_0 0000:06:00.0 and mlx5_1 0000:06:00.1. One
// AMD NUMA node; the NVIDIA driver lists both GPUs.
Status BuildWorkstation(fake::SimNode* node);

// A host with SR-IOV VFs (NUMA 0): a switch holding GPU0 0000:04:00.0 and the RoCE PF
// mlx5_0 0000:03:00.0 (ens1f0np0) with VFs mlx5_2 0000:03:00.2 and mlx5_3 0000:03:00.3
// next to it; GPU1 0000:05:00.0 on another root port. Its switch ports' config space was
// read without CAP_SYS_ADMIN (64 bytes: ACS unknown); GPU1's driver reports no UUID.
Status BuildVfHost(fake::SimNode* node);

// The outcome of running the CLI.
struct CliRun {
  int code = -1;
  std::string output;  // stdout and stderr
};

// Runs `hcashare args...` (from BinDir()), capturing its output in a file under `tmp`.
CliRun RunHcashare(const TempDir& tmp, const std::vector<std::string>& args);

}  // namespace hcashare::testing
