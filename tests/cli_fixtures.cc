#include "tests/cli_fixtures.h"

#include <chrono>
#include <utility>

#include "common/process.h"
#include "tests/test_util.h"

namespace hcashare::testing {
namespace {

fake::SimPciBridge RootPort(const std::string& address, const std::string& host_bridge, int numa) {
  fake::SimPciBridge b;
  b.address = address;
  b.host_bridge = host_bridge;
  b.numa_node = numa;
  return b;
}

fake::SimPciBridge Bridge(const std::string& address, const std::string& parent, int numa) {
  fake::SimPciBridge b;
  b.address = address;
  b.parent = parent;
  b.numa_node = numa;
  b.vendor = "1000";  // a Broadcom/PLX switch
  b.device = "c010";
  return b;
}

fake::SimPciFunction Under(fake::SimPciFunction f, const std::string& bridge) {
  f.parent_bridge = bridge;
  return f;
}

fake::SimPciFunction PlainNic(const std::string& address, const std::string& netdev, int numa) {
  fake::SimPciFunction f;
  f.address = address;
  f.vendor = "8086";
  f.device = "1533";
  f.driver = "igb";
  f.numa_node = numa;
  f.netdevs = {netdev};
  return f;
}

fake::SimPciFunction RoceNic(const std::string& address, const std::string& netdev,
                             const std::string& rdma, int numa) {
  fake::SimPciFunction f;
  f.address = address;
  f.device = "1015";
  f.numa_node = numa;
  f.netdevs = {netdev};
  f.link_type = "ether";
  f.rdma_device = rdma;
  return f;
}

// Adds the bridges and functions; with `link` ("32.0 GT/s PCIe"), every bridge and PF has
// its PCIe link trained at `link` x16, as its maximum.
Status AddAll(fake::SimNode* node, const std::vector<fake::SimPciBridge>& bridges,
              const std::vector<fake::SimPciFunction>& functions, const std::string& link = "") {
  for (const auto& b : bridges) RETURN_IF_ERROR(node->AddPciBridge(b));
  for (const auto& f : functions) RETURN_IF_ERROR(node->AddPciFunction(f));
  if (link.empty()) return Status::Ok();
  for (const auto& b : bridges) RETURN_IF_ERROR(node->SetPcieLink(b.address, link, 16, link, 16));
  for (const auto& f : functions) {
    if (f.physfn.empty()) RETURN_IF_ERROR(node->SetPcieLink(f.address, link, 16, link, 16));
  }
  return Status::Ok();
}

// The CPUs (NUMA nodes of 16 CPUs each, as the functions' local_cpulist) and the NVIDIA
// driver's view of `gpus` (minor = index; a "" UUID leaves the line out).
Status AddCpusAndGpus(fake::SimNode* node, int numa_nodes, const std::string& vendor, int family,
                      int model, const std::vector<std::pair<std::string, std::string>>& gpus) {
  const char* kMaps[] = {"00000000,0000ffff", "00000000,ffff0000"};
  const char* kLists[] = {"0-15", "16-31"};
  for (int n = 0; n < numa_nodes && n < 2; ++n) {
    RETURN_IF_ERROR(node->AddNumaNode(n, kMaps[n], kLists[n]));
  }
  RETURN_IF_ERROR(node->SetCpu("x86_64", vendor, family, model));
  for (size_t i = 0; i < gpus.size(); ++i) {
    RETURN_IF_ERROR(node->AddNvidiaGpuInfo(gpus[i].first, "NVIDIA H100 80GB HBM3", gpus[i].second,
                                           static_cast<int>(i)));
  }
  return Status::Ok();
}

}  // namespace

Status BuildTwoSocketHost(fake::SimNode* node) {
  const std::vector<fake::SimPciBridge> bridges = {
      RootPort("0000:15:01.0", "pci0000:15", 0), Bridge("0000:16:00.0", "0000:15:01.0", 0),
      Bridge("0000:17:00.0", "0000:16:00.0", 0), Bridge("0000:17:01.0", "0000:16:00.0", 0),
      Bridge("0000:17:02.0", "0000:16:00.0", 0), Bridge("0000:1a:00.0", "0000:17:02.0", 0),
      Bridge("0000:1b:00.0", "0000:1a:00.0", 0), RootPort("0000:36:01.0", "pci0000:36", 0),
      RootPort("0000:97:01.0", "pci0000:97", 1), Bridge("0000:98:00.0", "0000:97:01.0", 1),
      Bridge("0000:99:00.0", "0000:98:00.0", 1), Bridge("0000:99:01.0", "0000:98:00.0", 1),
      RootPort("0000:b6:01.0", "pci0000:b6", 1), Bridge("0000:b7:00.0", "0000:b6:01.0", 1),
      Bridge("0000:b8:00.0", "0000:b7:00.0", 1),
  };
  RETURN_IF_ERROR(
      AddAll(node, bridges,
             {
                 Under(fake::SimNode::Gpu("0000:18:00.0", 0), "0000:17:00.0"),
                 Under(fake::SimNode::IbHca("0000:19:00.0", "ib0", "mlx5_0", 0), "0000:17:01.0"),
                 Under(fake::SimNode::Gpu("0000:1c:00.0", 0), "0000:1b:00.0"),
                 Under(PlainNic("0000:37:00.0", "eno1", 0), "0000:36:01.0"),
                 Under(fake::SimNode::Gpu("0000:9a:00.0", 1), "0000:99:00.0"),
                 Under(fake::SimNode::IbHca("0000:9b:00.0", "ib1", "mlx5_1", 1), "0000:99:01.0"),
                 Under(fake::SimNode::Gpu("0000:b9:00.0", 1), "0000:b8:00.0"),
             },
             "32.0 GT/s PCIe"));
  // mlx5_1 is a Gen4 card in a Gen5 switch: its attainable link is Gen4.
  RETURN_IF_ERROR(node->SetPcieLink("0000:9b:00.0", "16.0 GT/s PCIe", 16, "16.0 GT/s PCIe", 16));
  // Config space read as root. ACS as Linux sets it with the IOMMU on (SV RR CR UF) on the
  // downstream ports of the NUMA 0 switch; cleared (pci=disable_acs_redir) on those of the
  // NUMA 1 switch with mlx5_1; no ACS capability on the other bridges.
  for (const auto& b : bridges) RETURN_IF_ERROR(node->SetBridgeAcs(b.address, -1));
  for (const char* port : {"0000:17:00.0", "0000:17:01.0", "0000:17:02.0", "0000:1b:00.0"}) {
    RETURN_IF_ERROR(node->SetBridgeAcs(port, 0x001d));
  }
  for (const char* port : {"0000:99:00.0", "0000:99:01.0"}) {
    RETURN_IF_ERROR(node->SetBridgeAcs(port, 0x0000));
  }
  return AddCpusAndGpus(node, 2, "GenuineIntel", 6, 143,
                        {{"0000:18:00.0", "GPU-8c3d1f2a-0b4e-4c6d-9e7f-0a1b2c3d4e50"},
                         {"0000:1c:00.0", "GPU-8c3d1f2a-0b4e-4c6d-9e7f-0a1b2c3d4e51"},
                         {"0000:9a:00.0", "GPU-8c3d1f2a-0b4e-4c6d-9e7f-0a1b2c3d4e52"},
                         {"0000:b9:00.0", "GPU-8c3d1f2a-0b4e-4c6d-9e7f-0a1b2c3d4e53"}});
}

Status BuildWorkstation(fake::SimNode* node) {
  RETURN_IF_ERROR(
      AddAll(node,
             {
                 RootPort("0000:00:01.0", "", -1),
                 RootPort("0000:00:01.1", "", -1),
                 RootPort("0000:00:1c.0", "", -1),
                 RootPort("0000:00:1c.4", "", -1),
             },
             {
                 Under(fake::SimNode::Gpu("0000:01:00.0", -1), "0000:00:01.0"),
                 Under(fake::SimNode::Gpu("0000:02:00.0", -1), "0000:00:01.1"),
                 Under(PlainNic("0000:05:00.0", "enp5s0", -1), "0000:00:1c.0"),
                 Under(RoceNic("0000:06:00.0", "enp6s0f0np0", "mlx5_0", -1), "0000:00:1c.4"),
                 Under(RoceNic("0000:06:00.1", "enp6s0f1np1", "mlx5_1", -1), "0000:00:1c.4"),
             }));
  return AddCpusAndGpus(node, 1, "AuthenticAMD", 25, 33,
                        {{"0000:01:00.0", "GPU-1f0e2d3c-4b5a-4968-8776-a5b4c3d2e1f0"},
                         {"0000:02:00.0", "GPU-1f0e2d3c-4b5a-4968-8776-a5b4c3d2e1f1"}});
}

Status BuildVfHost(fake::SimNode* node) {
  auto vf = [](const std::string& address, const std::string& netdev, const std::string& rdma) {
    fake::SimPciFunction f = RoceNic(address, netdev, rdma, 0);
    f.device = "101e";
    f.physfn = "0000:03:00.0";
    return f;
  };
  RETURN_IF_ERROR(
      AddAll(node,
             {
                 RootPort("0000:00:03.0", "", 0),
                 Bridge("0000:01:00.0", "0000:00:03.0", 0),
                 Bridge("0000:02:00.0", "0000:01:00.0", 0),
                 Bridge("0000:02:01.0", "0000:01:00.0", 0),
                 RootPort("0000:00:05.0", "", 0),
             },
             {
                 Under(RoceNic("0000:03:00.0", "ens1f0np0", "mlx5_0", 0), "0000:02:00.0"),
                 vf("0000:03:00.2", "ens1f0v0", "mlx5_2"),
                 vf("0000:03:00.3", "ens1f0v1", "mlx5_3"),
                 Under(fake::SimNode::Gpu("0000:04:00.0", 0), "0000:02:01.0"),
                 Under(fake::SimNode::Gpu("0000:05:00.0", 0), "0000:00:05.0"),
             }));
  // Read without CAP_SYS_ADMIN: the switch ports' config is 64 bytes, ACS unknown.
  for (const char* port : {"0000:02:00.0", "0000:02:01.0"}) {
    RETURN_IF_ERROR(node->SetBridgeAcs(port, 0x001d, /*unprivileged=*/true));
  }
  // GPU1's driver reports no UUID.
  return AddCpusAndGpus(
      node, 1, "GenuineIntel", 6, 106,
      {{"0000:04:00.0", "GPU-5a6b7c8d-9e0f-4a1b-8c2d-3e4f5a6b7c8d"}, {"0000:05:00.0", ""}});
}

CliRun RunHcashare(const TempDir& tmp, const std::vector<std::string>& args) {
  std::vector<std::string> argv = {BinDir() + "/hcashare"};
  argv.insert(argv.end(), args.begin(), args.end());
  const std::string out = tmp.path() + "/hcashare-out.txt";
  CliRun r;
  auto p = Subprocess::Spawn(argv, out);
  if (!p.ok()) return r;
  r.code = p->Wait(std::chrono::seconds(30)).value_or(-1);
  r.output = ReadTextFile(out);
  return r;
}

}  // namespace hcashare::testing
