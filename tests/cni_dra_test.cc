// hcashare-cni with a DRA-allocated VF (issue 27), against the real binary: the kubelet's
// pod-resources API names the pod's DRA devices (driver, pool, device) and the DRA driver's
// checkpoint says which PCI address and resource each is. The device is attached whether
// Multus passes its deviceID (the Multus DRA path, from the k8s.cni.cncf.io/deviceID
// attribute) or the network names only its resource; a DRA device of another pod is refused
// as a device-plugin one is.
#include <fstream>
#include <sstream>

#include "json/document.h"
#include "tests/cni_dra_fixture.h"

namespace hcashare::cni {
namespace {

using json = nlohmann::json;

class CniDraTest : public CniDraPodTest {
 protected:
  void SetUp() override {
    CniDraPodTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    // The pod's claim holds our VF pci-0000-5e-00-2; another pod's holds 5e:00.3.
    kubelet_->AddPod("ns", "pod-a", "uid-a",
                     {{"main", {}, {{"ns", "nic", kDriver, "node-a", "pci-0000-5e-00-2", {}}}}});
    PutClaim(Claim("uid-claim-a", "pci-0000-5e-00-2", vf0_));
    PutClaim(Claim("uid-claim-b", "pci-0000-5e-00-3", vf1_));
  }

  static dra::PreparedClaim Claim(const std::string& uid, const std::string& device,
                                  const std::string& address) {
    dra::PreparedClaim c;
    c.uid = uid;
    c.namespace_name = "ns";
    c.name = "nic";
    c.devices.push_back(Device(device, address));
    return c;
  }
};

TEST_F(CniDraTest, MultusDeviceIdOfTheClaimAttaches) {
  CniRun add = Run("ADD", pod_, Conf("1.1.0", vf0_));
  EXPECT_EQ(add.exit_code, 0) << add.raw << add.err;
  // The claim's status learns where its device went, from a network as from the DRA step.
  const std::string status =
      dra::NetworkStatusPath(NetworkStatusDir(), "uid-claim-a", "pci-0000-5e-00-2");
  auto recorded = dra::ReadNetworkStatus(status);
  ASSERT_TRUE(recorded.ok()) << recorded.status().ToString();
  EXPECT_EQ(recorded->interface_name, "net1");
  EXPECT_EQ(recorded->claim_name, "nic");
  EXPECT_EQ(recorded->hardware_address, add.out["interfaces"][0].value("mac", ""));
  EXPECT_EQ(Run("DEL", pod_, Conf("1.1.0", vf0_)).exit_code, 0);
  EXPECT_FALSE(fs::exists(status));
}

TEST_F(CniDraTest, TheResourceAloneFindsTheClaimsDevice) {
  json conf = Conf("1.1.0", vf0_);
  conf.erase("deviceID");
  conf["resourceName"] = kResource;
  CniRun add = Run("ADD", pod_, conf);
  ASSERT_EQ(add.exit_code, 0) << add.raw << add.err;
  EXPECT_NE(add.raw.find(vf0_), std::string::npos) << add.raw;
  EXPECT_EQ(Run("DEL", pod_, conf).exit_code, 0);
}

TEST_F(CniDraTest, AnotherPodsDraDeviceIsRefused) {
  CniRun add = Run("ADD", pod_, Conf("1.1.0", vf1_));
  EXPECT_EQ(add.exit_code, 1) << add.raw;
  EXPECT_EQ(add.out.value("code", 0), kErrInvalidNetConf) << add.raw;
  const std::string text = add.out.value("msg", "") + " | " + add.out.value("details", "");
  EXPECT_NE(text.find("device " + vf1_ + " is not allocated to pod ns/pod-a"), std::string::npos)
      << text;
  EXPECT_NE(text.find(std::string(kResource) + ": " + vf0_), std::string::npos) << text;
}

TEST_F(CniDraTest, AClaimTheCheckpointDoesNotNameAttachesNothing) {
  kubelet_->ClearPods();
  kubelet_->AddPod("ns", "pod-a", "uid-a",
                   {{"main", {}, {{"ns", "nic", kDriver, "node-a", "pci-0000-5e-00-9", {}}}}});
  CniRun add = Run("ADD", pod_, Conf("1.1.0", vf0_));
  EXPECT_EQ(add.exit_code, 1) << add.raw;
  EXPECT_EQ(add.out.value("code", 0), kErrInvalidNetConf) << add.raw;
}

// The shipped Multus DRA NAD (deploy/examples/dra/nad-multus-dra.yaml), as Multus hands
// its config to the plugin. Issue 37: a pod naming its claim with resourceClaimName gets no
// deviceID from Multus (its DRA path reads only status.resourceClaimStatuses, which lists
// claims made from templates), and the example had no resourceName, so ADD failed with
// "deviceID: required when there is no resourceName".
class CniDraShippedNadTest : public CniDraTest {
 protected:
  json ShippedConf() {
    std::ifstream in(std::string(HCASHARE_SOURCE_DIR) + "/deploy/examples/dra/nad-multus-dra.yaml");
    std::stringstream text;
    text << in.rdbuf();
    const jsonin::Document doc = jsonin::ParseYamlText(text.str());
    EXPECT_TRUE(doc.parsed && doc.errors.empty());
    json conf = json::parse(doc.root.at("spec").at("config").get<std::string>());
    // Its host-local leases under the test's directory, in the shipped subnet.
    conf["ipam"]["dataDir"] = IpamDir();
    return conf;
  }
  // The claimed VF's netdev (vf_netdevs_[0]) is the pod's net1, with the NAD's MTU and an
  // address of its subnet, and back in the host after DEL.
  void ExpectAttached(const json& conf) {
    const auto mac_in = [&](const std::string& ns, const std::string& name) -> std::string {
      for (const auto& l : Links(ns)) {
        if (l.name == name) return l.mac + "/" + std::to_string(l.mtu);
      }
      return "";
    };
    const std::string host_mac = mac_in(host_ns_, vf_netdevs_[0]);
    ASSERT_FALSE(host_mac.empty());
    const std::string pod_ns = pod_.substr(pod_.rfind('/') + 1);
    CniRun add = Run("ADD", pod_, conf);
    ASSERT_EQ(add.exit_code, 0) << add.raw << add.err;
    EXPECT_EQ(mac_in(pod_ns, "net1"), host_mac.substr(0, host_mac.find('/')) + "/9000");
    EXPECT_EQ(mac_in(host_ns_, vf_netdevs_[0]), "");
    EXPECT_NE(add.raw.find("192.168.101."), std::string::npos) << add.raw;
    CniRun del = Run("DEL", pod_, conf);
    EXPECT_EQ(del.exit_code, 0) << del.raw << del.err;
    EXPECT_EQ(mac_in(host_ns_, vf_netdevs_[0]).substr(0, 17), host_mac.substr(0, 17));
  }
};

// resourceClaimName: the claim has its own name in pod-resources, Multus adds nothing.
TEST_F(CniDraShippedNadTest, ANamedClaimAttachesWithoutADeviceId) {
  kubelet_->ClearPods();
  kubelet_->AddPod(
      "ns", "pod-a", "uid-a",
      {{"main", {}, {{"ns", "rdma-claim", kDriver, "node-a", "pci-0000-5e-00-2", {}}}}});
  const json conf = ShippedConf();
  ASSERT_FALSE(conf.contains("deviceID"));
  ExpectAttached(conf);
}

// resourceClaimTemplateName: Multus's DRA path adds the device's k8s.cni.cncf.io/deviceID.
TEST_F(CniDraShippedNadTest, AClaimFromATemplateAttachesWithMultussDeviceId) {
  json conf = ShippedConf();
  conf["deviceID"] = vf0_;
  ExpectAttached(conf);
}

}  // namespace
}  // namespace hcashare::cni
