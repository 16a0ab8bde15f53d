// hcashare-cni and DRA (issue 27): a pod's DRA devices from pod-resources v1
// `dynamic_resources`, and their translation through the DRA driver's checkpoint into the
// resource -> address form the device choice and the allocation check use.
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "cni/dra_devices.h"
#include "cni/podresources.h"
#include "cni/podresources_devices.h"
#include "common/temp_dir.h"
#include "testing/fake_podresources.h"

namespace hcashare::cni {
namespace {

using fake::FakeClaimDevice;
using fake::FakePodResources;
using Ids = std::vector<std::string>;

constexpr char kDriver[] = "rdma.hcashare.io";
constexpr char kVfs[] = "rdma/hca_vfs";

class DraPodResourcesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    opts_.kubelet_root = tmp_.path();
    opts_.device_plugin_dir = tmp_.path() + "/device-plugins";
    opts_.timeout = std::chrono::milliseconds(5000);
    fake_ = std::make_unique<FakePodResources>(PodResourcesSocketPath(tmp_.path()));
    // One container holds a shared device-plugin resource and two claims: our VF and a GPU
    // of another driver; a second container references our VF's claim again.
    FakeClaimDevice vf{"ml", "job-nic", kDriver, "node-a", "pci-0000-3b-00-2", {"x=y"}};
    FakeClaimDevice gpu{"ml", "job-gpu", "gpu.nvidia.com", "node-a", "gpu-0", {}};
    fake_->AddPod("ml", "trainer", "uid-trainer",
                  {{"main", {{"rdma/hca_a", {"1"}, {}}}, {vf, gpu}}, {"side", {}, {vf}}});
    ASSERT_TRUE(fake_->Start().ok());
  }

  TempDir tmp_{"hcashare-cni-dra-"};
  PodResourcesOptions opts_;
  std::unique_ptr<FakePodResources> fake_;
};

TEST_F(DraPodResourcesTest, GetReportsDraDevicesPerDriver) {
  auto r = LookupPodDevices(opts_, {"ml", "trainer", "uid-trainer"});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->by_resource,
            (DevicesByResource{{"rdma/hca_a", {"1"}},
                               {"dra:rdma.hcashare.io", {"node-a/pci-0000-3b-00-2"}},
                               {"dra:gpu.nvidia.com", {"node-a/gpu-0"}}}));
}

TEST_F(DraPodResourcesTest, ListReportsThemToo) {
  fake_->SetGetMode(FakePodResources::GetMode::kUnimplemented);
  auto r = LookupPodDevices(opts_, {"ml", "trainer", "uid-trainer"});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->source, "v1 List");
  EXPECT_EQ(r->by_resource.at("dra:rdma.hcashare.io"), Ids{"node-a/pci-0000-3b-00-2"});
}

TEST(ResolveDraDevicesTest, OursBecomeAddressesOthersAreDropped) {
  DevicesByResource granted{{kVfs, {"0000:3b:00.4"}},
                            {"dra:rdma.hcashare.io",
                             {"node-a/pci-0000-3b-00-2", "node-a/pci-0000-3b-00-4", "node-a/gone"}},
                            {"dra:gpu.nvidia.com", {"node-a/gpu-0"}}};
  std::map<std::string, DraDeviceInfo> checkpoint{
      {"node-a/pci-0000-3b-00-2", {"0000:3b:00.2", kVfs}},
      {"node-a/pci-0000-3b-00-4", {"0000:3b:00.4", kVfs}}};
  auto unknown = ResolveDraDevices(
      kDriver,
      [&](const std::string& pool, const std::string& device) -> std::optional<DraDeviceInfo> {
        auto it = checkpoint.find(pool + "/" + device);
        if (it == checkpoint.end()) return std::nullopt;
        return it->second;
      },
      &granted);
  EXPECT_EQ(unknown, Ids{"node-a/gone"});
  // The device-plugin ID first, the DRA one appended, a device in both listed once.
  EXPECT_EQ(granted, (DevicesByResource{{kVfs, {"0000:3b:00.4", "0000:3b:00.2"}}}));
}

TEST(ResolveDraDevicesTest, NoResolverLeavesOnlyDevicePluginResources) {
  DevicesByResource granted{{"rdma/hca_a", {"1"}}, {"dra:rdma.hcashare.io", {"p/d"}}};
  auto unknown = ResolveDraDevices(kDriver, nullptr, &granted);
  EXPECT_EQ(unknown, Ids{"p/d"});
  EXPECT_EQ(granted, (DevicesByResource{{"rdma/hca_a", {"1"}}}));
}

TEST(ResolveDraDevicesTest, NoResourceNameCanLookLikeADraKey) {
  // The key's ':' is not allowed in an extended resource name, so a device plugin can never
  // report a resource that ResolveDraDevices would take for a DRA driver's.
  EXPECT_EQ(DraResourceKey(kDriver), "dra:rdma.hcashare.io");
  EXPECT_EQ(DraDeviceId("node-a", "pci-0000-3b-00-2"), "node-a/pci-0000-3b-00-2");
}

}  // namespace
}  // namespace hcashare::cni
