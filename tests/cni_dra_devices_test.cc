// hcashare-cni and DRA (issue 27): a pod's DRA devices from pod-resources v1
// `dynamic_resources`, and their translation through the DRA driver's checkpoint into the
// resource -> address form the device choice and the allocation check use.
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "cni/dra_devices.h"
#include "common/temp_dir.h"
#include "kubelet/podresources.h"
#include "kubelet/podresources_devices.h"
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
    fake_ = std::make_unique<FakePodResources>(kubelet::PodResourcesSocketPath(tmp_.path()));
    // One container holds a shared device-plugin resource and two claims: our VF and a GPU
    // of another driver; a second container references our VF's claim again.
    FakeClaimDevice vf{"ml", "job-nic", kDriver, "node-a", "pci-0000-3b-00-2", {"x=y"}};
    FakeClaimDevice gpu{"ml", "job-gpu", "gpu.nvidia.com", "node-a", "gpu-0", {}};
    fake_->AddPod("ml", "trainer", "uid-trainer",
                  {{"main", {{"rdma/hca_a", {"1"}, {}}}, {vf, gpu}}, {"side", {}, {vf}}});
    ASSERT_TRUE(fake_->Start().ok());
  }

  TempDir tmp_{"hcashare-cni-dra-"};
  kubelet::PodResourcesOptions opts_;
  std::unique_ptr<FakePodResources> fake_;
};

TEST_F(DraPodResourcesTest, GetReportsDraDevicesPerDriver) {
  auto r = kubelet::LookupPodDevices(opts_, {"ml", "trainer", "uid-trainer"});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->by_resource,
            (DevicesByResource{{"rdma/hca_a", {"1"}},
                               {"dra:rdma.hcashare.io", {"node-a/pci-0000-3b-00-2"}},
                               {"dra:gpu.nvidia.com", {"node-a/gpu-0"}}}));
}

TEST_F(DraPodResourcesTest, ListReportsThemToo) {
  fake_->SetGetMode(FakePodResources::GetMode::kUnimplemented);
  auto r = kubelet::LookupPodDevices(opts_, {"ml", "trainer", "uid-trainer"});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->source, "v1 List");
  EXPECT_EQ(r->by_resource.at("dra:rdma.hcashare.io"), Ids{"node-a/pci-0000-3b-00-2"});
}

// What the DRA driver rebuilds its checkpoint from: each claim once (two containers hold
// the VF's), only the driver's devices, with the CDI IDs the kubelet reports.
TEST_F(DraPodResourcesTest, ListKubeletDraClaimsNamesEachClaimOnce) {
  fake_->AddPod("ml", "other", "uid-other", {{"main", {}, {}}});
  auto r = kubelet::ListKubeletDraClaims(opts_, kDriver);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->size(), 1u);
  EXPECT_EQ((*r)[0].namespace_name, "ml");
  EXPECT_EQ((*r)[0].name, "job-nic");
  ASSERT_EQ((*r)[0].devices.size(), 1u);
  EXPECT_EQ((*r)[0].devices[0].driver, kDriver);
  EXPECT_EQ((*r)[0].devices[0].pool, "node-a");
  EXPECT_EQ((*r)[0].devices[0].device, "pci-0000-3b-00-2");
  EXPECT_EQ((*r)[0].devices[0].cdi_device_ids, std::vector<std::string>{"x=y"});
  // Every driver's, with none named.
  auto all = kubelet::ListKubeletDraClaims(opts_, "");
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->size(), 2u);
  // No kubelet: the caller cannot tell what is held.
  fake_->Stop();
  ::unlink(kubelet::PodResourcesSocketPath(tmp_.path()).c_str());
  auto none = kubelet::ListKubeletDraClaims(opts_, kDriver);
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.status().code(), StatusCode::kUnavailable);
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
  EXPECT_EQ(kubelet::DraResourceKey(kDriver), "dra:rdma.hcashare.io");
  EXPECT_EQ(kubelet::DraDeviceId("node-a", "pci-0000-3b-00-2"), "node-a/pci-0000-3b-00-2");
}

}  // namespace
}  // namespace hcashare::cni
