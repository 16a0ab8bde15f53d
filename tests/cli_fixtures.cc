#include "tests/cli_fixtures.h"

#include <chrono>

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

Status AddAll(fake::SimNode* node, const std::vector<fake::SimPciBridge>& bridges,
              const std::vector<fake::SimPciFunction>& functions) {
  for (const auto& b : bridges) RETURN_IF_ERROR(node->AddPciBridge(b));
  for (const auto& f : functions) RETURN_IF_ERROR(node->AddPciFunction(f));
  return Status::Ok();
}

}  // namespace

Status BuildTwoSocketHost(fake::SimNode* node) {
  return AddAll(node,
                {
                    RootPort("0000:15:01.0", "pci0000:15", 0),
                    Bridge("0000:16:00.0", "0000:15:01.0", 0),
                    Bridge("0000:17:00.0", "0000:16:00.0", 0),
                    Bridge("0000:17:01.0", "0000:16:00.0", 0),
                    Bridge("0000:17:02.0", "0000:16:00.0", 0),
                    Bridge("0000:1a:00.0", "0000:17:02.0", 0),
                    Bridge("0000:1b:00.0", "0000:1a:00.0", 0),
                    RootPort("0000:36:01.0", "pci0000:36", 0),
                    RootPort("0000:97:01.0", "pci0000:97", 1),
                    Bridge("0000:98:00.0", "0000:97:01.0", 1),
                    Bridge("0000:99:00.0", "0000:98:00.0", 1),
                    Bridge("0000:99:01.0", "0000:98:00.0", 1),
                    RootPort("0000:b6:01.0", "pci0000:b6", 1),
                    Bridge("0000:b7:00.0", "0000:b6:01.0", 1),
                    Bridge("0000:b8:00.0", "0000:b7:00.0", 1),
                },
                {
                    Under(fake::SimNode::Gpu("0000:18:00.0", 0), "0000:17:00.0"),
                    Under(fake::SimNode::IbHca("0000:19:00.0", "ib0", "mlx5_0", 0), "0000:17:01.0"),
                    Under(fake::SimNode::Gpu("0000:1c:00.0", 0), "0000:1b:00.0"),
                    Under(PlainNic("0000:37:00.0", "eno1", 0), "0000:36:01.0"),
                    Under(fake::SimNode::Gpu("0000:9a:00.0", 1), "0000:99:00.0"),
                    Under(fake::SimNode::IbHca("0000:9b:00.0", "ib1", "mlx5_1", 1), "0000:99:01.0"),
                    Under(fake::SimNode::Gpu("0000:b9:00.0", 1), "0000:b8:00.0"),
                });
}

Status BuildWorkstation(fake::SimNode* node) {
  return AddAll(node,
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
                });
}

Status BuildVfHost(fake::SimNode* node) {
  auto vf = [](const std::string& address, const std::string& netdev, const std::string& rdma) {
    fake::SimPciFunction f = RoceNic(address, netdev, rdma, 0);
    f.device = "101e";
    f.physfn = "0000:03:00.0";
    return f;
  };
  return AddAll(node,
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
                });
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
