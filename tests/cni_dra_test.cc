// hcashare-cni with a DRA-allocated VF (issue 27), against the real binary: the kubelet's
// pod-resources API names the pod's DRA devices (driver, pool, device) and the DRA driver's
// checkpoint says which PCI address and resource each is. The device is attached whether
// Multus passes its deviceID (the Multus DRA path, from the k8s.cni.cncf.io/deviceID
// attribute) or the network names only its resource; a DRA device of another pod is refused
// as a device-plugin one is.
#include "interop/dra_checkpoint.h"
#include "testing/fake_podresources.h"
#include "tests/cni_binary_fixture.h"

namespace hcashare::cni {
namespace {

using json = nlohmann::json;

constexpr char kDriver[] = "rdma.hcashare.io";
constexpr char kResource[] = "rdma/hca_vfs";

class CniDraTest : public CniPodTest {
 protected:
  void SetUp() override {
    CniPodTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    vf_ = AddVf(2);
    other_ = AddVf(3);
    allocated_.clear();  // nothing through the device plugin
    WriteCheckpoint();
    kubelet_ = std::make_unique<fake::FakePodResources>(tmp_.path() +
                                                        "/kubelet/pod-resources/kubelet.sock");
    ASSERT_TRUE(kubelet_->Start().ok());
    // The pod's claim holds our VF pci-0000-5e-00-2; another pod's holds 5e:00.3.
    kubelet_->AddPod("ns", "pod-a", "uid-a",
                     {{"main", {}, {{"ns", "nic", kDriver, "node-a", "pci-0000-5e-00-2", {}}}}});
    dra::Checkpoint cp(dra::CheckpointPath(tmp_.path() + "/kubelet", kDriver));
    ASSERT_TRUE(cp.Put(Claim("uid-claim-a", "pci-0000-5e-00-2", vf_)).ok());
    ASSERT_TRUE(cp.Put(Claim("uid-claim-b", "pci-0000-5e-00-3", other_)).ok());
  }

  static dra::PreparedClaim Claim(const std::string& uid, const std::string& device,
                                  const std::string& address) {
    dra::PreparedClaim c;
    c.uid = uid;
    c.namespace_name = "ns";
    c.name = "nic";
    dra::PreparedDevice d;
    d.request_names = {"nic"};
    d.pool = "node-a";
    d.device = device;
    d.pci_address = address;
    d.resource = kResource;
    c.devices.push_back(d);
    return c;
  }

  std::string vf_, other_;
  std::unique_ptr<fake::FakePodResources> kubelet_;
};

TEST_F(CniDraTest, MultusDeviceIdOfTheClaimAttaches) {
  CniRun add = Run("ADD", pod_, Conf("1.1.0", vf_));
  EXPECT_EQ(add.exit_code, 0) << add.raw << add.err;
  EXPECT_EQ(Run("DEL", pod_, Conf("1.1.0", vf_)).exit_code, 0);
}

TEST_F(CniDraTest, TheResourceAloneFindsTheClaimsDevice) {
  json conf = Conf("1.1.0", vf_);
  conf.erase("deviceID");
  conf["resourceName"] = kResource;
  CniRun add = Run("ADD", pod_, conf);
  ASSERT_EQ(add.exit_code, 0) << add.raw << add.err;
  EXPECT_NE(add.raw.find(vf_), std::string::npos) << add.raw;
  EXPECT_EQ(Run("DEL", pod_, conf).exit_code, 0);
}

TEST_F(CniDraTest, AnotherPodsDraDeviceIsRefused) {
  CniRun add = Run("ADD", pod_, Conf("1.1.0", other_));
  EXPECT_EQ(add.exit_code, 1) << add.raw;
  EXPECT_EQ(add.out.value("code", 0), kErrInvalidNetConf) << add.raw;
  const std::string text = add.out.value("msg", "") + " | " + add.out.value("details", "");
  EXPECT_NE(text.find("device " + other_ + " is not allocated to pod ns/pod-a"), std::string::npos)
      << text;
  EXPECT_NE(text.find(std::string(kResource) + ": " + vf_), std::string::npos) << text;
}

TEST_F(CniDraTest, AClaimTheCheckpointDoesNotNameAttachesNothing) {
  kubelet_->ClearPods();
  kubelet_->AddPod("ns", "pod-a", "uid-a",
                   {{"main", {}, {{"ns", "nic", kDriver, "node-a", "pci-0000-5e-00-9", {}}}}});
  CniRun add = Run("ADD", pod_, Conf("1.1.0", vf_));
  EXPECT_EQ(add.exit_code, 1) << add.raw;
  EXPECT_EQ(add.out.value("code", 0), kErrInvalidNetConf) << add.raw;
}

}  // namespace
}  // namespace hcashare::cni
