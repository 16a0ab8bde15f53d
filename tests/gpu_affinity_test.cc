// GPU-aware NIC choice (issue 17): topo/gpu_match.h on a fixture tree in the real sysfs
// layout, and hcashare-cni's use of it (cni/gpu_affinity.h) through the verbs in real
// network namespaces: a shared pool's macvlan parent nearest the pod's GPU, and gpuRails
// assigning the pod's VFs to net1..netN in GPU order.
//
// The fixture: two PCIe switches under two root ports of NUMA node 0, each with a GPU and
// an RDMA PF with one VF:
//   root 0000:10:00.0 ── switch 11:00.0/12:00.0 ── GPU 13:00.0 (GPU-aaa…), PF 14:00.0 (VF 14:00.2)
//   root 0000:20:00.0 ── switch 21:00.0/22:00.0 ── GPU 23:00.0 (GPU-bbb…), PF 24:00.0 (VF 24:00.2)
#include <fstream>

#include "cni/gpu_affinity.h"
#include "common/process.h"
#include "hostfacts/reader.h"
#include "interop/pool_info.h"
#include "testing/fake_podresources.h"
#include "tests/cni_fixture.h"
#include "tests/test_util.h"
#include "topo/gpu_match.h"
#include "topo/pod_view.h"

namespace hcashare::cni {
namespace {

constexpr const char* kGpuA = "GPU-aaaaaaaa-0000-0000-0000-000000000001";
constexpr const char* kGpuB = "GPU-bbbbbbbb-0000-0000-0000-000000000002";

class GpuAffinityTest : public CniAttachTest {
 protected:
  void SetUp() override {
    CniAttachTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    AddRail("1", kGpuA);
    AddRail("2", kGpuB);
  }

  // Switch <n> under root port 0000:<n>0:00.0, with GPU <n>3:00.0 (UUID `uuid`, in the
  // NVIDIA driver's procfs) and RDMA PF <n>4:00.0 (netdev a veth, up) with VF <n>4:00.2.
  void AddRail(const std::string& n, const std::string& uuid) {
    const std::string root = "0000:" + n + "0:00.0", up = "0000:" + n + "1:00.0",
                      down = "0000:" + n + "2:00.0";
    ASSERT_TRUE(node_->AddPciBridge({root, "", "pci0000:" + n + "0", 0}).ok());
    ASSERT_TRUE(node_->AddPciBridge({up, root, ""}).ok());
    ASSERT_TRUE(node_->AddPciBridge({down, up, ""}).ok());
    fake::SimPciFunction gpu;
    gpu.address = "0000:" + n + "3:00.0";
    gpu.vendor = "10de";
    gpu.device = "2330";
    gpu.class_code = "0x030200";
    gpu.driver = "nvidia";
    gpu.parent_bridge = down;
    ASSERT_TRUE(node_->AddPciFunction(gpu).ok());
    ASSERT_TRUE(node_
                    ->WriteHostFile("/proc/driver/nvidia/gpus/" + gpu.address + "/information",
                                    "Model: \t\t NVIDIA H100 80GB HBM3\nIRQ:   \t\t 42\nGPU UUID: "
                                    "\t " +
                                        uuid + "\nBus Location: \t " + gpu.address +
                                        "\nDevice Minor: \t " + n + "\n")
                    .ok());
    fake::SimPciFunction pf;
    pf.address = "0000:" + n + "4:00.0";
    pf.class_code = "0x020700";
    pf.netdevs = {Unique("hr")};
    pf.rdma_device = "mlx5_" + n;
    pf.parent_bridge = down;
    ASSERT_TRUE(Sh("ip -n " + host_ns_->name() + " link add " + pf.netdevs[0] +
                   " type veth peer name " + pf.netdevs[0] + "p"));
    ASSERT_TRUE(Sh("ip -n " + host_ns_->name() + " link set " + pf.netdevs[0] + " up"));
    ASSERT_TRUE(node_->AddPciFunction(pf).ok());
    pf_netdevs_.push_back(pf.netdevs[0]);
    fake::SimPciFunction vf;
    vf.address = "0000:" + n + "4:00.2";
    vf.physfn = pf.address;
    vf.netdevs = {Unique("hv")};
    ASSERT_TRUE(Sh("ip -n " + host_ns_->name() + " link add " + vf.netdevs[0] +
                   " type veth peer name " + vf.netdevs[0] + "p"));
    ASSERT_TRUE(node_->AddPciFunction(vf).ok());
  }

  Result<json> AddAs(const json& extra, const std::string& ifname) {
    Result<json> out = Status::Internal("not run");
    RunIn(*host_ns_, [&] { out = CmdAdd(Env("ADD", ifname), Conf(extra), Context()); });
    return out;
  }

  std::vector<std::string> pf_netdevs_;
};

TEST_F(GpuAffinityTest, PodGpusResolveByUuidInPciOrder) {
  const hostfacts::HostSnapshot snap = hostfacts::ReadHostSnapshot(*host_);
  const topo::PodGpus gpus =
      topo::ResolvePodGpus(snap, {std::string(kGpuB) + "::3", "MIG-1234", kGpuA, kGpuB});
  ASSERT_EQ(gpus.gpus.size(), 2u);  // the replica and the GPU are one
  EXPECT_EQ(gpus.gpus[0].address, "0000:13:00.0");
  EXPECT_EQ(gpus.gpus[0].uuid, kGpuA);
  EXPECT_EQ(gpus.gpus[1].address, "0000:23:00.0");
  EXPECT_EQ(gpus.gpus[1].id, std::string(kGpuB) + "::3");
  EXPECT_EQ(gpus.unresolved, std::vector<std::string>{"MIG-1234"});

  auto distances = topo::PciDistances::Of(snap);
  ASSERT_TRUE(distances.ok());
  EXPECT_EQ(distances->Path("0000:13:00.0", "0000:14:00.2"), topo::PathType::kPix);
  EXPECT_EQ(distances->Path("0000:13:00.0", "0000:24:00.2"), topo::PathType::kNode);
  EXPECT_EQ(distances->Path("0000:13:00.0", "0000:99:00.0"), std::nullopt);
  // The nearest wins over the caller's order; equal classes keep it.
  const std::vector<std::string> candidates = {"0000:24:00.2", "0000:14:00.2"};
  auto nearest = topo::NearestToGpus(*distances, {gpus.gpus[0]}, candidates);
  ASSERT_TRUE(nearest);
  EXPECT_EQ(nearest->device, "0000:14:00.2");
  EXPECT_EQ(topo::NearestToGpus(*distances, gpus.gpus, candidates)->device, "0000:24:00.2");
  // Rails: each GPU its nearest, in GPU order, none twice.
  const auto rails = topo::AssignRails(*distances, gpus.gpus, candidates);
  ASSERT_EQ(rails.size(), 2u);
  EXPECT_EQ(rails[0].device, "0000:14:00.2");
  EXPECT_EQ(rails[1].device, "0000:24:00.2");
  EXPECT_EQ(topo::AssignRails(*distances, gpus.gpus, {"0000:24:00.2"}).size(), 1u);
}

TEST(GpuAffinityNames, InterfaceOrdinal) {
  EXPECT_EQ(InterfaceOrdinal("net1"), 0u);
  EXPECT_EQ(InterfaceOrdinal("net12"), 11u);
  EXPECT_EQ(InterfaceOrdinal("net0"), std::nullopt);
  EXPECT_EQ(InterfaceOrdinal("eth"), std::nullopt);
  EXPECT_EQ(InterfaceOrdinal(""), std::nullopt);
  EXPECT_EQ(InterfaceOrdinal("n9999999999"), std::nullopt);
}

// The kubelet lists the pod's VFs in its own order; with gpuRails net1 gets the VF nearest
// the first GPU (by PCI address) and net2 the one nearest the second.
TEST_F(GpuAffinityTest, GpuRailsAssignVfsInGpuOrder) {
  pod_devices_.by_resource["rdma/vfs"] = {"0000:24:00.2", "0000:14:00.2"};
  pod_devices_.by_resource["nvidia.com/gpu"] = {kGpuB, kGpuA};
  const json rails = {{"cniVersion", "1.1.0"},
                      {"deviceID", nullptr},
                      {"resourceName", "rdma/vfs"},
                      {"gpuRails", true}};
  auto net1 = AddAs(rails, "net1");
  ASSERT_TRUE(net1.ok()) << net1.status().ToString();
  EXPECT_EQ((*net1)["interfaces"][0]["pciID"], "0000:14:00.2") << net1->dump();
  EXPECT_EQ((*net1)["interfaces"][0]["gpuAffinity"],
            json({{"gpu", kGpuA}, {"gpuPci", "0000:13:00.0"}, {"path", "PIX"}}));
  auto net2 = AddAs(rails, "net2");
  ASSERT_TRUE(net2.ok()) << net2.status().ToString();
  EXPECT_EQ((*net2)["interfaces"][0]["pciID"], "0000:24:00.2");
  EXPECT_EQ((*net2)["interfaces"][0]["gpuAffinity"]["gpu"], kGpuB);
}

// Without gpuRails the kubelet's order stands (the control for the test above), and the
// result says nothing about GPUs.
TEST_F(GpuAffinityTest, WithoutGpuRailsTheFirstFreeDeviceIsTaken) {
  pod_devices_.by_resource["rdma/vfs"] = {"0000:24:00.2", "0000:14:00.2"};
  pod_devices_.by_resource["nvidia.com/gpu"] = {kGpuA};
  auto net1 =
      AddAs({{"cniVersion", "1.1.0"}, {"deviceID", nullptr}, {"resourceName", "rdma/vfs"}}, "net1");
  ASSERT_TRUE(net1.ok()) << net1.status().ToString();
  EXPECT_EQ((*net1)["interfaces"][0]["pciID"], "0000:24:00.2");
  EXPECT_FALSE((*net1)["interfaces"][0].contains("gpuAffinity"));
}

// A shared pool's macvlan parent: the HCA nearest the pod's GPU, though it is listed last
// and the NUMA node does not tell them apart.
TEST_F(GpuAffinityTest, SharedPoolParentNearestThePodsGpu) {
  const std::string pools = tmp_.path() + "/pools";
  fs::create_directories(pools);
  PoolInfo info;
  info.resource = "rdma/hca_a";
  info.hcas = {{"0000:24:00.0", {pf_netdevs_[1]}, {"mlx5_2"}, 0, true},
               {"0000:14:00.0", {pf_netdevs_[0]}, {"mlx5_1"}, 0, true}};
  std::ofstream(pools + "/" + PoolInfoFileName("rdma/hca_a")) << PoolInfoToJson(info);
  node_settings_.pool_info_dir = pools;
  const json conf = {{"deviceID", nullptr}, {"mode", "macvlan"}, {"resourceName", "rdma/hca_a"}};
  pod_devices_.by_resource["rdma/hca_a"] = {"0"};
  pod_devices_.by_resource["nvidia.com/gpu"] = {kGpuA};
  auto added = AddAs(conf, "net1");
  ASSERT_TRUE(added.ok()) << added.status().ToString();
  EXPECT_EQ(store_->Load("c0ffee", "net1")->device, pf_netdevs_[0]);
  EXPECT_EQ((*added)["interfaces"][0]["gpuAffinity"]["gpuPci"], "0000:13:00.0");

  // A GPU resource the configuration does not name is not looked at: pool order.
  pod_devices_.by_resource.erase("nvidia.com/gpu");
  pod_devices_.by_resource["example.com/accel"] = {kGpuA};
  auto plain = AddAs(conf, "net2");
  ASSERT_TRUE(plain.ok()) << plain.status().ToString();
  EXPECT_EQ(store_->Load("c0ffee", "net2")->device, pf_netdevs_[1]);
  json named = conf;
  named["gpuResources"] = {"example.com/accel"};
  auto configured = AddAs(named, "net3");
  ASSERT_TRUE(configured.ok()) << configured.status().ToString();
  EXPECT_EQ(store_->Load("c0ffee", "net3")->device, pf_netdevs_[0]);
  // An empty list turns the GPU-aware choice off.
  named["gpuResources"] = json::array();
  auto off = AddAs(named, "net4");
  ASSERT_TRUE(off.ok()) << off.status().ToString();
  EXPECT_EQ(store_->Load("c0ffee", "net4")->device, pf_netdevs_[1]);
}

// A GPU in two GPU resources (a whole GPU and a time-sliced replica of it) is one GPU of the
// pod (issue 25: `topo --pod` listed it twice).
TEST_F(GpuAffinityTest, PodTopoListsAGpuOfTwoResourcesOnce) {
  const hostfacts::HostSnapshot snap = hostfacts::ReadHostSnapshot(*host_);
  const std::map<std::string, std::vector<std::string>> by_resource = {
      {"nvidia.com/gpu", {kGpuA}}, {"nvidia.com/gpu.shared", {std::string(kGpuA) + "::1", kGpuB}}};
  const topo::PodTopo view =
      topo::BuildPodTopo(snap, by_resource, {"nvidia.com/gpu", "nvidia.com/gpu.shared"});
  ASSERT_EQ(view.gpus.size(), 2u);
  EXPECT_EQ(view.gpus[0].address, "0000:13:00.0");
  EXPECT_EQ(view.gpus[1].address, "0000:23:00.0");
  EXPECT_EQ(view.paths.size(), 2u);
}

// `hcashare topo --pod`: the pod's devices from the kubelet's pod-resources API, placed.
TEST_F(GpuAffinityTest, TopoPodShowsThePathBetweenEachGpuAndDevice) {
  const std::string kubelet = tmp_.path() + "/kubelet";
  fake::FakePodResources server(kubelet + "/pod-resources/kubelet.sock");
  ASSERT_TRUE(server.Start().ok());
  server.AddPod("ml", "trainer-0", "uid-t",
                {{"main",
                  {{"nvidia.com/gpu", {kGpuB, kGpuA}, {}},
                   {"rdma/vfs", {"0000:24:00.2", "0000:14:00.2"}, {}},
                   {"rdma/hca_shared_devices_a", {"7"}, {}}}}});
  const auto topo = [&](const std::vector<std::string>& extra) {
    std::vector<std::string> argv = {"hcashare",       "topo", "--host-root", tmp_.path() + "/host",
                                     "--kubelet-root", kubelet};
    argv.insert(argv.end(), extra.begin(), extra.end());
    auto out = Execute(testing::BinDir() + "/hcashare", argv, {}, "", std::chrono::seconds(30));
    EXPECT_TRUE(out.ok());
    return out.ok() ? *out : ExecOutput{};
  };
  const ExecOutput json_out = topo({"--pod", "ml/trainer-0", "--json"});
  ASSERT_EQ(json_out.exit_code, 0) << json_out.err;
  const json view = json::parse(json_out.out);
  ASSERT_EQ(view["gpus"].size(), 2u);
  EXPECT_EQ(view["gpus"][0]["pci"], "0000:13:00.0");
  ASSERT_EQ(view["devices"].size(), 2u);
  EXPECT_EQ(view["other"], json({{"rdma/hca_shared_devices_a", {"7"}}}));
  const json want = {{{"gpu", "0000:13:00.0"}, {"device", "0000:14:00.2"}, {"path", "PIX"}},
                     {{"gpu", "0000:13:00.0"}, {"device", "0000:24:00.2"}, {"path", "NODE"}},
                     {{"gpu", "0000:23:00.0"}, {"device", "0000:14:00.2"}, {"path", "NODE"}},
                     {{"gpu", "0000:23:00.0"}, {"device", "0000:24:00.2"}, {"path", "PIX"}}};
  EXPECT_EQ(view["paths"], want) << view.dump(1);

  const ExecOutput table = topo({"--pod", "ml/trainer-0"});
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_NE(table.out.find("  GPU0   PIX  NODE\n"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("  GPU1  NODE   PIX\n"), std::string::npos) << table.out;

  const ExecOutput unknown = topo({"--pod", "ml/nobody"});
  EXPECT_EQ(unknown.exit_code, 1);
  EXPECT_NE(unknown.err.find("lists no devices for pod ml/nobody"), std::string::npos)
      << unknown.err;
  EXPECT_EQ(topo({"--pod", "no-slash"}).exit_code, 1);
  const ExecOutput xml = topo({"--pod", "ml/trainer-0", "--format", "nccl-xml"});
  EXPECT_EQ(xml.exit_code, 1);
  EXPECT_NE(xml.err.find("--pod shows a table or --json"), std::string::npos) << xml.err;
}

}  // namespace
}  // namespace hcashare::cni
