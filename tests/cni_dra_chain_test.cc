// hcashare-cni's DRA step ("mode": "dra", cni/dra_chain.h), the real binary chained after a
// default network: a pod whose claims hold VFs gets their netdevs (named and sized by the
// claim's configuration, else by their host names) and, in exclusive mode, their RDMA
// devices, with no Multus network at all; DEL restores everything the oracle sees. A pod
// with both the step and a Multus network for the same device gets it once, whichever runs
// first. The kubelet is the fake pod-resources server; the DRA driver's checkpoint is a file.
#include <gmock/gmock.h>

#include "tests/cni_dra_fixture.h"
#include "tests/cni_oracle.h"

namespace hcashare::cni {
namespace {

using json = nlohmann::json;
using ::testing::HasSubstr;

class CniDraChainTest : public CniDraPodTest {
 protected:
  void SetUp() override {
    CniDraPodTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    // The pod's claim "rails" holds both VFs; its container references it.
    AddRailsPod();
  }

  // The driver's checkpoint with claim "rails" of namespace `ns` preparing the two VFs,
  // the first named `name0` with MTU `mtu0` in the pod ("" and 0: the defaults).
  void Prepare(const std::string& name0 = "", int mtu0 = 0, const std::string& ns = "ns",
               const std::vector<std::string>& addresses0 = {}) {
    dra::PreparedClaim c;
    c.uid = "uid-claim";
    c.namespace_name = ns;
    c.name = "rails";
    c.devices = {Device("pci-0000-5e-00-2", vf0_, "rails"),
                 Device("pci-0000-5e-00-3", vf1_, "rails")};
    c.devices[0].interface_name = name0;
    c.devices[0].mtu = mtu0;
    c.devices[0].addresses = addresses0;
    PutClaim(c);
  }

  // The step's configuration in the default network's list, after a plugin that made eth0.
  json Step(const std::string& version = "1.1.0") {
    return {{"cniVersion", version},
            {"name", "cluster"},
            {"type", "hcashare-cni"},
            {"mode", "dra"},
            {"prevResult",
             {{"cniVersion", version},
              {"interfaces", {{{"name", "eth0"}, {"sandbox", pod_}}}},
              {"ips", {{{"address", "10.1.0.5/24"}, {"interface", 0}}}}}}};
  }

  // Name -> "mac/mtu" of the links of namespace `ns`.
  std::map<std::string, std::string> LinksOf(const std::string& ns) {
    std::map<std::string, std::string> out;
    for (const auto& l : Links(ns)) out[l.name] = l.mac + "/" + std::to_string(l.mtu);
    return out;
  }

  testing::OracleScope Scope() {
    return {{{"host", host_ns_}, {"pod", pod_name_}},
            {{"state", StateDir()}, {"dra-network", NetworkStatusDir()}},
            {}};
  }
};

TEST_F(CniDraChainTest, AClaimAloneGivesThePodItsVfsAndDelRestoresEverything) {
  Prepare("rdma0", 9000);
  const auto host_before = LinksOf(host_ns_);
  const testing::Snapshot before = testing::TakeSnapshot(Scope());

  CniRun add = Run("ADD", pod_, Step(), "eth0");
  ASSERT_EQ(add.exit_code, 0) << add.raw << add.err;
  // prevResult kept, our interfaces appended, each in the pod's sandbox.
  const json& ifaces = add.out["interfaces"];
  ASSERT_EQ(ifaces.size(), 3u) << add.raw;
  EXPECT_EQ(ifaces[0]["name"], "eth0");
  EXPECT_EQ(ifaces[1]["name"], "rdma0");
  EXPECT_EQ(ifaces[1]["pciID"], vf0_);
  EXPECT_EQ(ifaces[2]["name"], vf_netdevs_[1]);  // no name configured: the host's
  EXPECT_EQ(ifaces[2]["sandbox"], pod_);
  EXPECT_EQ(add.out["ips"][0]["address"], "10.1.0.5/24");
  EXPECT_EQ(add.out["ips"][0]["interface"], 0);

  const auto pod = LinksOf(pod_name_);
  const std::string mac0 = host_before.at(vf_netdevs_[0]).substr(0, 17);
  EXPECT_EQ(pod.count("rdma0"), 1u);
  EXPECT_EQ(pod.at("rdma0"), mac0 + "/9000");
  EXPECT_EQ(pod.count(vf_netdevs_[1]), 1u);
  EXPECT_EQ(LinksOf(host_ns_).count(vf_netdevs_[0]), 0u);
  EXPECT_EQ(Run("CHECK", pod_, Step(), "eth0").exit_code, 0);
  // Each device's network data, for the driver to write into the claim's status.
  auto status = dra::ReadNetworkStatus(
      dra::NetworkStatusPath(NetworkStatusDir(), "uid-claim", "pci-0000-5e-00-2"));
  ASSERT_TRUE(status.ok()) << status.status().ToString();
  EXPECT_EQ(status->claim_namespace, "ns");
  EXPECT_EQ(status->claim_name, "rails");
  EXPECT_EQ(status->pool, "node-a");
  EXPECT_EQ(status->interface_name, "rdma0");
  EXPECT_EQ(status->hardware_address, mac0);
  EXPECT_TRUE(status->ips.empty());
  EXPECT_TRUE(dra::ReadNetworkStatus(
                  dra::NetworkStatusPath(NetworkStatusDir(), "uid-claim", "pci-0000-5e-00-3"))
                  .ok());

  CniRun del = Run("DEL", pod_, Step(), "eth0");
  ASSERT_EQ(del.exit_code, 0) << del.raw << del.err;
  EXPECT_EQ(testing::DiffSnapshots(before, testing::TakeSnapshot(Scope())), "");
  // A second DEL (the runtime repeats them) finds nothing to do.
  EXPECT_EQ(Run("DEL", pod_, Step(), "eth0").exit_code, 0);
}

// Addresses: the claim's own (the reference `static` IPAM plugin), else the step's IPAM.
TEST_F(CniDraChainTest, TheClaimsAddressesOrTheStepsIpamAddressTheDevices) {
  Prepare("rdma0", 0, "ns", {"10.56.0.5/24"});
  json step = Step();
  step["ipam"] = HostLocal("10.57.0.0/24");
  const testing::Snapshot before = testing::TakeSnapshot(Scope());
  CniRun add = Run("ADD", pod_, step, "eth0");
  ASSERT_EQ(add.exit_code, 0) << add.raw << add.err;
  // eth0's, then rdma0's (index 1), then the second device's from host-local (index 2).
  ASSERT_EQ(add.out["ips"].size(), 3u) << add.raw;
  EXPECT_EQ(add.out["ips"][1]["address"], "10.56.0.5/24");
  EXPECT_EQ(add.out["ips"][1]["interface"], 1);
  EXPECT_THAT(add.out["ips"][2]["address"].get<std::string>(), ::testing::StartsWith("10.57.0."));
  EXPECT_EQ(add.out["ips"][2]["interface"], 2);
  EXPECT_TRUE(Sh("ip -n " + pod_name_ + " addr show rdma0 | grep -q 10.56.0.5/24"));
  EXPECT_TRUE(Sh("ip -n " + pod_name_ + " addr show " + vf_netdevs_[1] + " | grep -q 10.57.0."));
  auto status = dra::ReadNetworkStatus(
      dra::NetworkStatusPath(NetworkStatusDir(), "uid-claim", "pci-0000-5e-00-2"));
  ASSERT_TRUE(status.ok());
  EXPECT_EQ(status->ips, std::vector<std::string>{"10.56.0.5/24"});
  EXPECT_EQ(IpamLeases(), 1u);
  ASSERT_EQ(Run("DEL", pod_, step, "eth0").exit_code, 0);
  EXPECT_EQ(IpamLeases(), 0u);
  EXPECT_EQ(testing::DiffSnapshots(before, testing::TakeSnapshot(Scope())), "");
}

TEST_F(CniDraChainTest, APodWithoutClaimsPassesThroughWithoutAskingTheKubelet) {
  Prepare("", 0, "other-namespace");
  kubelet_->ResetCalls();
  CniRun add = Run("ADD", pod_, Step("1.0.0"), "eth0");
  ASSERT_EQ(add.exit_code, 0) << add.raw << add.err;
  EXPECT_EQ(add.out["interfaces"].size(), 1u) << add.raw;
  EXPECT_EQ(add.out["cniVersion"], "1.0.0");
  EXPECT_EQ(kubelet_->Calls(fake::FakePodResources::Method::kV1Get), 0);
  EXPECT_EQ(StateFiles(), 0u);
  // Nothing prepared on the node at all: the same.
  fs::remove(dra::CheckpointPath(tmp_.path() + "/kubelet", kDriver));
  EXPECT_EQ(Run("ADD", pod_, Step(), "eth0").exit_code, 0);
  EXPECT_EQ(Run("DEL", pod_, Step(), "eth0").exit_code, 0);
}

// Multus runs the default network first: its network for the same device then takes the
// device over, so the pod has it once, as the network's net1.
TEST_F(CniDraChainTest, AMultusNetworkAfterTheStepTakesTheDeviceOver) {
  Prepare("rdma0");
  const testing::Snapshot before = testing::TakeSnapshot(Scope());
  ASSERT_EQ(Run("ADD", pod_, Step(), "eth0").exit_code, 0);
  json nad = Conf("1.1.0", vf0_);
  CniRun net = Run("ADD", pod_, nad, "net1");
  ASSERT_EQ(net.exit_code, 0) << net.raw << net.err;
  auto pod = LinksOf(pod_name_);
  EXPECT_EQ(pod.count("net1"), 1u);
  EXPECT_EQ(pod.count("rdma0"), 0u);
  EXPECT_EQ(pod.count(vf_netdevs_[1]), 1u);  // the other VF stays the step's
  // Multus deletes its networks first, then the default one.
  ASSERT_EQ(Run("DEL", pod_, nad, "net1").exit_code, 0);
  ASSERT_EQ(Run("DEL", pod_, Step(), "eth0").exit_code, 0);
  EXPECT_EQ(testing::DiffSnapshots(before, testing::TakeSnapshot(Scope())), "");
}

// A network that found its device by resource (no deviceID) takes the step's over too.
TEST_F(CniDraChainTest, AResourceNetworkAfterTheStepTakesTheDeviceOver) {
  Prepare();
  ASSERT_EQ(Run("ADD", pod_, Step(), "eth0").exit_code, 0);
  json nad = Conf("1.1.0", vf0_);
  nad.erase("deviceID");
  nad["resourceName"] = kResource;
  CniRun net = Run("ADD", pod_, nad, "net1");
  ASSERT_EQ(net.exit_code, 0) << net.raw << net.err;
  EXPECT_EQ(LinksOf(pod_name_).count("net1"), 1u);
  EXPECT_EQ(Run("DEL", pod_, nad, "net1").exit_code, 0);
  EXPECT_EQ(Run("DEL", pod_, Step(), "eth0").exit_code, 0);
  EXPECT_EQ(StateFiles(), 0u);
}

// When the network ran first (a runtime that chains the step later), the step leaves the
// device to it.
TEST_F(CniDraChainTest, TheStepLeavesADeviceThePodAlreadyHas) {
  Prepare();
  ASSERT_EQ(Run("ADD", pod_, Conf("1.1.0", vf0_), "net1").exit_code, 0);
  CniRun add = Run("ADD", pod_, Step(), "eth0");
  ASSERT_EQ(add.exit_code, 0) << add.raw << add.err;
  ASSERT_EQ(add.out["interfaces"].size(), 2u) << add.raw;
  EXPECT_EQ(add.out["interfaces"][1]["pciID"], vf1_);
  auto pod = LinksOf(pod_name_);
  EXPECT_EQ(pod.count("net1"), 1u);
  EXPECT_EQ(pod.count(vf_netdevs_[0]), 0u);
  EXPECT_EQ(Run("DEL", pod_, Step(), "eth0").exit_code, 0);
  EXPECT_EQ(LinksOf(pod_name_).count("net1"), 1u);  // the network's, not the step's
  EXPECT_EQ(Run("DEL", pod_, Conf("1.1.0", vf0_), "net1").exit_code, 0);
}

// The second device cannot enter (its name is taken in the pod): the first goes back, and
// the error says why.
TEST_F(CniDraChainTest, AFailureOnTheSecondDeviceUndoesTheFirst) {
  Prepare("rdma0");
  GivePodInterface(pod_name_, vf_netdevs_[1], "10.9.0.1/24");
  const testing::Snapshot before = testing::TakeSnapshot(Scope());
  CniRun add = Run("ADD", pod_, Step(), "eth0");
  ASSERT_EQ(add.exit_code, 1) << add.raw;
  EXPECT_THAT(add.raw, HasSubstr(vf_netdevs_[1]));
  EXPECT_EQ(testing::DiffSnapshots(before, testing::TakeSnapshot(Scope())), "");
}

// A Soft-RoCE device is the driver's device ID itself (no function): the step leaves it,
// and its netdev, in the host (found on the real kernel: ADD failed, "auxiliary device rxe0
// not found").
TEST_F(CniDraChainTest, ASoftRoceDeviceIsLeftInTheHost) {
  fake::SimVirtualRdma rxe;
  rxe.name = "rxe7";
  rxe.netdev = vf_netdevs_[0];
  rxe.netdev_owner = vf0_;
  ASSERT_TRUE(node_->AddVirtualRdma(rxe).ok());
  dra::PreparedClaim c;
  c.uid = "uid-rxe";
  c.namespace_name = "ns";
  c.name = "soft";
  c.devices.push_back(Device("rdma-rxe7", "rxe7"));
  PutClaim(c);
  kubelet_->ClearPods();
  kubelet_->AddPod("ns", "pod-a", "uid-a",
                   {{"main", {}, {{"ns", "soft", kDriver, "node-a", "rdma-rxe7", {}}}}});
  const testing::Snapshot before = testing::TakeSnapshot(Scope());
  CniRun add = Run("ADD", pod_, Step(), "eth0");
  ASSERT_EQ(add.exit_code, 0) << add.raw << add.err;
  EXPECT_EQ(add.out["interfaces"].size(), 1u) << add.raw;
  EXPECT_EQ(testing::DiffSnapshots(before, testing::TakeSnapshot(Scope())), "");
}

// CNI GC knows the step's attachments by the invocation's eth0.
TEST_F(CniDraChainTest, GcKeepsTheStepsAttachmentsWhileTheRuntimeKnowsThem) {
  Prepare("rdma0");
  ASSERT_EQ(Run("ADD", pod_, Step(), "eth0").exit_code, 0);
  json gc = {{"cniVersion", "1.1.0"},
             {"name", "cluster"},
             {"type", "hcashare-cni"},
             {"mode", "dra"},
             {"cni.dev/valid-attachments", {{{"containerID", "ctr1"}, {"ifname", "eth0"}}}}};
  ASSERT_EQ(Run("GC", "", gc, "").exit_code, 0);
  EXPECT_EQ(LinksOf(pod_name_).count("rdma0"), 1u);
  gc["cni.dev/valid-attachments"] = json::array();
  CniRun released = Run("GC", "", gc, "");
  ASSERT_EQ(released.exit_code, 0) << released.raw << released.err;
  EXPECT_EQ(LinksOf(pod_name_).count("rdma0"), 0u);
  EXPECT_EQ(StateFiles(), 0u);
}

TEST_F(CniDraChainTest, CheckSeesADeviceThatLeftThePod) {
  Prepare("rdma0");
  ASSERT_EQ(Run("ADD", pod_, Step(), "eth0").exit_code, 0);
  ASSERT_TRUE(Sh("ip -n " + pod_name_ + " link set rdma0 name moved0"));
  CniRun check = Run("CHECK", pod_, Step(), "eth0");
  EXPECT_EQ(check.exit_code, 1);
  EXPECT_EQ(check.out.value("code", 0), kErrHostSetupFailed) << check.raw;
  ASSERT_TRUE(Sh("ip -n " + pod_name_ + " link set moved0 name rdma0"));
  EXPECT_EQ(Run("DEL", pod_, Step(), "eth0").exit_code, 0);
}

// The runtime's CNI_ARGS MAC (CRI-O's, for the pod's eth0) is not the claim's devices'.
TEST_F(CniDraChainTest, TheRuntimesMacForEth0IsNotGivenToTheDevices) {
  Prepare("rdma0");
  const std::string mac0 = LinksOf(host_ns_).at(vf_netdevs_[0]).substr(0, 17);
  CniRun add = Run("ADD", pod_, Step(), "eth0", "ctr1", "",
                   {"CNI_ARGS=IgnoreUnknown=1;K8S_POD_NAMESPACE=ns;K8S_POD_NAME=pod-a;"
                    "K8S_POD_UID=uid-a;MAC=02:11:22:33:44:55"});
  ASSERT_EQ(add.exit_code, 0) << add.raw << add.err;
  EXPECT_EQ(LinksOf(pod_name_).at("rdma0").substr(0, 17), mac0);
  EXPECT_EQ(Run("CHECK", pod_, Step(), "eth0", "ctr1", "",
                {"CNI_ARGS=IgnoreUnknown=1;K8S_POD_NAMESPACE=ns;K8S_POD_NAME=pod-a;"
                 "K8S_POD_UID=uid-a;MAC=02:11:22:33:44:55"})
                .exit_code,
            0);
  EXPECT_EQ(Run("DEL", pod_, Step(), "eth0").exit_code, 0);
}

// The default network's list edited after ADD into one that no longer validates: DEL of
// eth0 still returns every device the step attached, each with the configuration ADD
// recorded for it (the pod's teardown would otherwise fail for good).
TEST_F(CniDraChainTest, DelWithAnEditedStepThatNoLongerValidatesReturnsTheDevices) {
  Prepare("rdma0", 9000);
  const testing::Snapshot before = testing::TakeSnapshot(Scope());
  ASSERT_EQ(Run("ADD", pod_, Step(), "eth0").exit_code, 0);
  json edited = Step();
  edited["vlan"] = 5;  // refused in this mode
  CniRun del = Run("DEL", pod_, edited, "eth0");
  ASSERT_EQ(del.exit_code, 0) << del.raw << del.err;
  EXPECT_EQ(testing::DiffSnapshots(before, testing::TakeSnapshot(Scope())), "");
}

TEST_F(CniDraChainTest, DeviceKeysAreRefusedInThisMode) {
  json step = Step();
  step["deviceID"] = vf0_;
  step["vlan"] = 5;
  step["ipam"] = HostLocal();  // allowed: the devices' IPAM
  CniRun add = Run("ADD", pod_, step, "eth0");
  EXPECT_EQ(add.exit_code, 1);
  EXPECT_EQ(add.out.value("code", 0), kErrInvalidNetConf) << add.raw;
  EXPECT_THAT(add.out.value("details", ""), HasSubstr("deviceID: not used with \"mode\": \"dra\""));
  EXPECT_THAT(add.out.value("details", ""), HasSubstr("vlan: not used"));
  EXPECT_EQ(StateFiles(), 0u);
}

}  // namespace
}  // namespace hcashare::cni
